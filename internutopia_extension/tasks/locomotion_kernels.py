"""The locomotion task's per-tick passes as compiled loops, with their numpy twins.

- :func:`pick_goals`: for the robots that steer through goal points, the pelvis pose from the
  state, the goal reached (within tolerance: the index moves on) and the goal now steered for.
- :func:`quiet_steps`: how many of the next steps of a set of slots are quiet (nothing paid,
  due or at its end), which the task then skips.
- :class:`CompiledTick`: a whole control tick of one walking robot group in one call
  (:func:`tick_rows`: which slots are paid, their walk state, the payment, the falls and flags,
  the goal steering, and what else is due), compiling the walk state's, the payment's, the goal
  picking's and the steering's kernels into it; ``LocomotionTask.step`` piece by piece is its
  reference (``tests/test_locomotion_one_pass.py``: the same results, bit for bit).

Each replaced a dozen numpy calls on 64-row arrays that run once per control tick or per physics
step; these do the same arithmetic (the same float64 operations, so the same numbers to the bit:
``tests/test_locomotion_quiet_steps.py``, ``tests/test_goal_steering.py``) in one call.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from internutopia.core.util.jit import Kernel
from internutopia_extension.controllers.steering import STEER_KERNEL
from internutopia_extension.robots.locomotion_rewards_kernel import PAY_KERNEL, pay_rows
from internutopia_extension.robots.walk_state_kernel import STATE_KERNEL, state_rows

#: The steering law's loop (what ``STEER_KERNEL`` compiles; :func:`tick_rows` calls it by this name).
steer_rows = STEER_KERNEL.function

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


#: Bits of :func:`tick_rows`' answer: a paid slot steers through goal points and was not steered
#: in the pass (a command was due: the task gives it first, then steers); a slot's next command is
#: due; a slot's next push is due.
STEERING, COMMAND_DUE, PUSH_DUE = 1, 2, 4


def tick_rows(slots, steps, max_steps, period, end_on_fall, step_dt, fell_before, has_goals, next_change, next_push,
              goal_points, goal_index, goal_count, goal_tolerance, goal_speed, root_qposadr, command_low, command_high,
              walker_command, held_command, qpos, qvel, sensordata, layout, touch_adr, foot_pos_adr, foot_vel_adr, action,
              last_action, followed, phase, clock, leg_phase_offset, height, gravity, lin_vel, ang_vel, leg_q, leg_dq,
              action_out, last_action_out, command, stance, moving, touch, foot_height, foot_speed, foot_lateral, numbers,
              hips, columns, once, scales, table, tracking_error, yaw_rate_error, paid, span, per_second, once_reward, fell,
              steered, position, orientation, goal, velocity, arrived, thresholds, reward, terminated,
              truncated):  # pragma: no cover - compiled
    """``LocomotionTask.step`` of ``slots`` (one walking robot group) on a tick, in one pass, in
    its order and arithmetic (the same bits): which slots are paid (the end of a control period,
    or the episode's last step), their walk state (``state_rows`` into the scratch rows ``height``
    ... ``foot_lateral``), their terms and sums (``pay_rows``), then per slot the reward (at least
    0 per second, times the physics step and the steps paid for, plus the once-per-fall terms on
    the step a fall is found), ``fell_before`` updated, ``terminated`` (fell, where falls end the
    episode) and ``truncated`` (the last step); then, unless a command is due, the goal steering
    of the paid slots with goals (:func:`_goal_rows`, the steering law, the goal speed, the
    command range) into the walker's ``walker_command`` and ``held_command``. Returns the bits of
    :data:`STEERING`, :data:`COMMAND_DUE` and :data:`PUSH_DUE` that hold."""
    count = 0
    flags = 0
    for i in range(slots.shape[0]):
        s = slots[i]
        now = steps[s]
        if now % period[s] == 0 or now >= max_steps[s]:
            paid[count] = s
            span[count] = now - period[s] * ((now - 1) // period[s])
            count += 1
        if now >= next_change[s]:
            flags |= COMMAND_DUE
        if now >= next_push[s]:
            flags |= PUSH_DUE
    if count:
        rows = paid[:count]
        state_rows(qpos, qvel, sensordata, rows, layout, touch_adr, foot_pos_adr, foot_vel_adr, action, last_action, followed,
                   phase, clock, leg_phase_offset, height[:count], gravity[:count], lin_vel[:count], ang_vel[:count],
                   leg_q[:count], leg_dq[:count], action_out[:count], last_action_out[:count], command[:count], stance[:count],
                   moving[:count], touch[:count], foot_height[:count], foot_speed[:count], foot_lateral[:count])
        pay_rows(height[:count], gravity[:count], lin_vel[:count], ang_vel[:count], leg_q[:count], leg_dq[:count],
                 action_out[:count], last_action_out[:count], command[:count], stance[:count], moving[:count], touch[:count],
                 foot_height[:count], foot_speed[:count], foot_lateral[:count], numbers, hips, columns, once, scales,
                 span[:count], rows, table, per_second[:count], once_reward[:count], fell[:count], tracking_error,
                 yaw_rate_error)
    row = 0
    steering = 0
    for i in range(slots.shape[0]):
        s = slots[i]
        value = 0.0
        fallen = False
        if row < count and paid[row] == s:
            # (as numpy: the sums added to zeros, the clip, the scale, then the once terms times 0 or 1)
            summed = 0.0 + per_second[row]
            value = (summed if summed >= 0.0 or summed != summed else 0.0) * step_dt[s] * span[row]
            fallen = fell[row]
            value += (0.0 + once_reward[row]) * (1.0 if fallen and not fell_before[s] else 0.0)
            if has_goals[s]:
                steered[steering] = s
                steering += 1
            row += 1
        reward[i] = value
        fell_before[s] = fell_before[s] or fallen
        terminated[i] = fallen and end_on_fall[s]
        truncated[i] = not terminated[i] and steps[s] >= max_steps[s]
    if steering:
        if flags & COMMAND_DUE:
            flags |= STEERING  # (the task gives the due commands first, then steers)
        else:
            members = steered[:steering]
            _goal_rows(members, qpos, root_qposadr, goal_points, goal_index, goal_count, goal_tolerance, position[:steering],
                       orientation[:steering], goal[:steering])
            for r in range(steering):
                thresholds[r] = goal_tolerance[members[r]]
            steer_rows(position[:steering], orientation[:steering], goal[:steering], 1.0, 1.0, thresholds[:steering],
                       velocity[:steering], arrived[:steering])
            for r in range(steering):
                s = members[r]
                velocity[r, 0] *= goal_speed[s]
                for j in range(3):
                    # (np.minimum(np.maximum(v, low), high): NaN stays NaN)
                    v = velocity[r, j]
                    v = v if v >= command_low[j] or v != v else command_low[j]
                    v = v if v <= command_high[j] or v != v else command_high[j]
                    walker_command[s, j] = v
                    held_command[s, j] = v
    return flags


# (the functions tick_rows calls, each compiled in as its kernel)
_tick_kernel = Kernel(tick_rows, uses={'state_rows': STATE_KERNEL, 'pay_rows': PAY_KERNEL, '_goal_rows': _goal_kernel,
                                       'steer_rows': STEER_KERNEL})


class CompiledTick:
    """:func:`tick_rows` for one locomotion task: its scratch rows (a row per slot) and the
    arrays of the payment (a :class:`~internutopia_extension.robots.locomotion_rewards_kernel.CompiledPayment`).

    Args:
        payment: the task's compiled payment (its term table, scales and tracking errors).
        env_num: the task's slots (rows of the scratch arrays).
    """

    def __init__(self, payment: Any, env_num: int) -> None:
        if not _tick_kernel.available:
            raise RuntimeError('CompiledTick needs numba: check tick_available() first')
        self.payment = payment
        self._kernel: Any = _tick_kernel.compiled_or(None)
        n = env_num
        # the paid slots, their spans, per-second and once sums and falls; the steered slots,
        # their poses, goals, velocities, arrivals and thresholds
        self._scratch = (np.empty(n, dtype=np.intp), np.empty(n, dtype=np.int64), np.empty(n), np.empty(n), np.empty(n, dtype=bool),
                         np.empty(n, dtype=np.intp), np.empty((n, 3)), np.empty((n, 4)), np.empty((n, 3)), np.empty((n, 3)),
                         np.empty(n, dtype=bool), np.empty(n))
        self._states: dict[int, tuple[Any, list[np.ndarray]]] = {}  # by walk state: its scratch rows

    def _state_rows(self, walk_state: Any) -> list[np.ndarray]:
        """Scratch rows of a walk state of ``walk_state``'s walker (one per slot, C-contiguous)."""
        entry = self._states.get(id(walk_state))
        if entry is None or entry[0] is not walk_state:
            rows, legs, feet = len(self._scratch[0]), walk_state.legs, len(walk_state.touch_adr)
            fields = [np.empty(rows), np.empty((rows, 3)), np.empty((rows, 3)), np.empty((rows, 3)), np.empty((rows, legs)),
                      np.empty((rows, legs)), np.empty((rows, legs)), np.empty((rows, legs)), np.empty((rows, 3)),
                      np.empty((rows, feet), dtype=bool), np.empty(rows, dtype=bool), np.empty((rows, feet)),
                      np.empty((rows, feet)), np.empty((rows, feet)), np.empty((rows, feet))]
            entry = self._states[id(walk_state)] = (walk_state, fields)
        return entry[1]

    def __call__(self, task: Any, group: Any, spec: Any, walk_state: Any,
                 slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """The tick of ``slots`` (intp; every one a robot of ``group``, whose walker's compiled
        state is ``walk_state``, paid by reward spec ``spec``) on ``task``'s per-slot arrays: each
        slot's reward, terminated and truncated, and the flags of :func:`tick_rows`."""
        k = len(slots)
        outputs = (np.empty(k), np.empty(k, dtype=bool), np.empty(k, dtype=bool))
        flags = self._kernel(*self._arguments(task, group, spec, walk_state, slots, outputs))
        return outputs[0], outputs[1], outputs[2], int(flags)

    def warm(self, task: Any, group: Any, spec: Any, walk_state: Any) -> None:
        """Compile (or load) the versions a step calls: the slots writable or read-only (the
        runner's); zero slots, the task's and the walker's own arrays."""
        read_only = np.zeros(0, dtype=np.intp)
        read_only.flags.writeable = False
        for slots in (np.zeros(0, dtype=np.intp), read_only):
            outputs = (np.empty(0), np.empty(0, dtype=bool), np.empty(0, dtype=bool))
            _tick_kernel.warm(*self._arguments(task, group, spec, walk_state, slots, outputs, for_types=True))

    def _arguments(self, task: Any, group: Any, spec: Any, walk_state: Any, slots: np.ndarray, outputs: tuple,
                   for_types: bool = False) -> tuple:
        """:func:`tick_rows`' arguments, in its order."""
        payment, walker = self.payment, group.walker
        numbers, hips = payment.spec_arrays(spec)
        return (slots, task.view.steps, task.max_steps, task.period, task.end_on_fall, task.step_dt, task.fell, task.has_goals,
                task.next_change, task.next_push, task.goal_points, task.goal_index, task.goal_count, task.goal_tolerance,
                task.goal_speed, group.root_qposadr, walker.gait.COMMAND_LOW, walker.gait.COMMAND_HIGH, walker.command,
                walker.held_command, *walk_state.inputs(for_types), *self._state_rows(walk_state), numbers, hips,
                payment.columns, payment.once, payment.scales, payment.table, payment.tracking_error, payment.yaw_rate_error,
                *self._scratch, *outputs)


def tick_available() -> bool:
    """Whether :class:`CompiledTick` runs here (numba available and not turned off)."""
    return _tick_kernel.available


def warm() -> None:
    """Compile (or load) both kernels for the arrays the task passes (the runner's read-only active slots too)."""
    ints, floats, read_only = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.intp)
    read_only.flags.writeable = False
    qpos = np.zeros((2, 9))[:, 1:]  # (the world's qpos: rows of the batch's state, not contiguous)
    for slots in (np.zeros(0, dtype=np.intp), read_only):
        _goal_kernel.warm(slots, qpos, ints, np.zeros((0, 1, 3)), ints, ints, floats, np.zeros((0, 3)), np.zeros((0, 4)),
                          np.zeros((0, 3)))
        _quiet_kernel.warm(slots, ints, ints, ints, ints, ints)


__all__ = ['COMMAND_DUE', 'PUSH_DUE', 'STEERING', 'CompiledTick', 'pick_goals', 'quiet_steps', 'tick_available', 'tick_rows', 'warm']
