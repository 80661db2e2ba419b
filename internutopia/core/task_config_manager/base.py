"""``BaseTaskConfigManager`` and ``create_task_config_manager`` (InternUtopia's names)."""

from __future__ import annotations

from typing import Any

from internutopia.core.config import Config, TaskCfg
from internutopia.core.episode_queue import EpisodeQueue


class BaseTaskConfigManager:
    """Hands out the episodes of a :class:`Config` in order, each once.

    Attributes:
        task_configs: the episodes (a manager made from a ``Config``: the user's objects, each
            handed-out episode a copy; an env's manager: the episodes that env runs, its own copies,
            ``[]`` for an env drawing from an iterator).
        len_tasks: how many (``None`` for an env drawing from an iterator: it may be endless).
        env_num: slots of the env.
        env_offset_size: spacing of the slots' grid.
    """

    #: InternUtopia's table of manager classes by kind (one kind here: ``'local'``).
    managers: dict[str, type[BaseTaskConfigManager]] = {}
    task_configs: list[TaskCfg]
    env_num: int
    env_offset_size: float
    len_tasks: int | None

    def __init__(self, config: Config) -> None:
        if not isinstance(config, Config):
            raise TypeError(f'a task config manager needs a Config; got {type(config).__name__}')
        self.task_configs: list[TaskCfg] = list(config.task_configs)
        self.env_num = config.env_num
        self.env_offset_size = config.env_offset_size
        self.len_tasks = self.validate_task_configs()
        #: ``None`` for a distributed env's manager: its queue lives in a Ray actor.
        self._queue: EpisodeQueue | None = EpisodeQueue(self.task_configs)

    @classmethod
    def register(cls, kind: str) -> Any:
        """Class decorator adding a manager class to :attr:`managers` under ``kind``."""

        def decorate(manager: type[BaseTaskConfigManager]) -> type[BaseTaskConfigManager]:
            cls.managers[kind] = manager
            return manager

        return decorate

    def validate_task_configs(self) -> int:
        """The number of episodes (``ValueError`` when there are none). Unlike InternUtopia, episodes
        may hold different robots: slots of different structures run side by side."""
        if not self.task_configs:
            raise ValueError('task_configs must hold at least one episode')
        return len(self.task_configs)

    @property
    def current_task_config_idx(self) -> int:
        """How many episodes were handed out so far (0 when the queue is another process's)."""
        queue = self._queue_or_none()
        return queue.taken if isinstance(queue, EpisodeQueue) else 0

    def _queue_or_none(self) -> Any:
        """The queue this manager hands episodes out of, ``None`` when it lives in another process."""
        return self._queue

    def _pop_next_episode(self) -> TaskCfg | None:
        """The next episode's ``TaskCfg`` (a copy), or ``None`` when none is left."""
        episode = self._local_queue().next()
        return episode.config if episode is not None else None

    def _local_queue(self) -> Any:
        """The queue this manager hands episodes out of (``NotImplementedError`` for a distributed env's)."""
        queue = self._queue_or_none()
        if queue is None:
            raise NotImplementedError('get_next() of a distributed env: its episode queue is a Ray actor that the env '
                                      'itself draws from; reset slots with env.reset(env_ids=...)')
        return queue

    def get_active_task_configs(self) -> dict[int, TaskCfg]:
        """``{env_id: TaskCfg}`` of the slots holding an episode."""
        raise NotImplementedError

    def get_next(self, last_env_id: int | None = None) -> tuple[str, Any, Any, TaskCfg | None]:
        """``(task_name, env_id, env_offset, TaskCfg)`` of the next episode (``TaskCfg`` ``None`` when none is left)."""
        raise NotImplementedError


def create_task_config_manager(config: Config) -> BaseTaskConfigManager:
    """A manager of ``config``'s episodes (the ``'local'`` kind of :attr:`BaseTaskConfigManager.managers`:
    :class:`~internutopia.core.task_config_manager.local.LocalTaskConfigManager`).

    The env makes and owns its own (``env.task_config_manager``); one made here is independent of any env.
    """
    return BaseTaskConfigManager.managers['local'](config)


__all__ = ['BaseTaskConfigManager', 'create_task_config_manager']
