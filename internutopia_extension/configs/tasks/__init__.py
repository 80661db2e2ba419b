"""Config classes of the built-in tasks."""

from __future__ import annotations

from internutopia.core.config import TaskCfg


class SingleInferenceTaskCfg(TaskCfg):
    """An episode that never ends by itself (the script decides when to stop)."""

    type: str = 'SingleInferenceTask'


class FiniteStepTaskCfg(TaskCfg):
    """An episode that ends with ``truncated=True`` after ``max_steps`` env steps."""

    type: str = 'FiniteStepTask'
    max_steps: int = 500


__all__ = ['FiniteStepTaskCfg', 'SingleInferenceTaskCfg']
