"""Task (episode) configs (InternUtopia's ``internutopia.core.config.task``): :mod:`.task`
(``TaskCfg``) and :mod:`.reward` (``RewardCfg``)."""

from internutopia.core.config.task.reward import RewardCfg
from internutopia.core.config.task.task import TaskCfg

__all__ = ['RewardCfg', 'TaskCfg']
