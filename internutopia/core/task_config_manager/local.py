"""``LocalTaskConfigManager``: the episode queue of one process (InternUtopia's class)."""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.config import Config, TaskCfg
from internutopia.core.episode_queue import Episode
from internutopia.core.grid import slot_origins
from internutopia.core.runner.failures import failed_record
from internutopia.core.task_config_manager.base import BaseTaskConfigManager

#: The ``outcome`` of the record of an episode an env's manager handed to its caller (``get_next``).
HANDED_OUT = 'handed_out'


@BaseTaskConfigManager.register('local')
class LocalTaskConfigManager(BaseTaskConfigManager):
    """The episodes of a config, handed out in order.

    Made from a :class:`Config`, it has its own queue; ``env.task_config_manager`` (built with
    :meth:`of_env`) is the env's queue, so what it hands out the env's slots do not get: the env
    records each such episode (``"outcome": "handed_out"``), as every episode its queue hands out
    ends with one record.
    """

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self._env: Any = None
        self._active: dict[int, TaskCfg] = {}
        self.env_id_to_offset_map: dict[int, list[float]] = {
            slot: [float(v) for v in origin] for slot, origin in enumerate(slot_origins(self.env_num, self.env_offset_size))}
        self._next_env_id = 0

    @classmethod
    def of_env(cls, env: Any) -> LocalTaskConfigManager:
        """The manager of ``env``'s own episode queue: its ``task_configs`` and ``len_tasks`` are
        the episodes the env runs (its ``episodes`` argument when given: ``[]`` and ``None`` for an
        iterator, which may be endless)."""
        manager = cls.__new__(cls)
        manager._env = env
        listed = env._episode_list
        manager.task_configs = list(listed) if listed is not None else []
        manager.len_tasks = len(listed) if listed is not None else None
        manager.env_num = env.config.env_num  # (a distributed env's: per runner, as InternUtopia's)
        manager.env_offset_size = env.config.env_offset_size
        manager._queue = None  # (the env's, read when used: an adapter may give the env a new queue)
        manager.env_id_to_offset_map = {slot: [float(v) for v in origin]
                                        for slot, origin in enumerate(slot_origins(env.env_num, env.config.env_offset_size))}
        manager._active = {}
        manager._next_env_id = 0
        return manager

    def _queue_or_none(self) -> Any:
        if self._env is None:
            return self._queue
        # A distributed env's queue lives in a Ray actor: its manager reports, it does not hand out.
        return None if self._env.is_remote else self._env.runner.queue

    @property
    def active_task_configs(self) -> dict[int, TaskCfg]:
        """``{env_id: TaskCfg}`` of the slots holding an episode (the env's, for an env's manager;
        else those :meth:`get_next` handed out)."""
        if self._env is not None:
            return self._env.active_task_configs
        return self._active

    def get_active_task_configs(self) -> dict[int, TaskCfg]:
        """``{env_id: TaskCfg}`` of the slots holding an episode (the env's, for an env's manager)."""
        return dict(self.active_task_configs)

    def get_next(self, env_id: int | None = None) -> tuple[str, Any, Any, TaskCfg | None]:
        """``(task_name, env_id, env_offset, TaskCfg)`` of the next episode, for slot ``env_id``
        (the next unused slot when ``None``); ``('', env_id, None, None)`` when the queue is empty.

        An env's manager takes the episode out of the env's queue (the env's slots go on with the
        one after) and the env records it as handed out.

        Raises:
            ValueError: ``env_id`` is not an int in ``range(env_num)``, or it is ``None`` and every
                slot was handed an episode already; nothing is taken.
            RuntimeError: the env is closed.
            TypeError: the env's next entry is not a ``TaskCfg`` (an iterator of episodes can yield
                anything); it is taken and recorded as failed, so the next call goes on after it.
        """
        if env_id is not None and (isinstance(env_id, (bool, np.bool_)) or not isinstance(env_id, (int, np.integer))
                                   or not 0 <= env_id < self.env_num):
            raise ValueError(f'get_next: env_id must be None or an env id in 0..{self.env_num - 1}; got {env_id!r}')
        if env_id is None and self._next_env_id >= self.env_num:
            raise ValueError(f'every one of the {self.env_num} env ids was handed an episode; pass the env_id to refill')
        if self._env is None:
            return self._hand_out(self._local_queue().next(), env_id)
        self._env._check_open()
        queue = self._local_queue()
        # (one call at a time, Ctrl-C held: the episode taken is recorded as handed out, never lost)
        with self._env.runner.guard.enter('get_next'):
            episode = queue.next()
            if episode is not None and episode.refused is not None:  # (not a TaskCfg: recorded as failed)
                error = TypeError(episode.refused)
                self._env.runner.results.write(failed_record(episode.index, None, episode.config.type, None, error,
                                                             attempts=1, steps=0))
                raise error
            if episode is not None:
                self._env.runner.results.write(handed_out_record(episode, self._next_env_id if env_id is None else int(env_id)))
            return self._hand_out(episode, env_id)

    def _hand_out(self, episode: Episode | None, env_id: int | None) -> tuple[str, Any, Any, TaskCfg | None]:
        """:meth:`get_next`'s answer for ``episode`` (taken, recorded where it must be)."""
        if episode is None:  # (as InternUtopia: no env id is used up)
            if env_id is not None:
                self._active.pop(int(env_id), None)
            return '', env_id if env_id is None else int(env_id), None, None
        if env_id is None:
            env_id = self._next_env_id
            self._next_env_id += 1
        env_id = int(env_id)
        if self._env is None:
            self._active[env_id] = episode.config
        return f'task_{episode.index}', env_id, self.env_id_to_offset_map.get(env_id), episode.config


def handed_out_record(episode: Episode, env_id: int) -> dict[str, Any]:
    """The results record of an episode an env's manager handed to its caller instead of a slot."""
    return {'episode_index': episode.index, 'slot': None, 'env_id': env_id, 'task_type': episode.config.type,
            'scene': episode.config.scene_asset_path, 'outcome': HANDED_OUT, 'handed_out_by': 'task_config_manager.get_next',
            'steps': 0, 'terminated': False, 'truncated': False}


__all__ = ['HANDED_OUT', 'LocalTaskConfigManager', 'handed_out_record']
