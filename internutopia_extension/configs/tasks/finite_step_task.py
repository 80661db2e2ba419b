"""``FiniteStepTaskCfg``: an episode cut after ``max_steps`` env steps (InternUtopia's module path)."""

from __future__ import annotations

from pydantic import field_validator

from internutopia.core.config import TaskCfg
from internutopia.core.config.values import check_steps


class FiniteStepTaskCfg(TaskCfg):
    """An episode that ends with ``truncated=True`` after ``max_steps`` env steps."""

    type: str = 'FiniteStepTask'
    max_steps: int = 500

    @field_validator('max_steps')
    @classmethod
    def _max_steps_positive(cls, value: int) -> int:
        return check_steps(value)  # >= 1, and far from where the step counters overflow


__all__ = ['FiniteStepTaskCfg']
