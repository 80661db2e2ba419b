"""Compiled kernels of the Franka robot's step, each with its numpy reference.

- :func:`servo_targets` / ``_servo_kernel``: the servo targets of the arm's joints and the gripper
  move towards the controllers' goals at most by a given amount per step (joint speed limits,
  finger speed), then into the band their force limits allow at the joints' state.
- :func:`finger_from_tool` / ``_finger_kernel``: a finger's pose from the tool frame's.

``tests/test_franka.py`` and ``tests/test_jit.py`` check that each pair agrees.
"""

from __future__ import annotations

import numpy as np

from internutopia.core.util.jit import Kernel

#: Rows of the servo parameters ``(7, n)``: per column the largest speed, the largest
#: acceleration, ``kv / kp``, ``force limit / kp``, the physics step, whether a target left
#: behind the joint restarts from it when the goal lies beyond the joint (1.0: a gripper, whose
#: target runs ahead of fingers stopped by what they hold; opening must not wait for it to come
#: back), and the *lead*: the seconds of the joint's own motion by which the band may reach ahead
#: (the env step less one physics substep, when the target is held over several substeps).
SPEED, ACCELERATION, KV_OVER_KP, FORCE_OVER_KP, STEP, RESTART, LEAD = range(7)


def servo_targets(goal: np.ndarray, motion: np.ndarray, params: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
    """Move the servo targets towards the goals ``goal`` ``(k, n)``, in place in ``motion``
    ``(k, 2, n)`` (the targets, then their speeds), as a trajectory generator does: the speed
    approaches the largest that can still stop at the goal (``sqrt(2 a |goal - target|)``, at most
    the speed limit), changing by at most the acceleration limit per step. Then the targets go
    into the band the force limits allow at the joints' state ``qpos``/``qvel``: a servo pushes
    ``kp (target - q) - kv qdot``, so targets within ``(kv qdot +- force) / kp`` of ``q`` keep it
    within +-force (MuJoCo's own clamp would also switch off the servo's implicit damping, the
    cause of the chatter it had). When a target is held over many physics substeps the joint
    catches up with it inside the step, so the band also reaches ahead, in the direction the
    joint moves, by its travel over ``LEAD`` seconds (never behind: a braking joint is not pushed
    past its goal). ``params`` ``(7, n)``: see :data:`SPEED` and the rows after it."""
    target, speed = motion[:, 0], motion[:, 1]
    dt = params[STEP]
    behind = (params[RESTART] > 0.0) & ((goal - qpos) * (target - qpos) < 0.0)
    target[:] = np.where(behind, qpos, target)
    speed[:] = np.where(behind, 0.0, speed)
    error = goal - target
    distance = np.abs(error)
    wanted = np.sign(error) * np.minimum(np.minimum(params[SPEED], np.sqrt(2.0 * params[ACCELERATION] * distance)),
                                         distance / dt)
    step_change = params[ACCELERATION] * dt
    new_speed = np.clip(wanted, speed - step_change, speed + step_change)
    centre = qpos + params[KV_OVER_KP] * qvel
    ahead = params[LEAD] * qvel
    value = np.clip(target + new_speed * dt, centre + np.minimum(ahead, 0.0) - params[FORCE_OVER_KP],
                    centre + np.maximum(ahead, 0.0) + params[FORCE_OVER_KP])
    # The speed the target really moved at (the band may have moved it), within the speed limit.
    speed[:] = np.clip((value - target) / dt, -params[SPEED], params[SPEED])
    target[:] = value


def _servo_rows(ctrl, qpos, qvel, slots, columns, goal, motion, params):  # pragma: no cover - compiled
    """Compiled twin of :func:`servo_targets` for the rows ``slots`` of the state arrays ``ctrl``,
    ``qpos``, ``qvel`` (``(env_num, ...)``, in place): ``columns`` ``(3, n)`` holds the servos'
    actuator, qpos and dof addresses. Reads the goals from ``ctrl``, keeps them in ``goal``
    (``(env_num, n)``), moves ``motion`` (``(env_num, 2, n)``) and writes the new targets to ``ctrl``."""
    for i in range(slots.shape[0]):
        s = slots[i]
        for j in range(columns.shape[1]):
            wanted = ctrl[s, columns[0, j]]
            goal[s, j] = wanted
            target, speed, dt = motion[s, 0, j], motion[s, 1, j], params[4, j]
            q = qpos[s, columns[1, j]]
            if params[5, j] > 0.0 and (wanted - q) * (target - q) < 0.0:
                target, speed = q, 0.0
            error = wanted - target
            distance = abs(error)
            limit = min(params[0, j], np.sqrt(2.0 * params[1, j] * distance), distance / dt)
            new_speed = limit if error > 0.0 else (-limit if error < 0.0 else 0.0)
            change = params[1, j] * dt
            if new_speed > speed + change:
                new_speed = speed + change
            elif new_speed < speed - change:
                new_speed = speed - change
            value = target + new_speed * dt
            velocity = qvel[s, columns[2, j]]
            centre = q + params[2, j] * velocity
            ahead = params[6, j] * velocity
            low, high = centre - params[3, j], centre + params[3, j]
            if ahead < 0.0:
                low += ahead
            else:
                high += ahead
            if value < low:
                value = low
            if value > high:
                value = high
            moved = (value - target) / dt
            motion[s, 1, j] = min(params[0, j], max(-params[0, j], moved))
            motion[s, 0, j] = value
            ctrl[s, columns[0, j]] = value


#: The servo pass, compiled (see :func:`_servo_rows`).
_servo_kernel = Kernel(_servo_rows)


def finger_from_tool(tcp_pos: np.ndarray, tcp_quat: np.ndarray, tcp_rot: np.ndarray, slide: np.ndarray,
                     offset: np.ndarray, axis: np.ndarray, quat_matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A finger's env-local pose from the tool frame's (positions ``(k, 3)``, wxyz ``(k, 4)`` with
    ``w >= 0``): ``p = p_tcp + R_tcp (offset + slide axis)`` (offset and axis in the tool frame's
    axes) and ``q = q_tcp * q_offset``, with ``quat_matrix`` the right-multiplication matrix of
    ``q_offset`` (transposed: ``q = q_tcp @ quat_matrix``)."""
    local = offset + axis * slide[:, None]
    position = tcp_pos + np.einsum('kij,kj->ki', tcp_rot, local)
    orientation = tcp_quat @ quat_matrix
    return position, orientation * np.where(orientation[:, :1] < 0, -1.0, 1.0)


def _finger_rows(tcp, joints, finger, out_pos, out_quat):  # pragma: no cover - compiled
    """Compiled twin of :func:`finger_from_tool`, five arguments (numba's per-call cost grows with
    their number): ``tcp`` ``(k, 16)`` the tool frame's poses as ``kinematics.fk_frames`` packs
    them, ``joints`` ``(k, m)``, ``finger`` the constants ``[column, ref, offset (3), axis (3),
    quat_matrix (16, row-major)]`` (the slide is ``joints[:, column] - ref``); ``out_pos``
    ``(k, 3)`` and ``out_quat`` ``(k, 4)`` get the position and the wxyz orientation."""
    column, ref = int(finger[0]), finger[1]
    for row in range(tcp.shape[0]):
        slide = joints[row, column] - ref
        for i in range(3):
            value = tcp[row, i]
            for c in range(3):
                value += tcp[row, 7 + 3 * i + c] * (finger[2 + c] + finger[5 + c] * slide)
            out_pos[row, i] = value
        sign = 1.0
        for j in range(4):
            value = 0.0
            for c in range(4):
                value += tcp[row, 3 + c] * finger[8 + 4 * c + j]
            out_quat[row, j] = value
            if j == 0 and value < 0.0:
                sign = -1.0
        for j in range(4):
            out_quat[row, j] *= sign


#: The finger pose, compiled (see :func:`_finger_rows`).
_finger_kernel = Kernel(_finger_rows)


__all__ = ['finger_from_tool', 'servo_targets']
