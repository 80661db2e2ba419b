"""LocomotionTask: a walking robot follows a schedule of velocity commands; rewards for learning it.

Once per control period (the walker's 50 Hz tick: every ``CONTROL_DT / physics_dt`` physics
steps of an episode, four for H1 and Aliengo, and on the episode's last step) the task reads the
walker's state (:meth:`H1Walker.state`), pays the walking reward (the robot class's
``locomotion_rewards`` module: H1's :mod:`~internutopia_extension.robots.h1_locomotion.rewards`,
Aliengo's :mod:`~internutopia_extension.robots.aliengo_locomotion.rewards`; at least 0, scaled by
the time since the last payment, so one tick's reward is the terms' weighted sum times
``CONTROL_DT``; plus, on the step a robot is found fallen, the once-per-fall terms such as
``termination``) and ends the episode of a robot that fell. The steps in between pay 0. This is
legged_gym's convention (rewards and terminations once per policy step, from the state at its
end); before, the terms were computed on every physics step, scaled by that step, so a tick's
reward was the mean over its four steps' states rather than the last one's: the terms and their
scales are the same, only when they are read changed (a fall is noticed up to three physics steps
later, and the tracking errors of the metrics are sampled once per period). Every step it
moves each slot to its next command when that command's start time comes (or, for an episode with
goal points, at the end of each control period, steers it towards its current goal as
``move_to_point`` would). Its
episode record says whether the robot fell, how long it walked, how well it tracked its commands
and how many goals it reached.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from internutopia.core.task.base import BaseTask
from internutopia.core.view import EnvView
from internutopia_extension.controllers.steering import steer_towards_each, warm_steering
from internutopia_extension.robots.h1_locomotion.rewards import ONCE_TERMS, TERMS
from internutopia_extension.robots.locomotion_rewards_kernel import CompiledPayment
from internutopia_extension.tasks import locomotion_kernels
from internutopia_extension.tasks.locomotion_kernels import (
    COMMAND_DUE,
    PUSH_DUE,
    STEERING,
    CompiledTick,
    pick_goals,
    quiet_steps,
    tick_available,
)

#: The reward terms, in the columns of ``scales``: every walking robot's reward module has these
#: names (its own functions and scales), so one table serves a world of mixed robots.
_TERM_NAMES = list(TERMS)
#: Columns of ``scales`` paid once per fall (after the clip) instead of per second.
_ONCE = np.isin(_TERM_NAMES, ONCE_TERMS)
_PER_SECOND = ~_ONCE


#: Robot groups whose start facts (and one-pass decisions) the task keeps; past this many (a run
#: whose structures keep changing), it forgets them all and finds them again as groups start episodes.
_GROUPS_KEPT = 16


class _GroupStart(NamedTuple):
    """What every episode of one robot group starts with, and how its ticks run."""

    scales: np.ndarray  # the reward scales of its robot class, a term-table row
    step_dt: float  # the physics step (s)
    period: int  # physics steps per control tick
    spec: Any  # the reward spec when its ticks run in one pass, else None
#: A step count no episode reaches (no command change, no push due).
_NEVER = int(np.iinfo(np.int64).max)
_MASK64 = (1 << 64) - 1


def _unit_hash(key: int, count: int, draw: int = 0) -> float:
    """A number in [0, 1) fixed by ``key``, ``count`` and ``draw`` and spread evenly over them
    (SplitMix64's finaliser of the three): draw ``draw`` of push ``count`` of the episode whose
    pushes ``key`` seeds, so an episode's pushes depend on that episode alone.

    >>> _unit_hash(3, 12) == _unit_hash(3, 12) != _unit_hash(4, 12) != _unit_hash(3, 12, 1)
    True
    """
    z = (key * 0x9E3779B97F4A7C15 + count * 0xD1B54A32D192ED03 + draw * 0xA24BAED4963EE407 + 0x632BE59BD9B4E019) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return ((z ^ (z >> 31)) >> 11) / float(1 << 53)


def _delay_steps(key: int, count: int, low: float, high: float, step_dt: float) -> int:
    """Physics steps until push ``count`` of the episode whose pushes ``key`` seeds: a delay
    uniform in ``[low, high]`` seconds (draw 0 of the push's hash), rounded to whole steps."""
    return int(round((low + _unit_hash(key, count) * (high - low)) / step_dt))


def locomotion_rewards(robot: Any) -> Any:
    """The reward module of a walking robot (its class's ``locomotion_rewards``), checked against
    the task's term table."""
    rewards = getattr(robot, 'locomotion_rewards', None)
    if rewards is None or list(rewards.TERMS) != _TERM_NAMES or tuple(rewards.ONCE_TERMS) != tuple(ONCE_TERMS):
        raise ValueError(f'{type(robot).__name__} has no locomotion_rewards module with the terms {_TERM_NAMES}')
    return rewards


@BaseTask.register('LocomotionTask')
class LocomotionTask(BaseTask):
    """All slots running ``LocomotionTaskCfg`` episodes; see the module docstring.

    Per-slot arrays: ``fell``, ``tracking_error`` (sum of the planar velocity error, m/s, per
    step, sampled once per control period and counted for each of its steps), ``yaw_rate_error``
    (likewise, rad/s), ``reward_terms[name]`` (the last paid period's terms), ``period``.
    """

    #: A control tick's step of slots that are one walking robot group (the usual world) in one
    #: compiled pass (:func:`~internutopia_extension.tasks.locomotion_kernels.tick_rows`: the
    #: walker's state, the payment, falls, goal steering, what is due), when numba serves.
    #: ``False``: the same arithmetic piece by piece (the path of mixed groups and numpy rewards),
    #: for comparisons; the results are the same bit for bit.
    one_pass = True

    def __init__(self, view: EnvView) -> None:
        super().__init__(view)
        n = self.env_num
        self.max_steps = np.zeros(n, dtype=np.int64)
        self.end_on_fall = np.ones(n, dtype=bool)
        self.scales = np.zeros((n, len(_TERM_NAMES)))
        self.schedules: list[list[tuple[float, float, float, float]]] = [[] for _ in range(n)]
        self.next_command = np.zeros(n, dtype=np.int64)  # index into the slot's schedule
        self.next_change = np.full(n, _NEVER)  # step count at which it starts
        self.step_dt = np.zeros(n)
        self.period = np.ones(n, dtype=np.int64)  # physics steps per control tick (reward period)
        self.fell = np.zeros(n, dtype=bool)
        self.tracking_error = np.zeros(n)
        self.yaw_rate_error = np.zeros(n)
        #: The last paid period's terms, one column per term (``reward_terms`` are its columns).
        self.terms_table = np.zeros((n, len(_TERM_NAMES)))
        self.reward_terms = {name: self.terms_table[:, column] for column, name in enumerate(_TERM_NAMES)}
        self.robot = view.tracker('robot')
        self.push_interval = np.zeros((n, 2))  # s; zeros: no pushes
        self.push_speed = np.zeros(n)
        self.next_push = np.full(n, _NEVER)  # step count of the slot's next push
        self.push_key = np.zeros(n, dtype=np.int64)  # what seeds the episode's pushes (see _start_row)
        self.pushes_done = np.zeros(n, dtype=np.int64)  # the episode's pushes so far
        self.has_goals = np.zeros(n, dtype=bool)
        self.goal_points = np.zeros((n, 1, 3))  # (slot, goal, xyz); grows to the longest list of goals
        self.goal_count = np.zeros(n, dtype=np.int64)
        self.goal_index = np.zeros(n, dtype=np.int64)
        self.goal_speed = np.ones(n)
        self.goal_tolerance = np.full(n, 0.1)
        #: The compiled payment (:mod:`~internutopia_extension.robots.locomotion_rewards_kernel`) of
        #: the robots whose rewards are a ``WalkRewardSpec``'s; the numpy terms otherwise.
        self.payment = CompiledPayment(_TERM_NAMES, _ONCE, self.scales, self.terms_table, self.tracking_error,
                                       self.yaw_rate_error)
        warm_steering()  # (goal episodes steer from their first tick)
        locomotion_kernels.warm()
        self._scale_rows: dict[int, np.ndarray] = {}  # by reward module: its scales as a term-table row
        # by robot group: (group, what its episodes start with and how it ticks: see _group_start)
        self._group_starts: dict[int, tuple[Any, _GroupStart]] = {}
        self._tick = CompiledTick(self.payment, n) if self.payment.available and tick_available() else None
        # Steps known to be quiet (nothing paid, due, pushed or ended) for the slots of one step call:
        # the slots array they hold for, how many calls are left, the step count of its first slot next.
        self._quiet_slots: np.ndarray | None = None
        self._quiet_left = 0
        self._quiet_next = -1

    def reset_slot(self, slot: int, config: Any) -> None:
        self.reset_slots(np.array([slot]), [config])

    def reset_slots(self, slots: np.ndarray, configs: Sequence[Any]) -> None:
        """Start the episodes ``configs`` in ``slots``, each robot group's slots in one pass (as
        :meth:`reset_slot` for each, in order: the same state, the same pushes)."""
        self._quiet_slots = None  # (what is due changes)
        slot_list = slots.tolist()
        track = self.robot.track
        for slot, config in zip(slot_list, configs, strict=True):
            self.configs[slot] = config
            track(slot, config.robot)
        longest = max(len(config.goals or ()) for config in configs)
        if longest > self.goal_points.shape[1]:
            grown = np.zeros((self.env_num, longest, 3))
            grown[:, :self.goal_points.shape[1]] = self.goal_points
            self.goal_points = grown
        for group, rows, members in self.robot.groups(slots):
            start = self._group_start(group, configs[int(rows[0])].robot, int(members[0]))
            for row, slot in zip(rows.tolist(), members.tolist(), strict=True):
                self._start_row(slot, configs[row], group, start.scales, start.step_dt, start.period)
            self._start_commands(group, members)

    def _start_row(self, slot: int, config: Any, group: Any, base: np.ndarray, step_dt: float, period: int) -> None:
        """Write ``slot``'s row of every per-slot table for its new episode ``config`` (item by
        item: a reset holds one or two slots, and an item write costs a tenth of an array write)."""
        overrides = config.reward_scales
        if overrides:
            scales = {**locomotion_rewards(group).REWARD_SCALES, **overrides}
            self.scales[slot] = [scales[name] for name in _TERM_NAMES]
        else:
            self.scales[slot] = base
        self.max_steps[slot], self.end_on_fall[slot] = config.max_steps, config.end_on_fall
        self.step_dt[slot], self.period[slot] = step_dt, period
        self.fell[slot] = False
        self.tracking_error[slot] = self.yaw_rate_error[slot] = 0.0
        self.goal_index[slot] = 0
        schedule = self.schedules[slot] = list(config.commands)
        # The first command starts with the episode; the next one when its start time comes.
        self.next_command[slot] = 1
        self.next_change[slot] = int(round(schedule[1][0] / step_dt)) if len(schedule) > 1 else _NEVER
        goals = config.goals or []
        if goals:
            self.goal_points[slot, :len(goals), :2] = goals
        self.has_goals[slot], self.goal_count[slot] = config.goals is not None, len(goals)
        self.goal_speed[slot], self.goal_tolerance[slot] = config.goal_speed, config.goal_tolerance
        interval = config.push_interval
        self.push_interval[slot] = interval or (0.0, 0.0)
        self.push_speed[slot] = config.push_speed
        if interval is None:
            self.next_push[slot] = _NEVER
        else:
            # Every draw of a push (when, which way, how hard) is a hash of the episode's push key
            # and the push's number, never a generator shared by the slots: the same episode is
            # pushed the same at any env_num, in any slot, after any episodes (a hash, 0.7 us; a
            # generator seeded per episode costs 17 us, and a walking vector env restarts one or
            # two episodes per vector step).
            key = int((config.push_seed if config.push_seed is not None else self.view.episode_seed(slot)) or 0)
            self.push_key[slot], self.pushes_done[slot] = key, 0
            # (_push_delay's arithmetic on the values just written, as Python numbers: the same bits)
            self.next_push[slot] = int(self.view.steps[slot]) + _delay_steps(key, 0, float(interval[0]), float(interval[1]), step_dt)

    def _start_commands(self, group: Any, members: np.ndarray) -> None:
        """Give ``members`` (slots of ``group`` starting their episodes) their schedules' first commands."""
        first = np.array([self.schedules[slot][0][1:] for slot in members.tolist()], dtype=float)
        group.walker.set_command(members, first, hold=True)

    def _group_start(self, group: Any, robot: str, slot: int) -> _GroupStart:
        """What every episode of ``group`` starts with, and whether its ticks run in one pass
        (:class:`_GroupStart`); found once per group, the pass warmed then. A ``ValueError`` if
        ``group`` does not walk."""
        entry = self._group_starts.get(id(group))
        if entry is not None and entry[0] is group:
            return entry[1]
        if getattr(group, 'walker', None) is None:
            raise ValueError(f"LocomotionTask needs a walking robot; {robot!r} in env {slot} "
                             "is not (an H1 with locomotion='walking', or an Aliengo)")
        if len(self._group_starts) >= _GROUPS_KEPT:  # (groups of structures long gone are not kept alive;
            self._group_starts.clear()               # each group in use finds its own again on its next start)
        step_dt = float(group.sim.physics_dt)
        control_dt = getattr(getattr(group.walker, 'gait', None), 'CONTROL_DT', None)
        start = _GroupStart(self._base_scales(group), step_dt, max(1, int(round(control_dt / step_dt))) if control_dt else 1,
                            self._one_pass_spec(group))
        self._group_starts[id(group)] = (group, start)
        return start

    def _push_delay(self, slot: int) -> int:
        """The step of ``slot``'s next push: a delay uniform in its ``push_interval`` (draw 0 of
        the push's hash)."""
        low, high = self.push_interval[slot].tolist()
        return int(self.view.steps[slot]) + _delay_steps(int(self.push_key[slot]), int(self.pushes_done[slot]), low, high,
                                                         float(self.step_dt[slot]))

    def _base_scales(self, group: Any) -> np.ndarray:
        """The reward scales of ``group``'s robot class in the term table's order (made once per class)."""
        rewards = locomotion_rewards(group)
        row = self._scale_rows.get(id(rewards))
        if row is None:
            row = self._scale_rows[id(rewards)] = np.array([rewards.REWARD_SCALES[name] for name in _TERM_NAMES], dtype=float)
        return row

    def _one_pass_spec(self, group: Any) -> Any:
        """The reward spec of ``group`` when its ticks can run in one pass (compiled kernels, the
        walking reward's own terms), else ``None``; the pass warmed when it can."""
        rewards = locomotion_rewards(group)
        spec = getattr(rewards, 'SPEC', None)
        walk_state = getattr(group.walker, 'compiled_state', None)
        if self._tick is None or walk_state is None or spec is None or rewards.TERMS is not spec.terms:
            return None
        self._tick.warm(self, group, spec, walk_state)
        return spec

    def _step_in_one_pass(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """:meth:`step` of ``slots`` through the one-pass tick (:class:`~.locomotion_kernels.CompiledTick`),
        or ``None`` where it does not serve (several groups, no compiled kernels, another reward)."""
        group = self.robot.only_group()
        entry = self._group_starts.get(id(group)) if group is not None else None
        walk_state = getattr(group.walker, 'compiled_state', None) if entry is not None and entry[0] is group else None
        if walk_state is None or entry is None or entry[1].spec is None or self._tick is None:
            return None
        reward, terminated, truncated, flags = self._tick(self, group, entry[1].spec, walk_state, slots)
        # (what step does after the payment that the pass left: each only where it found it due)
        steps = self.view.steps[slots]
        if flags & COMMAND_DUE:
            self._advance_commands(slots)
        if flags & STEERING:  # (a command was due too: steered here, after it, as step does)
            self._steer(slots[self._paying(slots, steps)[0]])
        if flags & PUSH_DUE:
            self._push(slots)
        self._count_quiet(slots, steps)
        return reward, terminated, truncated

    def _push(self, slots: np.ndarray) -> None:
        """Push the robots of ``slots`` whose push is due: a random horizontal pelvis velocity."""
        due = slots[self.view.steps[slots] >= self.next_push[slots]]
        for slot in due:
            robot = self.robot.entity(slot)
            key, count = int(self.push_key[slot]), int(self.pushes_done[slot])
            angle = -np.pi + 2.0 * np.pi * _unit_hash(key, count, 1)
            speed = (0.5 + 0.5 * _unit_hash(key, count, 2)) * self.push_speed[slot]
            self.pushes_done[slot] = count + 1
            dof = int(robot.root_dofadr[slot])
            robot.bound_world.data.qvel[slot, dof:dof + 2] += speed * np.array([np.cos(angle), np.sin(angle)])
            self.next_push[slot] = self._push_delay(slot)

    def _advance_commands(self, slots: np.ndarray) -> None:
        """Give each slot of ``slots`` whose next command is due that command (each robot group's
        slots in one call)."""
        due = slots[self.view.steps[slots] >= self.next_change[slots]]
        if not len(due):
            return
        commands = np.empty((len(due), 3))
        never = _NEVER
        for k, slot in enumerate(due.tolist()):
            schedule, index = self.schedules[slot], int(self.next_command[slot])
            commands[k] = schedule[index][1:]
            self.next_command[slot] = index + 1
            self.next_change[slot] = (int(round(schedule[index + 1][0] / float(self.step_dt[slot]))) if index + 1 < len(schedule)
                                      else never)
        for group, rows, members in self.robot.groups(due):
            group.walker.set_command(members, commands[rows], hold=True)  # type: ignore[attr-defined]

    def _steer(self, slots: np.ndarray) -> None:
        """Command the slots of ``slots`` that have goal points towards their current goals."""
        steering = slots[self.has_goals[slots]]
        if not len(steering):
            return
        for group, _, members in self.robot.groups(steering):
            # The pelvis poses from the state, the goals reached and the ones steered for now, in one
            # pass (past the last goal it is held on that goal, as a user calling move_to_point every
            # step does: still within tolerance it stands, drifted out it steps back).
            position, orientation, goal = pick_goals(members, group.bound_world.data.qpos, group.root_qposadr,
                                                     self.goal_points, self.goal_index, self.goal_count, self.goal_tolerance)
            velocity = steer_towards_each(position, orientation, goal, 1.0, 1.0, self.goal_tolerance[members])[0]
            velocity[:, 0] *= self.goal_speed[members]
            group.walker.set_command(members, velocity, hold=True)  # type: ignore[attr-defined]

    def step(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        steps_now = self.view.steps
        if slots is self._quiet_slots and self._quiet_left > 0 and steps_now[slots[0]] == self._quiet_next:
            # (known quiet: the same slots one step on, nothing due before the step counted below)
            self._quiet_left -= 1
            self._quiet_next += 1
            nothing = np.zeros(len(slots), dtype=bool)
            return np.zeros(len(slots)), nothing, nothing.copy()
        if self.one_pass:
            done = self._step_in_one_pass(slots)
            if done is not None:
                return done
        steps = steps_now[slots]
        paying, last = self._paying(slots, steps)
        if not paying.any():  # (most physics steps: nothing is paid, checked or steered)
            self._advance_commands(slots)
            self._push(slots)
            self._count_quiet(slots, steps)
            nothing = np.zeros(len(slots), dtype=bool)
            return np.zeros(len(slots)), nothing, nothing.copy()
        reward = np.zeros(len(slots))
        fell = np.zeros(len(slots), dtype=bool)
        if paying.any():
            paid_rows = np.flatnonzero(paying)
            paid = slots[paid_rows]
            # Steps since the last payment: a whole period, or what the last step closes of one.
            span = steps[paid_rows] - self.period[paid] * ((steps[paid_rows] - 1) // self.period[paid])
            reward[paid_rows], fell[paid_rows] = self._pay(paid, span)
        # Any fall charges once, on the step it is found (an episode that goes on after a fall,
        # ``end_on_fall=False``, is not charged again every period it lies there); see _pay.
        self.fell[slots] |= fell
        terminated = fell & self.end_on_fall[slots]
        truncated = ~terminated & last
        self._advance_commands(slots)
        # Steered at the end of each period only: the walker reads its command on its tick, the
        # step after (in the vector envs, whose action repeat is the period, exactly; a goal is
        # checked as reached once per period too).
        self._steer(slots[paying])
        self._push(slots)
        self._count_quiet(slots, steps)
        return reward, terminated, truncated

    def _paying(self, slots: np.ndarray, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which of ``slots`` (at ``steps``) are paid now, and which are on their episode's last
        step: paid on the last physics step of each control period of the episode, and on its last
        step (what :func:`~.locomotion_kernels.tick_rows` finds in its pass)."""
        last = steps >= self.max_steps[slots]
        return (steps % self.period[slots] == 0) | last, last

    def quiet_steps(self, slots: np.ndarray, limit: int) -> int:
        """The next calls before any slot of ``slots`` is paid (the end of its control period or
        its last step), or has a command or a push due (see :meth:`BaseTask.quiet_steps`)."""
        if not len(slots):
            return limit
        if slots is self._quiet_slots and int(self.view.steps[slots[0]]) == self._quiet_next - 1:
            return max(0, min(limit, self._quiet_left))  # (counted at the end of this slots' last step: nothing changed since)
        quiet = locomotion_kernels.quiet_steps(slots, self.view.steps[slots], self.period, self.max_steps,
                                               self.next_change, self.next_push)
        return max(0, min(limit, quiet))

    def _count_quiet(self, slots: np.ndarray, steps: np.ndarray) -> None:
        """How many of the next calls with these ``slots`` (at ``steps`` now) are quiet: before any
        slot's next payment (the end of its control period, or its last step), command, or push.
        Only a read-only slots array (the runner's, shared while no episode starts or ends) is kept."""
        if slots.flags.writeable or not len(slots):
            self._quiet_slots = None
            return
        self._quiet_slots, self._quiet_next = slots, int(steps[0]) + 1
        self._quiet_left = quiet_steps(slots, steps, self.period, self.max_steps, self.next_change, self.next_push)

    def _pay(self, slots: np.ndarray, span: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The reward of ``slots`` for the last ``span`` physics steps, from the state now, and
        whether each has fallen."""
        reward = np.zeros(len(slots))
        once = np.zeros(len(slots))
        fell = np.zeros(len(slots), dtype=bool)
        for group, rows, members in self.robot.groups(slots):
            state = group.walker.state(members)  # type: ignore[attr-defined]
            rewards = locomotion_rewards(group)
            spec = getattr(rewards, 'SPEC', None)
            if self.payment.available and spec is not None and rewards.TERMS is spec.terms:
                # The same terms, sums and errors in one compiled pass (equal to rounding).
                paid, paid_once, fell[rows] = self.payment.pay(spec, state, span[rows], members)
                reward[rows] += paid
                once[rows] += paid_once
                continue
            terms = rewards.reward_terms(state)
            table = np.empty((len(members), len(_TERM_NAMES)))
            for column, name in enumerate(_TERM_NAMES):
                table[:, column] = terms[name]
            self.terms_table[members] = table
            weighted = self.scales[members] * table
            # Summed term by term in the table's order (cumsum adds left to right, as the
            # per-term additions did: the same sums to the bit).
            reward[rows] += np.cumsum(weighted[:, _PER_SECOND], axis=1)[:, -1]
            once[rows] += np.cumsum(weighted[:, _ONCE], axis=1)[:, -1]
            fell[rows] = rewards.fallen(state)
            weight = span[rows]
            self.tracking_error[members] += weight * np.linalg.norm(state.command[:, :2] - state.lin_vel[:, :2], axis=1)
            self.yaw_rate_error[members] += weight * np.abs(state.command[:, 2] - state.ang_vel[:, 2])
        # Never below zero (legged_gym's "only positive rewards"): otherwise early in training the
        # penalties outweigh staying alive, and ending the episode by falling pays.
        reward = np.maximum(reward, 0.0) * self.step_dt[slots] * span
        reward += once * (fell & ~self.fell[slots])
        return reward, fell

    def get_observations(self, slots: np.ndarray) -> dict[str, Any]:
        wanted = self.view.observed_entries
        if wanted is not None and 'fell' not in wanted:
            return {}  # (a caller reading other entries: the walking vector envs read the robot's alone)
        return {'fell': self.fell[slots].copy()}

    def episode_metrics(self, slot: int, metrics: dict[str, Any]) -> Any:
        steps = max(int(self.view.steps[slot]), 1)
        return {**metrics, 'fell': bool(self.fell[slot]), 'steps': steps,
                'seconds': steps * float(self.step_dt[slot]),
                'mean_velocity_error': float(self.tracking_error[slot] / steps),
                'mean_yaw_rate_error': float(self.yaw_rate_error[slot] / steps),
                'goals_reached': int(self.goal_index[slot])}
