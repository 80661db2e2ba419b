"""Rewards one slot at a time: InternUtopia's reward API next to our vectorized rewards.

An upstream-style reward class (``cls(task, settings)`` with ``calc()`` returning the step's
reward of one episode) is run by a :class:`SlotRewardAdapter`: one instance per slot and
episode, made with that slot's per-slot task object and the config's ``reward_settings``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.reward.base import BaseReward


class SlotRewardAdapter(BaseReward):
    """Runs the upstream-style reward class ``slot_class`` for every slot whose task config names it."""

    def __init__(self, config: Any, view: Any, slot_class: type) -> None:
        super().__init__(config, view)
        self.slot_class = slot_class
        self.instances: dict[int, Any] = {}

    def reset_slot(self, slot: int, task: Any) -> None:
        task_object = self.view.task(slot).slot_task(slot)
        instance = self.slot_class(task_object, dict(self.settings))
        instance.reset()
        self.instances[slot] = instance

    def calc(self, slots: np.ndarray) -> np.ndarray:
        out = np.zeros(len(slots))
        for row, slot in enumerate(np.asarray(slots).tolist()):
            value = self.instances[slot].calc()
            out[row] = float(value) if value is not None else 0.0
        return out

    def slot_reward(self, slot: int) -> Any:
        """This reward in ``slot`` as InternUtopia's per-slot object."""
        return self.instances[slot]


__all__ = ['SlotRewardAdapter']
