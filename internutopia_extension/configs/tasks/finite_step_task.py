"""``FiniteStepTaskCfg``: an episode cut after ``max_steps`` env steps (InternUtopia's module path)."""

from __future__ import annotations

from pydantic import field_validator, model_validator

from internutopia.core.config import TaskCfg
from internutopia.core.config.values import check_steps
from internutopia_extension.configs.tasks.robot_names import check_metric_robot_names


class FiniteStepTaskCfg(TaskCfg):
    """An episode that ends with ``truncated=True`` after ``max_steps`` env steps."""

    type: str = 'FiniteStepTask'
    max_steps: int = 500

    @field_validator('max_steps')
    @classmethod
    def _max_steps_positive(cls, value: int) -> int:
        return check_steps(value)  # >= 1, and far from where the step counters overflow

    @model_validator(mode='after')
    def _metric_robots_present(self) -> FiniteStepTaskCfg:
        check_metric_robot_names(self.metrics, self.robots)
        return self


__all__ = ['FiniteStepTaskCfg']
