"""``SingleInferenceTaskCfg``: an episode the script ends (InternUtopia's module path)."""

from __future__ import annotations

from internutopia.core.config import TaskCfg


class SingleInferenceTaskCfg(TaskCfg):
    """An episode that never ends by itself (the script decides when to stop)."""

    type: str = 'SingleInferenceTask'


__all__ = ['SingleInferenceTaskCfg']
