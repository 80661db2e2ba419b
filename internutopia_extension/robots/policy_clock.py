"""The clock a walking policy ticks on (H1's, Aliengo's and GR1's walkers, G1's policy).

One clock serves every slot of a robot group: the slots keep the world's one time, so the group
reads the time of its first slot. A tick is due on the physics step that starts at or after the
next tick time (a small epsilon absorbs the float drift of summed steps); taking it moves the
next tick one period on. Between two ticks nothing the policy drives changes, which is what the
runner's fused and recorded steps rely on (:meth:`steps_before`).

A group bound anew because its pack gained or lost slots keeps its clock while any of its slots
goes on running through the change (:func:`keeps_running`): their ticks stay where they were, and a
slot that joins ticks with them from the next tick on, as a slot reset within the pack does. Only a
group whose every slot starts anew starts the clock anew (at their episodes' start).

>>> clock = PolicyClock(0.02)
>>> clock.due(0.0), clock.due(0.005), clock.steps_before(0.0, 0.005, 10)
(True, False, 3)
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ['PolicyClock', 'keeps_running']

#: Absorbs the float drift of a time summed from physics steps against one summed from periods.
_EPSILON = 1e-9


class PolicyClock:
    """A policy's tick clock of ``period`` seconds, its first tick at ``start``."""

    def __init__(self, period: float, start: float = 0.0) -> None:
        self.period = float(period)
        self.next_tick = float(start)

    def restart(self, time: float) -> None:
        """The next tick at ``time`` (a world bound anew: its clock starts there)."""
        self.next_tick = float(time)

    def due(self, time: float) -> bool:
        """Whether a tick falls on the step starting at ``time``; if so it is taken."""
        if time + _EPSILON < self.next_tick:
            return False
        self.next_tick += self.period
        return True

    def steps_before(self, time: float, dt: float, limit: int) -> int:
        """How many of the physics steps after the one starting at ``time`` (each ``dt`` long; at
        most ``limit``) start before the next tick (:meth:`due` false on each)."""
        steps = 0
        while steps < limit and time + (steps + 1) * dt + _EPSILON < self.next_tick:
            steps += 1
        return steps


def keeps_running(before: Iterable[int], after: Iterable[int]) -> bool:
    """Whether a robot group that held the slots ``before`` and is bound anew for ``after`` (its
    pack gained or lost slots) keeps a slot running through the change: then its policy clock
    keeps its schedule (restarting it would move the running slots' ticks: from a joining slot's
    stale row time, every physics step would tick until the clock caught up).

    >>> keeps_running([1], [0, 1]), keeps_running([0, 1], [1]), keeps_running([], [0]), keeps_running([1], [0])
    (True, True, False, False)
    """
    return not {int(slot) for slot in before}.isdisjoint(int(slot) for slot in after)
