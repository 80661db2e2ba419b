"""The render clock: on which physics steps cameras refresh. Backend-neutral (sim time and the
``SimConfig`` alone), so every backend's renderer and InternUtopia's ``render_interval`` agree.

>>> clock = RenderClock(physics_dt=1 / 240, rendering_dt=1 / 60, rendering_interval=None)
>>> clock.period, clock.due(4 / 240), clock.due(5 / 240)
(4, True, False)
"""

from __future__ import annotations

import math
from typing import Any


class RenderClock:
    """When cameras refresh: on every ``period``-th physics step of the world's clock.

    ``period`` is ``rendering_interval`` when set, else the fewest physics steps spanning at least
    ``rendering_dt`` (so a render step comes once sim time has advanced by ``rendering_dt`` since
    the last one). Steps count from sim time 0 (the world's start; every slot keeps the one clock), so
    the answer depends on the time alone: every camera of every slot and pack agrees, with no state.
    """

    def __init__(self, physics_dt: float, rendering_dt: float, rendering_interval: int | None) -> None:
        self.physics_dt = float(physics_dt)
        if rendering_interval is not None:
            self.period = max(1, int(rendering_interval))  # 0: every step, as InternUtopia reads it
        else:
            self.period = max(1, math.ceil(float(rendering_dt) / self.physics_dt - 1e-6))

    @classmethod
    def of(cls, sim: Any) -> RenderClock:
        """The clock of a ``SimConfig``."""
        return cls(sim.physics_dt, sim.rendering_dt, sim.rendering_interval)

    def step_index(self, time: float) -> int:
        """Physics steps since sim time 0."""
        return int(round(time / self.physics_dt))

    def due(self, time: float) -> bool:
        """Whether the physics step ending at sim ``time`` is a render step."""
        return self.step_index(time) % self.period == 0


__all__ = ['RenderClock']
