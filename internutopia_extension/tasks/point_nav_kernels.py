"""The point-nav task's, reward's and SPL metric's per-step arithmetic as compiled loops.

Each runs every physics step for every slot of a point-nav episode: a handful of numpy calls on
64-element arrays each (about a microsecond apiece, and two to three times that inside a step
loop, whose physics leaves the caches cold). One compiled loop does the same arithmetic in one
call. The numpy versions (:mod:`internutopia_extension.tasks.point_nav`,
:mod:`internutopia_extension.rewards.point_nav_progress`, :mod:`internutopia_extension.metrics.navigation`)
stay the reference and the path without numba; these do the same float64 operations in the same
order (``math.hypot`` is the C library's, as ``np.hypot`` is), so both give the same numbers to
the bit (``tests/test_point_nav_kernels.py``).

Arguments are the callers' own arrays: ``slots`` are slot ids (sorted, distinct), per-slot state
is indexed by slot, per-call outputs by row. The robots' positions are indexed by slot too: the
tracker's read-only view of the state (:meth:`~internutopia.core.view.EntityTracker.position_rows`),
read in place, or, where it has none, the slots' positions put in an ``(env_num, 3)`` array
(:func:`positions_by_slot`).
"""

from __future__ import annotations

import math

import numpy as np

from internutopia.core.util.jit import Kernel
from internutopia.core.view import EntityTracker


def _progress_rows(slots: np.ndarray, prev_distance: np.ndarray, distance: np.ndarray, success: np.ndarray,
                   scale: float, success_bonus: float, step_penalty: float, out: np.ndarray) -> None:
    """``PointNavProgressReward.calc``: ``scale * progress + success_bonus * success - step_penalty``."""
    for i in range(slots.shape[0]):
        slot = slots[i]
        out[i] = scale * (prev_distance[slot] - distance[slot]) + success_bonus * success[slot] - step_penalty


def _travel_rows(slots: np.ndarray, positions: np.ndarray, last_xy: np.ndarray, travelled: np.ndarray) -> None:
    """``SPLMetric.update``: the xy distance each robot moved since the last step, added up."""
    for i in range(slots.shape[0]):
        slot = slots[i]
        travelled[slot] += math.hypot(positions[slot, 0] - last_xy[slot, 0], positions[slot, 1] - last_xy[slot, 1])
        last_xy[slot, 0] = positions[slot, 0]
        last_xy[slot, 1] = positions[slot, 1]


def _slot_step(slot: int, x: float, y: float, travel_x: float, travel_y: float, goal: np.ndarray,
               success_distance: np.ndarray, steps_now: int, max_steps: np.ndarray, distance: np.ndarray,
               prev_distance: np.ndarray, success: np.ndarray, with_progress: bool, scale: float,
               success_bonus: float, step_penalty: float, with_travel: bool, last_xy: np.ndarray,
               travelled: np.ndarray) -> tuple[float, bool, bool]:
    """One physics step of ``slot`` (its robot at ``x, y``, the SPL metric's at ``travel_x,
    travel_y``, its step count ``steps_now``): ``PointNavTask.step``'s distances and flags, then
    (``with_progress``) :func:`_progress_rows`'s reward added to the task's 0 (0 without it), then
    (``with_travel``) :func:`_travel_rows`'s SPL update. Its reward, success and time limit."""
    now = math.hypot(x - goal[slot, 0], y - goal[slot, 1])
    prev_distance[slot] = distance[slot]
    distance[slot] = now
    reached = now < success_distance[slot]
    success[slot] = reached
    cut = (not reached) and steps_now >= max_steps[slot]
    value = 0.0
    if with_progress:
        value = 0.0 + (scale * (prev_distance[slot] - distance[slot]) + success_bonus * success[slot] - step_penalty)
    if with_travel:
        travelled[slot] += math.hypot(travel_x - last_xy[slot, 0], travel_y - last_xy[slot, 1])
        last_xy[slot, 0] = travel_x
        last_xy[slot, 1] = travel_y
    return value, reached, cut


def _combined_rows(slots: np.ndarray, positions: np.ndarray, goal: np.ndarray, success_distance: np.ndarray,
                   steps: np.ndarray, max_steps: np.ndarray, distance: np.ndarray, prev_distance: np.ndarray,
                   success: np.ndarray, terminated: np.ndarray, truncated: np.ndarray, reward: np.ndarray,
                   with_progress: bool, scale: float, success_bonus: float, step_penalty: float,
                   with_travel: bool, travel_positions: np.ndarray, last_xy: np.ndarray, travelled: np.ndarray) -> None:
    """:func:`_slot_step` of each slot after a physics step (success as ``terminated``, the time
    limit as ``truncated``): the task's step alone, or ``PointNavTask.combined_step``'s one pass."""
    for i in range(slots.shape[0]):
        slot = slots[i]
        reward[i], terminated[i], truncated[i] = _slot_step(
            slot, positions[slot, 0], positions[slot, 1], travel_positions[slot, 0], travel_positions[slot, 1], goal,
            success_distance, steps[slot], max_steps, distance, prev_distance, success, with_progress, scale, success_bonus,
            step_penalty, with_travel, last_xy, travelled)


def _recorded_rows(slots: np.ndarray, positions: np.ndarray, goal: np.ndarray, success_distance: np.ndarray,
                   steps_before: np.ndarray, max_steps: np.ndarray, distance: np.ndarray, prev_distance: np.ndarray,
                   success: np.ndarray, terminated: np.ndarray, truncated: np.ndarray, reward: np.ndarray, ran: np.ndarray,
                   with_progress: bool, scale: float, success_bonus: float, step_penalty: float,
                   with_travel: bool, travel_positions: np.ndarray, last_xy: np.ndarray, travelled: np.ndarray) -> None:
    """:func:`_slot_step` over the physics steps of a recorded call (``positions[slot, k]`` after
    step ``k + 1``, the same for ``travel_positions``), each slot's steps in order up to the one
    its episode ends on: per row, the rewards added up (to 0.0, in step order, as the runner's
    action repeat adds them), the flags of its last step and the steps it ran."""
    count = positions.shape[1]
    for i in range(slots.shape[0]):
        slot = slots[i]
        total = 0.0
        reached = False
        cut = False
        ran[i] = count
        for k in range(count):
            value, reached, cut = _slot_step(
                slot, positions[slot, k, 0], positions[slot, k, 1], travel_positions[slot, k, 0], travel_positions[slot, k, 1],
                goal, success_distance, steps_before[slot] + k + 1, max_steps, distance, prev_distance, success, with_progress,
                scale, success_bonus, step_penalty, with_travel, last_xy, travelled)
            total += value
            if reached or cut:
                ran[i] = k + 1
                break
        reward[i] = total
        terminated[i] = reached
        truncated[i] = cut


#: The step of one slot, compiled into both passes below (one arithmetic: the same numbers).
_slot_step_kernel = Kernel(_slot_step)
combined_kernel = Kernel(_combined_rows, uses={'_slot_step': _slot_step_kernel})
recorded_kernel = Kernel(_recorded_rows, uses={'_slot_step': _slot_step_kernel})
progress_kernel = Kernel(_progress_rows)
travel_kernel = Kernel(_travel_rows)


def positions_by_slot(tracker: EntityTracker, slots: np.ndarray, env_num: int) -> np.ndarray:
    """The base positions of ``slots``' followed robots, indexed by slot: the tracker's view of the
    state, or (robots of several groups) an ``(env_num, 3)`` array holding them at their slots."""
    rows = tracker.position_rows()
    if rows is not None:
        return rows
    by_slot = np.zeros((env_num, 3))
    by_slot[slots] = tracker.positions(slots)
    return by_slot


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def warm() -> None:
    """Compile (or load from the cache) the kernels for the arrays a step passes: slot ids
    writable or read-only (the runner shares its active slots read-only), positions as a
    read-only view of the state's columns or an array of their own, the env's read-only step
    counts."""
    rows, per_slot, flags = np.zeros((0, 3)), np.zeros(0), np.zeros(0, dtype=bool)
    steps, max_steps = _read_only(np.zeros(0, dtype=np.int64)), np.zeros(0, dtype=np.int64)
    state_view = _read_only(np.zeros((2, 7))[:, :3])  # (strided, as a free joint's qpos columns; empty arrays count as contiguous)
    for slots in (np.zeros(0, dtype=np.intp), _read_only(np.zeros(0, dtype=np.intp))):
        for positions in (rows, state_view):
            travel_kernel.warm(slots, positions, np.zeros((0, 2)), per_slot)
            combined_kernel.warm(slots, positions, rows, per_slot, steps, max_steps, per_slot, per_slot, flags, flags, flags,
                                 per_slot, True, 0.0, 0.0, 0.0, True, positions, np.zeros((0, 2)), per_slot)
        progress_kernel.warm(slots, per_slot, per_slot, flags, 0.0, 0.0, 0.0, per_slot)
        recorded = np.zeros((2, 1, 9))[:, :, :3]  # (a tracker's view of a rollout's qpos: strided)
        recorded_kernel.warm(slots, recorded, rows, per_slot, steps, max_steps, per_slot, per_slot, flags, flags, flags,
                             per_slot, np.zeros(0, dtype=np.intp), True, 0.0, 0.0, 0.0, True, recorded, np.zeros((0, 2)), per_slot)


__all__ = ['combined_kernel', 'positions_by_slot', 'progress_kernel', 'recorded_kernel', 'travel_kernel', 'warm']
