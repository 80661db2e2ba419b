"""Metrics one slot at a time: InternUtopia's metric API next to our vectorized metrics.

- An upstream-style metric class (``cls(config, task_config)`` with ``update(obs)`` every step and
  ``calc()`` when the episode ends) is run by a :class:`SlotMetricAdapter`: one instance per slot
  and episode, given the slot's observation ``{robot_name: robot_obs}`` every step.
- A built-in metric seen from one slot (a per-slot task's ``metrics[name]``) is a
  :class:`SlotMetricView`: ``calc()`` is the metric's value for that slot's episode so far.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.metric.base import BaseMetric


class SlotMetricView:
    """A built-in (vectorized) metric ``metric`` seen from ``slot``."""

    def __init__(self, metric: BaseMetric, slot: int) -> None:
        self.metric = metric
        self.slot = int(slot)
        self.config = metric.config
        self.name = metric.name
        self.metric_config = metric.config.metric_config

    def update(self, *args: Any) -> None:
        """The env updates its metrics every step; nothing to do."""

    def calc(self) -> Any:
        """The metric's value for the slot's episode (so far)."""
        return self.metric.calc(self.slot)

    def __repr__(self) -> str:
        return f'{type(self.metric).__name__}({self.name!r}, env {self.slot})'


class SlotMetricAdapter(BaseMetric):
    """Runs the upstream-style metric class ``slot_class`` for every slot whose episode lists the config."""

    def __init__(self, config: Any, view: Any, slot_class: type) -> None:
        super().__init__(config, view)
        self.slot_class = slot_class
        self.instances: dict[int, Any] = {}

    def reset_slot(self, slot: int, task: Any) -> None:
        from internutopia.core.task.slot import task_name

        instance = self.slot_class(self.config, task)
        setup = getattr(instance, 'set_up_runtime', None)
        if setup is not None:
            setup(task_name(self.view, slot), slot, self.view.origin(slot).tolist())
        self.instances[slot] = instance

    def update(self, slots: np.ndarray) -> None:
        slots = np.asarray(slots, dtype=np.intp)
        for slot, obs in zip(slots.tolist(), self.view.robot_observations(slots), strict=True):
            self.instances[slot].update(obs)

    def calc(self, slot: int) -> Any:
        return self.instances[slot].calc()

    def slot_metric(self, slot: int) -> Any:
        return self.instances[slot]


__all__ = ['SlotMetricAdapter', 'SlotMetricView']
