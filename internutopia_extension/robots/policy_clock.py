"""The clocks a walking policy ticks on (H1's, Aliengo's and GR1's walkers, G1's policy).

Each slot's policy ticks every ``period`` seconds from its own episode's start, as it would alone
in a fresh world: a slot reset while others walk on takes its first tick on its episode's first
physics step, not at the others' next tick (which fell up to a tick's worth of physics steps
later, so a robot's path depended on when its episode started). A tick is due on the physics step
that starts at or after the slot's next tick time (a small epsilon absorbs the float drift of
summed steps); taking it moves that slot's next tick one period on. The slots of a robot group
keep the world's one time, so the group reads the time of its first slot. Between two ticks
nothing the policy drives changes, which is what the runner's fused and recorded steps rely on
(:meth:`PolicyClock.steps_before`).

While every slot of the group ticks on one schedule (slots started together, or on one of the
schedule's ticks: a Gymnasium env's autoreset, whose steps are whole ticks), the clock keeps that
schedule as one number, so a step's check costs what one shared clock did; a slot started off the
schedule gives each slot its own next tick until they agree again.

A group bound anew because its pack gained or lost slots keeps its slots' schedules while any of
its slots goes on running through the change (:func:`keeps_running`); only a group whose every
slot starts anew starts its clock anew (at their episodes' start).

>>> clock, both = PolicyClock(0.02, env_num=2), np.array([0, 1])
>>> clock.due_slots(both, 0.0).tolist(), clock.due_slots(both, 0.005), clock.steps_before(0.0, 0.005, 10)
([0, 1], None, 3)
>>> clock.start(np.array([1]), 0.01, group=both)  # slot 1 starts anew, off slot 0's schedule
>>> clock.due_slots(both, 0.01).tolist(), clock.due_slots(both, 0.02).tolist(), clock.steps_before(0.02, 0.005, 10)
([1], [0], 1)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ['PolicyClock', 'keeps_running']

#: Absorbs the float drift of a time summed from physics steps against one summed from periods.
_EPSILON = 1e-9


class PolicyClock:
    """A policy's tick clocks of ``period`` seconds for ``env_num`` slots, their first ticks at ``start``."""

    def __init__(self, period: float, env_num: int = 1, start: float = 0.0) -> None:
        self.period = float(period)
        #: Each slot's next tick time (current only while :attr:`shared` is ``None``).
        self._next = np.full(int(env_num), float(start))
        #: Every slot's next tick while they tick on one schedule, else ``None``.
        self.shared: float | None = float(start)

    def next_tick_of(self, slot: int) -> float:
        """Slot ``slot``'s next tick time."""
        return self.shared if self.shared is not None else float(self._next[slot])

    def restart(self, time: float) -> None:
        """Every slot's next tick at ``time`` (a group whose slots all start anew)."""
        self.shared = float(time)
        self._next.fill(self.shared)

    def start(self, slots: np.ndarray, time: float, group: np.ndarray) -> None:
        """``slots`` (of the group's slots ``group``) start their episodes at ``time``: each ticks
        first on the step starting then, and every period after."""
        if len(slots) == len(group):
            self.restart(time)
            return
        if self.shared is not None:
            if abs(time - self.shared) <= _EPSILON:  # (started on the schedule's next tick: one schedule still)
                return
            self._next.fill(self.shared)
            self.shared = None
        self._next[slots] = float(time)
        ticks = self._next[group]
        if float(ticks.max()) - float(ticks.min()) <= _EPSILON:  # (on one schedule again)
            self.restart(float(ticks[0]))

    def due_slots(self, slots: np.ndarray, time: float) -> np.ndarray | None:
        """Which of ``slots`` (the group's) tick on the step starting at ``time`` (``None``: none);
        their ticks are taken. All of them (``slots`` itself) while they keep one schedule."""
        shared = self.shared
        if shared is not None:
            if time + _EPSILON < shared:
                return None
            self.shared = shared + self.period
            return slots
        ticking = slots[time + _EPSILON >= self._next[slots]]
        if not len(ticking):
            return None
        self._next[ticking] += self.period
        return slots if len(ticking) == len(slots) else ticking

    def steps_before(self, time: float, dt: float, limit: int, slots: np.ndarray | None = None) -> int:
        """How many of the physics steps after the one starting at ``time`` (each ``dt`` long; at
        most ``limit``) start before the next tick of any of ``slots`` (every slot: ``None``)."""
        if self.shared is not None:
            next_tick = self.shared
        else:
            next_tick = float((self._next if slots is None else self._next[slots]).min())
        steps = 0
        while steps < limit and time + (steps + 1) * dt + _EPSILON < next_tick:
            steps += 1
        return steps


def keeps_running(before: Iterable[int], after: Iterable[int]) -> bool:
    """Whether a robot group that held the slots ``before`` and is bound anew for ``after`` (its
    pack gained or lost slots) keeps a slot running through the change: then its policy clocks
    keep their schedules (restarting them would move the running slots' ticks: from a joining slot's
    stale row time, every physics step would tick until the clock caught up).

    >>> keeps_running([1], [0, 1]), keeps_running([0, 1], [1]), keeps_running([], [0]), keeps_running([1], [0])
    (True, True, False, False)
    """
    return not {int(slot) for slot in before}.isdisjoint(int(slot) for slot in after)
