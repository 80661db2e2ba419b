"""Task (episode) configs (InternUtopia's ``internutopia.core.config.task``): :mod:`.task`
(``TaskCfg``) and :mod:`.reward` (``RewardCfg``); ``MetricCfg``, ``ObjectCfg`` and ``RobotCfg``
are importable from here too, as extensions written for InternUtopia import them."""

from internutopia.core.config.metric import MetricCfg
from internutopia.core.config.object import ObjectCfg
from internutopia.core.config.robot import RobotCfg
from internutopia.core.config.task.reward import RewardCfg
from internutopia.core.config.task.task import TaskCfg

__all__ = ['MetricCfg', 'ObjectCfg', 'RobotCfg', 'RewardCfg', 'TaskCfg']
