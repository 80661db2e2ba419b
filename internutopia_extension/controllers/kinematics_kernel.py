"""The compiled twins of :mod:`internutopia_extension.controllers.kinematics`: FK and DLS IK, one row at a time.

The same math as the numpy reference there (``forward_kinematics``, ``_solve_ik_numpy``), written
as scalar loops that numba compiles (:mod:`internutopia.core.util.jit`).

- ``ik_kernel``: each row of a batch runs its forward kinematics, Jacobian, two 6x6 Cholesky
  factorizations and its step, with no Python per iteration.
- ``fk_kernel``: the end frame's pose only, as the observations ask for it every step. It takes
  six arguments (numba's per-call cost grows with their number) and walks the chain's folded
  table (``SerialChain.fk_table``: one constant transform per joint, each joint turned about or
  sliding along its own z axis), so a joint costs one 3x3 product and a sine and cosine.

``tests/test_franka.py`` and ``tests/test_kinematics.py`` check that they agree with the numpy
reference. Use them through ``kinematics.fk``, ``kinematics.fk_frames`` and ``kinematics.solve_ik``,
which pass the chain's constants and the scratch arrays.
"""

from __future__ import annotations

import numpy as np

from internutopia.core.util.jit import Kernel

__all__ = ['fk_kernel', 'ik_kernel']


def _ik_rows(body_pos, body_rot, body_joint, joint_type, joint_axis, joint_pos, joint_ref, lower, upper,
             frame_pos, frame_rot, q, target_pos, target_rot, rot_weight, rest, damping, max_step, gain,
             max_iterations, pos_tol, rot_tol, projector_damping, stall_iterations, stall_gain, rotation_metres,
             pos_err, rot_err):  # pragma: no cover - compiled
    """Per row: the DLS iterations, updating ``q`` in place, and the last position and orientation
    errors into ``pos_err``/``rot_err``. A row stops at the tolerances, at ``max_iterations``, or
    stalled: its error (``rotation_metres`` per radian) fell by less than ``stall_gain`` of itself
    over a block of ``stall_iterations`` iterations (0: never; ``IKParams.stall_iterations``)."""
    n = q.shape[1]
    nb = body_pos.shape[0]
    rot = np.empty((3, 3))
    tmp = np.empty((3, 3))
    turn = np.empty((3, 3))
    pos = np.empty(3)
    anchors = np.empty((n, 3))
    axes = np.empty((n, 3))
    jac = np.empty((6, n))
    err = np.empty(6)
    a = np.empty((6, 6))
    chol = np.empty((2, 6, 6))
    rhs = np.empty((6, 2))
    pull = np.empty(n)
    dq = np.empty(n)
    jv = np.empty(6)
    delta = np.empty((3, 3))
    for row in range(q.shape[0]):
        w = rot_weight[row]
        checkpoint = 0.0
        for it in range(max_iterations + 1):
            # forward kinematics
            for i in range(3):
                pos[i] = 0.0
                for c in range(3):
                    rot[i, c] = 1.0 if i == c else 0.0
            for b in range(nb):
                for i in range(3):
                    pos[i] += rot[i, 0] * body_pos[b, 0] + rot[i, 1] * body_pos[b, 1] + rot[i, 2] * body_pos[b, 2]
                for i in range(3):
                    for c in range(3):
                        tmp[i, c] = rot[i, 0] * body_rot[b, 0, c] + rot[i, 1] * body_rot[b, 1, c] + rot[i, 2] * body_rot[b, 2, c]
                rot[:, :] = tmp
                j = body_joint[b]
                if j < 0:
                    continue
                for i in range(3):
                    axes[j, i] = rot[i, 0] * joint_axis[j, 0] + rot[i, 1] * joint_axis[j, 1] + rot[i, 2] * joint_axis[j, 2]
                    anchors[j, i] = pos[i] + rot[i, 0] * joint_pos[j, 0] + rot[i, 1] * joint_pos[j, 1] + rot[i, 2] * joint_pos[j, 2]
                amount = q[row, j] - joint_ref[j]
                if joint_type[j] == 0:
                    x, y, z = joint_axis[j, 0], joint_axis[j, 1], joint_axis[j, 2]
                    norm = np.sqrt(x * x + y * y + z * z)
                    x, y, z = x / norm, y / norm, z / norm
                    c_, s_ = np.cos(amount), np.sin(amount)
                    t_ = 1.0 - c_
                    turn[0, 0], turn[0, 1], turn[0, 2] = c_ + x * x * t_, x * y * t_ - z * s_, x * z * t_ + y * s_
                    turn[1, 0], turn[1, 1], turn[1, 2] = y * x * t_ + z * s_, c_ + y * y * t_, y * z * t_ - x * s_
                    turn[2, 0], turn[2, 1], turn[2, 2] = z * x * t_ - y * s_, z * y * t_ + x * s_, c_ + z * z * t_
                    for i in range(3):
                        for c in range(3):
                            tmp[i, c] = rot[i, 0] * turn[0, c] + rot[i, 1] * turn[1, c] + rot[i, 2] * turn[2, c]
                    rot[:, :] = tmp
                    for i in range(3):
                        pos[i] = anchors[j, i] - (rot[i, 0] * joint_pos[j, 0] + rot[i, 1] * joint_pos[j, 1] + rot[i, 2] * joint_pos[j, 2])
                else:
                    for i in range(3):
                        pos[i] += axes[j, i] * amount
            for i in range(3):
                pos[i] += rot[i, 0] * frame_pos[0] + rot[i, 1] * frame_pos[1] + rot[i, 2] * frame_pos[2]
            for i in range(3):
                for c in range(3):
                    tmp[i, c] = rot[i, 0] * frame_rot[0, c] + rot[i, 1] * frame_rot[1, c] + rot[i, 2] * frame_rot[2, c]
            rot[:, :] = tmp
            # errors
            for i in range(3):
                err[i] = target_pos[row, i] - pos[i]
            for i in range(3):
                for c in range(3):
                    delta[i, c] = (target_rot[row, i, 0] * rot[c, 0] + target_rot[row, i, 1] * rot[c, 1]
                                   + target_rot[row, i, 2] * rot[c, 2])
            vx, vy, vz = delta[2, 1] - delta[1, 2], delta[0, 2] - delta[2, 0], delta[1, 0] - delta[0, 1]
            cos = (delta[0, 0] + delta[1, 1] + delta[2, 2] - 1.0) * 0.5
            cos = min(1.0, max(-1.0, cos))
            angle = np.arccos(cos)
            sin2 = np.sqrt(vx * vx + vy * vy + vz * vz)
            if angle < 1e-7:
                ex, ey, ez = 0.0, 0.0, 0.0
            elif angle < np.pi - 1e-4:
                f = angle / sin2
                ex, ey, ez = vx * f, vy * f, vz * f
            else:
                best = 0
                for i in range(1, 3):
                    if delta[i, i] > delta[best, best]:
                        best = i
                ax, ay, az = (delta[0, best] + (1.0 if best == 0 else 0.0)) * 0.5, \
                    (delta[1, best] + (1.0 if best == 1 else 0.0)) * 0.5, (delta[2, best] + (1.0 if best == 2 else 0.0)) * 0.5
                norm = np.sqrt(ax * ax + ay * ay + az * az)
                sign = -1.0 if ax * vx + ay * vy + az * vz < 0.0 else 1.0
                f = angle * sign / norm
                ex, ey, ez = ax * f, ay * f, az * f
            err[3], err[4], err[5] = ex * w, ey * w, ez * w
            pos_err[row] = np.sqrt(err[0] * err[0] + err[1] * err[1] + err[2] * err[2])
            rot_err[row] = np.sqrt(err[3] * err[3] + err[4] * err[4] + err[5] * err[5])
            if (pos_err[row] <= pos_tol and rot_err[row] <= rot_tol) or it == max_iterations:
                break
            if stall_iterations > 0 and it % stall_iterations == 0:
                combined = pos_err[row] + rot_err[row] * rotation_metres
                if it > 0 and not combined <= (1.0 - stall_gain) * checkpoint:
                    break
                checkpoint = combined
            # Jacobian (rotation rows weighted like the error)
            for j in range(n):
                if joint_type[j] == 0:
                    dx, dy, dz = pos[0] - anchors[j, 0], pos[1] - anchors[j, 1], pos[2] - anchors[j, 2]
                    jac[0, j] = axes[j, 1] * dz - axes[j, 2] * dy
                    jac[1, j] = axes[j, 2] * dx - axes[j, 0] * dz
                    jac[2, j] = axes[j, 0] * dy - axes[j, 1] * dx
                    jac[3, j], jac[4, j], jac[5, j] = axes[j, 0] * w, axes[j, 1] * w, axes[j, 2] * w
                else:
                    jac[0, j], jac[1, j], jac[2, j] = axes[j, 0], axes[j, 1], axes[j, 2]
                    jac[3, j], jac[4, j], jac[5, j] = 0.0, 0.0, 0.0
            # J J^T, factorized twice (Cholesky): with the IK's damping for the step, with a tiny
            # damping for the null-space projector
            for i in range(6):
                for c in range(i + 1):
                    s = 0.0
                    for j in range(n):
                        s += jac[i, j] * jac[c, j]
                    a[i, c] = s
            for col in range(2):
                extra = damping * damping if col == 0 else projector_damping * projector_damping
                for i in range(6):
                    for c in range(i + 1):
                        s = a[i, c] + (extra if i == c else 0.0)
                        for m in range(c):
                            s -= chol[col, i, m] * chol[col, c, m]
                        if i == c:
                            chol[col, i, i] = np.sqrt(s)
                        else:
                            chol[col, i, c] = s / chol[col, c, c]
            # right-hand sides: the error, and J * pull (the posture pull's part in the task space)
            for j in range(n):
                pull[j] = gain * (rest[row, j] - q[row, j])
            for i in range(6):
                s = 0.0
                for j in range(n):
                    s += jac[i, j] * pull[j]
                jv[i] = s
            for col in range(2):
                for i in range(6):
                    s = err[i] if col == 0 else jv[i]
                    for m in range(i):
                        s -= chol[col, i, m] * rhs[m, col]
                    rhs[i, col] = s / chol[col, i, i]
                for i in range(5, -1, -1):
                    s = rhs[i, col]
                    for m in range(i + 1, 6):
                        s -= chol[col, m, i] * rhs[m, col]
                    rhs[i, col] = s / chol[col, i, i]
            biggest = 0.0
            for j in range(n):
                s = pull[j]
                for i in range(6):
                    s += jac[i, j] * (rhs[i, 0] - rhs[i, 1])
                dq[j] = s
                if abs(s) > biggest:
                    biggest = abs(s)
            scale = max_step / biggest if biggest > max_step else 1.0
            for j in range(n):
                value = q[row, j] + dq[j] * scale
                q[row, j] = min(upper[j], max(lower[j], value))


#: The kernel: compiled on first use (then cached on disk), or unavailable without numba.
ik_kernel = Kernel(_ik_rows)


def _fk_rows(table, columns, joints, slots, base, out):  # pragma: no cover - compiled
    """Per row: the end frame's pose in the frame the base sits in, into ``out[row]`` as
    ``[position (3), wxyz (4, w >= 0), rotation (9, row-major)]``.

    The row's joint ``j`` is ``joints[row, columns[j]]``; its base pose is ``base[slots[row]]``
    (``[rotation (9), position (3)]``). ``table`` row ``j`` holds the constant transform before
    joint ``j`` (rotation 9, translation 3) and the joint's type (0 hinge, 1 slide), reference and
    slide scale; its last row the transform from the last joint to the end frame. The pose is
    nine scalars and three, kept in registers (no scratch arrays).
    """
    n = table.shape[0] - 1
    for row in range(joints.shape[0]):
        s = slots[row]
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = (base[s, 0], base[s, 1], base[s, 2], base[s, 3], base[s, 4],
                                                       base[s, 5], base[s, 6], base[s, 7], base[s, 8])
        t0, t1, t2 = base[s, 9], base[s, 10], base[s, 11]
        for j in range(n + 1):
            # (R, t) <- (R, t) o (C, c): t += R c, R = R C
            t0 += r00 * table[j, 9] + r01 * table[j, 10] + r02 * table[j, 11]
            t1 += r10 * table[j, 9] + r11 * table[j, 10] + r12 * table[j, 11]
            t2 += r20 * table[j, 9] + r21 * table[j, 10] + r22 * table[j, 11]
            if table[j, 15] == 1.0:  # C turns about x (an arm's usual link frame): it mixes the last two columns
                co, si = table[j, 4], table[j, 7]
                r01, r02 = r01 * co + r02 * si, r02 * co - r01 * si
                r11, r12 = r11 * co + r12 * si, r12 * co - r11 * si
                r21, r22 = r21 * co + r22 * si, r22 * co - r21 * si
            else:
                c00, c01, c02, c10, c11, c12, c20, c21, c22 = (table[j, 0], table[j, 1], table[j, 2], table[j, 3], table[j, 4],
                                                               table[j, 5], table[j, 6], table[j, 7], table[j, 8])
                r00, r01, r02 = r00 * c00 + r01 * c10 + r02 * c20, r00 * c01 + r01 * c11 + r02 * c21, r00 * c02 + r01 * c12 + r02 * c22
                r10, r11, r12 = r10 * c00 + r11 * c10 + r12 * c20, r10 * c01 + r11 * c11 + r12 * c21, r10 * c02 + r11 * c12 + r12 * c22
                r20, r21, r22 = r20 * c00 + r21 * c10 + r22 * c20, r20 * c01 + r21 * c11 + r22 * c21, r20 * c02 + r21 * c12 + r22 * c22
            if j == n:
                break
            amount = joints[row, columns[j]] - table[j, 13]
            if table[j, 12] == 0.0:  # hinge about z: R <- R Rz(amount), which mixes the first two columns
                co, si = np.cos(amount), np.sin(amount)
                r00, r01 = r00 * co + r01 * si, r01 * co - r00 * si
                r10, r11 = r10 * co + r11 * si, r11 * co - r10 * si
                r20, r21 = r20 * co + r21 * si, r21 * co - r20 * si
            else:  # slide along z: t += R e_z (amount scale)
                d = amount * table[j, 14]
                t0 += r02 * d
                t1 += r12 * d
                t2 += r22 * d
        out[row, 0], out[row, 1], out[row, 2] = t0, t1, t2
        out[row, 7], out[row, 8], out[row, 9] = r00, r01, r02
        out[row, 10], out[row, 11], out[row, 12] = r10, r11, r12
        out[row, 13], out[row, 14], out[row, 15] = r20, r21, r22
        # The quaternion (Shepperd's method: divide by the largest of the four magnitudes), w >= 0.
        trace = r00 + r11 + r22
        if trace > 0.0:
            f = 2.0 * np.sqrt(trace + 1.0)
            w, x, y, z = 0.25 * f, (r21 - r12) / f, (r02 - r20) / f, (r10 - r01) / f
        elif r00 > r11 and r00 > r22:
            f = 2.0 * np.sqrt(1.0 + r00 - r11 - r22)
            w, x, y, z = (r21 - r12) / f, 0.25 * f, (r01 + r10) / f, (r02 + r20) / f
        elif r11 > r22:
            f = 2.0 * np.sqrt(1.0 + r11 - r00 - r22)
            w, x, y, z = (r02 - r20) / f, (r01 + r10) / f, 0.25 * f, (r12 + r21) / f
        else:
            f = 2.0 * np.sqrt(1.0 + r22 - r00 - r11)
            w, x, y, z = (r10 - r01) / f, (r02 + r20) / f, (r12 + r21) / f, 0.25 * f
        norm = np.sqrt(w * w + x * x + y * y + z * z) * (-1.0 if w < 0.0 else 1.0)
        out[row, 3], out[row, 4], out[row, 5], out[row, 6] = w / norm, x / norm, y / norm, z / norm


#: The forward-kinematics kernel (see :func:`_fk_rows`).
fk_kernel = Kernel(_fk_rows)
