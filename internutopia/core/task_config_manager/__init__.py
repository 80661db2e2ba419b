"""InternUtopia's task config managers: the episode queue seen the way its scripts see it.

InternUtopia hands episodes to its runners through a task config manager;
``env.task_config_manager`` is one here too, over the env's own queue
(:class:`~internutopia.core.task_config_manager.local.LocalTaskConfigManager`). Its
``get_active_task_configs()`` is ``env.active_task_configs``; ``get_next()`` takes the next episode
from the queue (which the env would otherwise give the next slot reset).
"""

from internutopia.core.task_config_manager.base import BaseTaskConfigManager, create_task_config_manager
from internutopia.core.task_config_manager.local import LocalTaskConfigManager

__all__ = ['BaseTaskConfigManager', 'LocalTaskConfigManager', 'create_task_config_manager']
