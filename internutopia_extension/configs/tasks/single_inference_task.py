"""``SingleInferenceTaskCfg``: an episode the script ends (InternUtopia's module path)."""

from __future__ import annotations

from pydantic import model_validator

from internutopia.core.config import TaskCfg
from internutopia_extension.configs.tasks.robot_names import check_metric_robot_names


class SingleInferenceTaskCfg(TaskCfg):
    """An episode that never ends by itself (the script decides when to stop)."""

    type: str = 'SingleInferenceTask'

    @model_validator(mode='after')
    def _metric_robots_present(self) -> SingleInferenceTaskCfg:
        check_metric_robot_names(self.metrics, self.robots)
        return self


__all__ = ['SingleInferenceTaskCfg']
