"""``LocalTaskConfigManager``: the episode queue of one process (InternUtopia's class)."""

from __future__ import annotations

from typing import Any

from internutopia.core.config import Config, TaskCfg
from internutopia.core.grid import slot_origins
from internutopia.core.task_config_manager.base import BaseTaskConfigManager


@BaseTaskConfigManager.register('local')
class LocalTaskConfigManager(BaseTaskConfigManager):
    """The episodes of a config, handed out in order.

    Made from a :class:`Config`, it has its own queue; ``env.task_config_manager`` (built with
    :meth:`of_env`) is the env's queue, so what it hands out the env's slots do not get.
    """

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self._env: Any = None
        self.active_task_configs: dict[int, TaskCfg] = {}
        self.env_id_to_offset_map: dict[int, list[float]] = {
            slot: [float(v) for v in origin] for slot, origin in enumerate(slot_origins(self.env_num, self.env_offset_size))}
        self._next_env_id = 0

    @classmethod
    def of_env(cls, env: Any) -> LocalTaskConfigManager:
        """The manager of ``env``'s own episode queue."""
        manager = cls.__new__(cls)
        BaseTaskConfigManager.__init__(manager, env.config)
        manager._env = env
        # A distributed env's queue lives in a Ray actor: its manager reports, it does not hand out.
        manager._queue = None if env.is_remote else env.runner.queue
        manager.env_id_to_offset_map = {slot: [float(v) for v in origin]
                                        for slot, origin in enumerate(slot_origins(env.env_num, env.config.env_offset_size))}
        manager.active_task_configs = {}
        manager._next_env_id = 0
        return manager

    def get_active_task_configs(self) -> dict[int, TaskCfg]:
        """``{env_id: TaskCfg}`` of the slots holding an episode (the env's, for an env's manager)."""
        if self._env is not None:
            return self._env.active_task_configs
        return dict(self.active_task_configs)

    def get_next(self, env_id: int | None = None) -> tuple[str, Any, Any, TaskCfg | None]:
        """``(task_name, env_id, env_offset, TaskCfg)`` of the next episode, for slot ``env_id``
        (the next unused slot when ``None``); ``TaskCfg`` is ``None`` when the queue is empty.

        Raises:
            ValueError: ``env_id`` is ``None`` and every slot was handed an episode already.
        """
        queue = self._local_queue()
        if env_id is None:
            if self._next_env_id >= self.env_num:
                raise ValueError(f'every one of the {self.env_num} env ids was handed an episode; pass the env_id to refill')
            env_id = self._next_env_id
            self._next_env_id += 1
        episode = queue.next()
        if episode is None:
            self.active_task_configs.pop(env_id, None)
            return '', env_id, None, None
        self.active_task_configs[env_id] = episode.config
        return f'task_{episode.index}', env_id, self.env_id_to_offset_map.get(env_id), episode.config


__all__ = ['LocalTaskConfigManager']
