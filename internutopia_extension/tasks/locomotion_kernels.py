"""Two of the locomotion task's per-tick passes as compiled loops, with their numpy twins.

- :func:`pick_goals`: for the robots that steer through goal points, the pelvis pose from the
  state, the goal reached (within tolerance: the index moves on) and the goal now steered for.
- :func:`quiet_steps`: how many of the next steps of a set of slots are quiet (nothing paid,
  due or at its end), which the task then skips.

Each replaced a dozen numpy calls on 64-row arrays that run once per control tick or per physics
step; these do the same arithmetic (the same float64 operations, so the same numbers to the bit:
``tests/test_locomotion_quiet_steps.py``, ``tests/test_goal_steering.py``) in one call.
"""

from __future__ import annotations

import math

import numpy as np

from internutopia.core.util.jit import Kernel

#: qpos columns of a free joint's pose: position xyz, then the wxyz orientation.
_POSE_COLUMNS = np.arange(7)


def _goal_rows(members: np.ndarray, qpos: np.ndarray, root_qposadr: np.ndarray, goal_points: np.ndarray,
               goal_index: np.ndarray, goal_count: np.ndarray, tolerance: np.ndarray, position: np.ndarray,
               orientation: np.ndarray, goal: np.ndarray) -> None:
    last = goal_points.shape[1] - 1
    for i in range(members.shape[0]):
        slot = members[i]
        start = root_qposadr[slot]
        for column in range(3):
            position[i, column] = qpos[slot, start + column]
        for column in range(4):
            orientation[i, column] = qpos[slot, start + 3 + column]
        index, count = goal_index[slot], goal_count[slot]
        current = min(index, last)
        if index < count and math.hypot(goal_points[slot, current, 0] - position[i, 0],
                                        goal_points[slot, current, 1] - position[i, 1]) < tolerance[slot]:
            index += 1
        goal_index[slot] = index
        steered = min(index, count - 1)
        if steered < 0:
            steered += goal_points.shape[1]  # (no goals: numpy's -1, the last column)
        for column in range(3):
            goal[i, column] = goal_points[slot, steered, column]


def _goal_numpy(members: np.ndarray, qpos: np.ndarray, root_qposadr: np.ndarray, goal_points: np.ndarray,
                goal_index: np.ndarray, goal_count: np.ndarray, tolerance: np.ndarray, position: np.ndarray,
                orientation: np.ndarray, goal: np.ndarray) -> None:
    pose = qpos[members[:, None], root_qposadr[members][:, None] + _POSE_COLUMNS]
    position[:], orientation[:] = pose[:, :3], pose[:, 3:]
    last = goal_points.shape[1] - 1
    index, count = goal_index[members], goal_count[members]
    # A goal within tolerance is reached; the command then already heads for the next one.
    current = goal_points[members, np.minimum(index, last)]
    index += (index < count) & (np.hypot(current[:, 0] - position[:, 0], current[:, 1] - position[:, 1]) < tolerance[members])
    goal_index[members] = index
    goal[:] = goal_points[members, np.minimum(index, count - 1)]


def _quiet_rows(slots: np.ndarray, steps: np.ndarray, period: np.ndarray, max_steps: np.ndarray,
                next_change: np.ndarray, next_push: np.ndarray) -> int:
    quiet = np.iinfo(np.int64).max
    for i in range(slots.shape[0]):
        slot, now = slots[i], steps[i]
        due = min(min(now + period[slot] - now % period[slot], max_steps[slot]), min(next_change[slot], next_push[slot]))
        quiet = min(quiet, due - now - 1)
    return quiet


def _quiet_numpy(slots: np.ndarray, steps: np.ndarray, period: np.ndarray, max_steps: np.ndarray,
                 next_change: np.ndarray, next_push: np.ndarray) -> int:
    period = period[slots]
    due = np.minimum(np.minimum(steps + period - steps % period, max_steps[slots]),
                     np.minimum(next_change[slots], next_push[slots]))
    return int((due - steps).min()) - 1


_goal_kernel = Kernel(_goal_rows)
_quiet_kernel = Kernel(_quiet_rows)


def pick_goals(members: np.ndarray, qpos: np.ndarray, root_qposadr: np.ndarray, goal_points: np.ndarray,
               goal_index: np.ndarray, goal_count: np.ndarray,
               tolerance: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pelvis positions ``(k, 3)`` and wxyz orientations ``(k, 4)`` of slots ``members`` (their
    free joint's qpos, from ``root_qposadr``) and the goals ``(k, 3)`` they steer for now: a goal
    within ``tolerance`` (xy) is reached and ``goal_index`` (per slot, written in place) moves on,
    up to ``goal_count``; past the last goal that one is held. (Arrays of their own: the steering
    kernel was warmed for contiguous rows.)"""
    k = len(members)
    position, orientation, goal = np.empty((k, 3)), np.empty((k, 4)), np.empty((k, 3))
    (_goal_kernel.compiled_or(_goal_numpy))(members, qpos, root_qposadr, goal_points, goal_index, goal_count, tolerance,
                                             position, orientation, goal)
    return position, orientation, goal


def quiet_steps(slots: np.ndarray, steps: np.ndarray, period: np.ndarray, max_steps: np.ndarray,
                next_change: np.ndarray, next_push: np.ndarray) -> int:
    """How many of the next steps of ``slots`` (now at ``steps``, by row) pass before any of them
    is paid (the end of its control ``period``), reaches ``max_steps``, or has a command
    (``next_change``) or a push (``next_push``) due; per-slot arrays are indexed by slot."""
    return int((_quiet_kernel.compiled_or(_quiet_numpy))(slots, steps, period, max_steps, next_change, next_push))


def warm() -> None:
    """Compile (or load) both kernels for the arrays the task passes (the runner's read-only active slots too)."""
    ints, floats, read_only = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.intp)
    read_only.flags.writeable = False
    qpos = np.zeros((2, 9))[:, 1:]  # (the world's qpos: rows of the batch's state, not contiguous)
    for slots in (np.zeros(0, dtype=np.intp), read_only):
        _goal_kernel.warm(slots, qpos, ints, np.zeros((0, 1, 3)), ints, ints, floats, np.zeros((0, 3)), np.zeros((0, 4)),
                          np.zeros((0, 3)))
        _quiet_kernel.warm(slots, ints, ints, ints, ints, ints)


__all__ = ['pick_goals', 'quiet_steps', 'warm']
