"""FiniteStepTask: ends with ``truncated=True`` after ``max_steps`` env steps."""

from __future__ import annotations

import numpy as np

from internutopia.core.task.base import BaseTask
from internutopia.core.view import EnvView


@BaseTask.register('FiniteStepTask')
class FiniteStepTask(BaseTask):
    """Truncates each slot's episode at its own ``max_steps``."""

    def __init__(self, view: EnvView) -> None:
        super().__init__(view)
        self.max_steps = np.zeros(self.env_num, dtype=np.int64)

    def reset_slot(self, slot: int, config) -> None:
        super().reset_slot(slot, config)
        self.max_steps[slot] = config.max_steps

    def step(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        truncated = self.view.steps[slots] >= self.max_steps[slots]
        return np.zeros(len(slots)), np.zeros(len(slots), dtype=bool), truncated
