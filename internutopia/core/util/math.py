"""Vectorized rotation helpers (quaternions are ``wxyz``, as in MuJoCo and InternUtopia)."""

from __future__ import annotations

import numpy as np


def quat_to_yaw(quat: np.ndarray) -> np.ndarray:
    """Heading angle about +z of ``(..., 4)`` wxyz quaternions, in radians."""
    quat = np.asarray(quat, dtype=float)
    w, x, y, z = quat[..., 0], quat[..., 1], quat[..., 2], quat[..., 3]
    return np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def yaw_to_quat(yaw: np.ndarray) -> np.ndarray:
    """wxyz quaternions ``(..., 4)`` of pure rotations by ``yaw`` about +z."""
    yaw = np.asarray(yaw, dtype=float)
    out = np.zeros(yaw.shape + (4,))
    out[..., 0] = np.cos(yaw / 2)
    out[..., 3] = np.sin(yaw / 2)
    return out


def wrap_angle(angle: np.ndarray) -> np.ndarray:
    """Angles wrapped into ``[-pi, pi)``."""
    return (np.asarray(angle) + np.pi) % (2 * np.pi) - np.pi


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of ``(..., 4)`` wxyz quaternions."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def rotate_inverse(quat: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """Rotate ``(..., 3)`` world vectors into the frames of ``(..., 4)`` wxyz quaternions."""
    w = quat[..., :1]
    q = -quat[..., 1:]
    t = 2.0 * np.cross(q, vec)
    return vec + w * t + np.cross(q, t)
