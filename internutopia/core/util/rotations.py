"""Euler angles and quaternions, for scripts written with Isaac Sim's rotation helpers.

InternUtopia's scripts import ``quat_to_euler_angles`` and ``euler_angles_to_quat`` from
``omni.isaac.core.utils.rotations``; these functions have the same names, arguments and conventions
(quaternions ``wxyz``; angles ``(roll, pitch, yaw)`` about x, y, z; extrinsic rotations by default,
i.e. ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``), so replacing that import is the only change such a
script needs.

>>> q = euler_angles_to_quat((0.0, 0.0, np.pi / 2))
>>> np.round(q, 6).tolist()
[0.707107, 0.0, 0.0, 0.707107]
>>> np.round(quat_to_euler_angles(q), 6).tolist() == [0.0, 0.0, 1.570796]
True
>>> np.round(quat_to_euler_angles([0.0, 0.0, 0.0, 1.0], degrees=True), 6).tolist() == [0.0, 0.0, 180.0]
True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def quat_to_rot_matrix(quat: Sequence[float]) -> np.ndarray:
    """The ``(3, 3)`` rotation matrix of a ``wxyz`` quaternion (normalized first; zero -> identity)."""
    q = np.asarray(quat, dtype=np.float64)
    if q.shape != (4,):
        raise ValueError(f'quat must be 4 numbers (w, x, y, z); got shape {q.shape}')
    norm = float(q @ q)
    if norm < 1e-12:
        return np.eye(3)
    w, x, y, z = q * np.sqrt(2.0 / norm)
    return np.array([
        [1.0 - y * y - z * z, x * y - w * z, x * z + w * y],
        [x * y + w * z, 1.0 - x * x - z * z, y * z - w * x],
        [x * z - w * y, y * z + w * x, 1.0 - x * x - y * y],
    ])


def matrix_to_euler_angles(mat: np.ndarray, degrees: bool = False, extrinsic: bool = True) -> np.ndarray:
    """``(roll, pitch, yaw)`` of a rotation matrix: extrinsic x-y-z (``Rz Ry Rx``) or intrinsic x-y-z (``Rx Ry Rz``)."""
    m = np.asarray(mat, dtype=np.float64)
    if extrinsic:
        pitch = -np.arcsin(np.clip(m[2, 0], -1.0, 1.0))
        if abs(m[2, 0]) < 1.0 - 1e-9:
            roll, yaw = np.arctan2(m[2, 1], m[2, 2]), np.arctan2(m[1, 0], m[0, 0])
        else:  # gimbal lock: only roll - yaw (or roll + yaw) is defined; put it all in yaw
            roll, yaw = 0.0, np.arctan2(-m[0, 1], m[1, 1])
    else:
        pitch = np.arcsin(np.clip(m[0, 2], -1.0, 1.0))
        if abs(m[0, 2]) < 1.0 - 1e-9:
            roll, yaw = np.arctan2(-m[1, 2], m[2, 2]), np.arctan2(-m[0, 1], m[0, 0])
        else:
            roll, yaw = np.arctan2(m[2, 1], m[1, 1]), 0.0
    angles = np.array([roll, pitch, yaw])
    return np.degrees(angles) if degrees else angles


def quat_to_euler_angles(quat: Sequence[float], degrees: bool = False, extrinsic: bool = True) -> np.ndarray:
    """``(roll, pitch, yaw)`` of a ``wxyz`` quaternion (radians unless ``degrees``)."""
    return matrix_to_euler_angles(quat_to_rot_matrix(quat), degrees=degrees, extrinsic=extrinsic)


def euler_angles_to_quat(euler_angles: Sequence[float], degrees: bool = False, extrinsic: bool = True) -> np.ndarray:
    """The ``wxyz`` quaternion of ``(roll, pitch, yaw)``: extrinsic ``Rz Ry Rx`` or intrinsic ``Rx Ry Rz``."""
    angles = np.asarray(euler_angles, dtype=np.float64)
    if angles.shape != (3,):
        raise ValueError(f'euler_angles must be 3 numbers (roll, pitch, yaw); got shape {angles.shape}')
    if degrees:
        angles = np.radians(angles)
    half = angles / 2.0
    cr, cp, cy = np.cos(half)
    sr, sp, sy = np.sin(half)
    if extrinsic:  # Rz(yaw) Ry(pitch) Rx(roll)
        return np.array([cr * cp * cy + sr * sp * sy,
                         sr * cp * cy - cr * sp * sy,
                         cr * sp * cy + sr * cp * sy,
                         cr * cp * sy - sr * sp * cy])
    # Rx(roll) Ry(pitch) Rz(yaw)
    return np.array([cr * cp * cy - sr * sp * sy,
                     sr * cp * cy + cr * sp * sy,
                     cr * sp * cy - sr * cp * sy,
                     cr * cp * sy + sr * sp * cy])


__all__ = ['euler_angles_to_quat', 'matrix_to_euler_angles', 'quat_to_euler_angles', 'quat_to_rot_matrix']
