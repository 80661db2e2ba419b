"""Vectorized rotation helpers (quaternions are ``wxyz``, as in MuJoCo and InternUtopia)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def quat_to_yaw(quat: np.ndarray) -> np.ndarray:
    """Heading angle about +z of ``(..., 4)`` wxyz quaternions, in radians.

    >>> round(float(quat_to_yaw(np.array([np.cos(0.3), 0.0, 0.0, np.sin(0.3)]))), 6)
    0.6
    """
    # The atan2 of the rotated x axis, with both terms halved: fewer numpy calls on the hot path.
    quat = np.asarray(quat, dtype=float)
    w, x, y, z = quat[..., 0], quat[..., 1], quat[..., 2], quat[..., 3]
    sine = w * z
    sine += x * y
    cosine = y * y
    cosine += z * z
    return np.arctan2(sine, 0.5 - cosine)


def yaw_to_quat(yaw: np.ndarray) -> np.ndarray:
    """wxyz quaternions ``(..., 4)`` of pure rotations by ``yaw`` about +z."""
    half = np.asarray(yaw, dtype=float) * 0.5
    out = np.zeros(half.shape + (4,))
    np.cos(half, out=out[..., 0])
    np.sin(half, out=out[..., 3])
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


def quat_right_matrix(b: np.ndarray) -> np.ndarray:
    """The ``(4, 4)`` matrix ``M`` with ``quat_multiply(a, b) == a @ M.T`` for wxyz quaternions
    ``a`` of any batch shape: multiplying many quaternions by one fixed ``b`` is then a matmul.

    >>> a, b = np.array([[0.5, 0.5, 0.5, 0.5]]), np.array([0.0, 1.0, 0.0, 0.0])
    >>> bool(np.allclose(a @ quat_right_matrix(b).T, quat_multiply(a, b)))
    True
    """
    bw, bx, by, bz = np.asarray(b, dtype=float)
    return np.array([[bw, -bx, -by, -bz],
                     [bx, bw, bz, -by],
                     [by, -bz, bw, bx],
                     [bz, by, -bx, bw]])


def rotate_inverse(quat: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """Rotate ``(..., 3)`` world vectors into the frames of ``(..., 4)`` wxyz quaternions."""
    w = quat[..., :1]
    q = -quat[..., 1:]
    t = 2.0 * np.cross(q, vec)
    return vec + w * t + np.cross(q, t)


def quat_conjugate(quat: np.ndarray) -> np.ndarray:
    """Conjugates of ``(..., 4)`` wxyz quaternions: the inverse rotations of unit ones (MuJoCo's ``mju_negQuat``).

    >>> quat_conjugate(np.array([0.5, 0.5, -0.5, 0.5])).tolist()
    [0.5, -0.5, 0.5, -0.5]
    """
    out = np.array(quat, dtype=float)
    out[..., 1:] *= -1.0
    return out


def rotate(quat: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """Rotate ``(..., 3)`` vectors by ``(..., 4)`` unit wxyz quaternions (MuJoCo's ``mju_rotVecQuat``):
    frame-local vectors to the frames' parent axes.

    >>> quarter = np.array([np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)])  # a quarter turn about z
    >>> rotate(quarter, np.array([1.0, 0.0, 0.0])).round(12).tolist()
    [0.0, 1.0, 0.0]
    >>> bool(np.allclose(rotate_inverse(quarter, rotate(quarter, np.array([0.3, -2.0, 1.0]))), [0.3, -2.0, 1.0]))
    True
    """
    quat, vec = np.asarray(quat, dtype=float), np.asarray(vec, dtype=float)
    w, x, y, z = quat[..., 0], quat[..., 1], quat[..., 2], quat[..., 3]
    a, b, c = vec[..., 0], vec[..., 1], vec[..., 2]
    # MuJoCo's order of operations, so that the results are the same to the last bit.
    t0, t1, t2 = w * a + y * c - z * b, w * b + z * a - x * c, w * c + x * b - y * a
    return np.stack([a + 2 * (y * t2 - z * t1), b + 2 * (z * t0 - x * t2), c + 2 * (x * t1 - y * t0)], axis=-1)


def rotate_one(quat: Sequence[float], vec: Sequence[float]) -> tuple[float, float, float]:
    """:func:`rotate` of one vector by one quaternion, in Python floats: the same arithmetic in the
    same order (so the same numbers to the bit) at a tenth of the cost of numpy's scalars (an
    episode's start pose, one at a time).

    >>> quarter = (float(np.cos(np.pi / 4)), 0.0, 0.0, float(np.sin(np.pi / 4)))
    >>> rotate_one(quarter, (0.3, -2.0, 1.0)) == tuple(rotate(np.array(quarter), np.array([0.3, -2.0, 1.0])).tolist())
    True
    """
    w, x, y, z = (float(v) for v in quat)
    a, b, c = (float(v) for v in vec)
    t0, t1, t2 = w * a + y * c - z * b, w * b + z * a - x * c, w * c + x * b - y * a
    return a + 2 * (y * t2 - z * t1), b + 2 * (z * t0 - x * t2), c + 2 * (x * t1 - y * t0)


# -- InternUtopia's names (``internutopia.core.util.math``), for extensions that import them -------
def quat_rotate_inverse(q: Any, v: Any) -> Any:
    """InternUtopia's ``quat_rotate_inverse``: rotate ``(N, 3)`` vectors ``v`` by the inverses of
    ``(N, 4)`` wxyz quaternions ``q``. Takes numpy arrays or torch tensors (as InternUtopia's, which
    is torch only) and returns the type, dtype and device of ``v``: mixed float32/float64 inputs
    are fine.

    >>> quarter = np.array([[np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)]])
    >>> quat_rotate_inverse(quarter, np.array([[0.0, 1.0, 0.0]])).round(12).tolist()
    [[1.0, 0.0, 0.0]]
    """
    def host(x: Any) -> np.ndarray:  # (a torch tensor, on any device, or anything numpy takes)
        return np.asarray(x.detach().cpu().numpy() if hasattr(x, 'detach') else x, dtype=float)

    out = rotate_inverse(host(q), host(v))
    if hasattr(v, 'new_tensor'):
        return v.new_tensor(out)  # v's dtype and device
    return out.astype(np.asarray(v).dtype, copy=False)


def quaternion_multiply(q1: Any, q2: Any) -> np.ndarray:
    """InternUtopia's ``quaternion_multiply``: the Hamilton product of two wxyz quaternions ``(4,)``."""
    return quat_multiply(np.asarray(q1, dtype=float), np.asarray(q2, dtype=float))


def quaternion_conjugate(q: Any) -> np.ndarray:
    """InternUtopia's ``quaternion_conjugate`` of a wxyz quaternion ``(4,)``."""
    return quat_conjugate(q)


def quaternion_to_gravity_component(quaternion: Any) -> np.ndarray:
    """InternUtopia's ``quaternion_to_gravity_component``: ``q * (0, 0, 0, -1) * q^-1``'s vector
    part, i.e. the unit down vector rotated by ``quaternion`` (wxyz, ``(4,)``).

    >>> quaternion_to_gravity_component(np.array([1.0, 0.0, 0.0, 0.0])).tolist()
    [0.0, 0.0, -1.0]
    """
    return rotate(np.asarray(quaternion, dtype=float), np.array([0.0, 0.0, -1.0]))
