"""The clock a walking policy ticks on (H1's, Aliengo's and GR1's walkers, G1's policy).

One clock serves every slot of a robot group: the slots keep the world's one time, so the group
reads the time of its first slot. A tick is due on the physics step that starts at or after the
next tick time (a small epsilon absorbs the float drift of summed steps); taking it moves the
next tick one period on. Between two ticks nothing the policy drives changes, which is what the
runner's fused and recorded steps rely on (:meth:`steps_before`).

>>> clock = PolicyClock(0.02)
>>> clock.due(0.0), clock.due(0.005), clock.steps_before(0.0, 0.005, 10)
(True, False, 3)
"""

from __future__ import annotations

__all__ = ['PolicyClock']

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
