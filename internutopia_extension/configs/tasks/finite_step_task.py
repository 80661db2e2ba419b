"""``FiniteStepTaskCfg``: an episode cut after ``max_steps`` env steps (InternUtopia's module path)."""

from __future__ import annotations

from pydantic import field_validator

from internutopia.core.config import TaskCfg


class FiniteStepTaskCfg(TaskCfg):
    """An episode that ends with ``truncated=True`` after ``max_steps`` env steps."""

    type: str = 'FiniteStepTask'
    max_steps: int = 500

    @field_validator('max_steps')
    @classmethod
    def _max_steps_positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f'max_steps must be >= 1; got {value}')
        return value


__all__ = ['FiniteStepTaskCfg']
