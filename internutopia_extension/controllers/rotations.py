"""Rotations as arrays, batched: wxyz quaternions and rotation matrices both ways, rotations about
an axis, and the rotation vector between two orientations (what the kinematics, the IK's error,
the end-effector controllers and the mocap-driven parts read and write).
"""

from __future__ import annotations

import numpy as np

__all__ = ['axis_angle_mat', 'mat_to_quat', 'quat_to_mat', 'rotation_error']


def quat_to_mat(quat: np.ndarray) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` of wxyz quaternions ``(..., 4)`` (normalized first).

    >>> quat_to_mat(np.array([0.0, 1.0, 0.0, 0.0])).tolist()
    [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]]
    """
    quat = np.asarray(quat, dtype=float)
    quat = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
    w, x, y, z = quat[..., 0], quat[..., 1], quat[..., 2], quat[..., 3]
    out = np.empty(quat.shape[:-1] + (3, 3))
    out[..., 0, 0] = 1 - 2 * (y * y + z * z)
    out[..., 0, 1] = 2 * (x * y - w * z)
    out[..., 0, 2] = 2 * (x * z + w * y)
    out[..., 1, 0] = 2 * (x * y + w * z)
    out[..., 1, 1] = 1 - 2 * (x * x + z * z)
    out[..., 1, 2] = 2 * (y * z - w * x)
    out[..., 2, 0] = 2 * (x * z - w * y)
    out[..., 2, 1] = 2 * (y * z + w * x)
    out[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return out


def mat_to_quat(mat: np.ndarray) -> np.ndarray:
    """wxyz quaternions ``(..., 4)`` with ``w >= 0`` of rotation matrices ``(..., 3, 3)``.

    >>> mat_to_quat(np.diag([1.0, -1.0, -1.0])).round(6).tolist()
    [0.0, 1.0, 0.0, 0.0]
    >>> half_turn = quat_to_mat(np.array([0.0, 0.9659258, 0.0, 0.2588190]))  # about a tilted axis
    >>> np.allclose(quat_to_mat(mat_to_quat(half_turn)), half_turn)
    True
    """
    m = np.asarray(mat, dtype=float)
    r00, r01, r02 = m[..., 0, 0], m[..., 0, 1], m[..., 0, 2]
    r10, r11, r12 = m[..., 1, 0], m[..., 1, 1], m[..., 1, 2]
    r20, r21, r22 = m[..., 2, 0], m[..., 2, 1], m[..., 2, 2]
    # Shepperd's method, as the compiled forward kinematics (kinematics_kernel): the largest of the
    # four magnitudes from the diagonal, the other three from sums and differences divided by it.
    # (Signs taken from the antisymmetric part alone are lost near half turns, where it vanishes:
    # a gripper pointing down and tilted is such a rotation.)
    trace = r00 + r11 + r22
    case = np.where(trace > 0.0, 0, np.where((r00 > r11) & (r00 > r22), 1, np.where(r11 > r22, 2, 3)))
    big = np.choose(case, [trace + 1.0, 1.0 + r00 - r11 - r22, 1.0 + r11 - r00 - r22, 1.0 + r22 - r00 - r11])
    f = 2.0 * np.sqrt(np.maximum(big, 1e-300))
    w = np.choose(case, [0.25 * f, (r21 - r12) / f, (r02 - r20) / f, (r10 - r01) / f])
    x = np.choose(case, [(r21 - r12) / f, 0.25 * f, (r01 + r10) / f, (r02 + r20) / f])
    y = np.choose(case, [(r02 - r20) / f, (r01 + r10) / f, 0.25 * f, (r12 + r21) / f])
    z = np.choose(case, [(r10 - r01) / f, (r02 + r20) / f, (r12 + r21) / f, 0.25 * f])
    out = np.stack([w, x, y, z], axis=-1)
    norm = np.linalg.norm(out, axis=-1, keepdims=True) * np.where(out[..., :1] < 0.0, -1.0, 1.0)
    return out / norm


def axis_angle_mat(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """``(k, 3, 3)`` rotations by ``angle`` (k,) about the unit ``axis`` (3,)."""
    c, s = np.cos(angle), np.sin(angle)
    x, y, z = axis
    t = 1.0 - c
    return np.stack([
        np.stack([c + x * x * t, x * y * t - z * s, x * z * t + y * s], axis=-1),
        np.stack([y * x * t + z * s, c + y * y * t, y * z * t - x * s], axis=-1),
        np.stack([z * x * t - y * s, z * y * t + x * s, c + z * z * t], axis=-1),
    ], axis=-2)


def rotation_error(target: np.ndarray, current: np.ndarray) -> np.ndarray:
    """Rotation vectors ``(k, 3)`` turning ``current`` into ``target`` (``(k, 3, 3)`` matrices), world axes."""
    delta = target @ np.swapaxes(current, -1, -2)
    vee = np.stack([delta[:, 2, 1] - delta[:, 1, 2], delta[:, 0, 2] - delta[:, 2, 0], delta[:, 1, 0] - delta[:, 0, 1]], axis=-1)
    cos = np.clip((np.trace(delta, axis1=1, axis2=2) - 1.0) * 0.5, -1.0, 1.0)
    angle = np.arccos(cos)
    sin2 = np.linalg.norm(vee, axis=-1)  # 2 sin(angle)
    out = np.zeros_like(vee)
    small = angle < 1e-7
    regular = ~small & (angle < np.pi - 1e-4)
    out[regular] = vee[regular] * (angle[regular] / sin2[regular])[:, None]
    flipped = ~small & ~regular
    if np.any(flipped):  # near a half turn: the axis from the symmetric part
        sym = (delta[flipped] + np.eye(3)) * 0.5
        column = np.argmax(np.diagonal(sym, axis1=1, axis2=2), axis=-1)
        axis = sym[np.arange(len(column)), :, column]
        axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
        sign = np.where(np.einsum('ij,ij->i', axis, vee[flipped]) < 0, -1.0, 1.0)
        out[flipped] = axis * (angle[flipped] * sign)[:, None]
    return out
