"""InternUtopia's data hub, kept in this process: episode-finished flags, the latest observations
and actions by task name, and the chat, chain-of-thought and log messages a task posts.

InternUtopia's hub feeds its web UI (which can mark an episode finished or send chat messages);
there is no web UI here, so nothing outside the process writes to it: a flag is set only by a
script or task that calls :meth:`DataHub.set_episode_finished`. Tasks written for InternUtopia
that poll it (InternManip's manipulation task asks ``get_episode_finished`` in ``is_done``) run
unchanged.

>>> DataHub.get_episode_finished('episode_0')
False
>>> DataHub.set_episode_finished('episode_0'); DataHub.get_episode_finished('episode_0')
True
>>> DataHub.clear(); DataHub.get_episode_finished('episode_0')
False
"""

from __future__ import annotations

import datetime
import itertools
import threading
from typing import Any, ClassVar


def _now() -> str:
    return datetime.datetime.now().strftime('%H:%M')


class DataHub:
    """Class-level store (InternUtopia calls every method on the class)."""

    sim_remote = False
    chat_remote = False
    remote_address = ''

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _finished: ClassVar[set[str]] = set()
    _obs: ClassVar[dict[str, dict[str, Any]]] = {}
    _actions: ClassVar[dict[str, dict[str, Any]]] = {}
    _chat: ClassVar[dict[str | None, list[dict[str, Any]]]] = {}
    _log: ClassVar[dict[str | None, list[dict[str, Any]]]] = {}
    _thoughts: ClassVar[dict[str | None, list[list[dict[str, Any]]]]] = {}
    _task_ids: ClassVar[itertools.count] = itertools.count()

    @classmethod
    def datahub_init(cls, remote: str = '127.0.0.1:9000') -> None:
        """Kept for InternUtopia's scripts: the hub is local here (``remote`` is only recorded)."""
        cls.remote_address = remote

    # -- episodes ------------------------------------------------------------------------------
    @classmethod
    def get_episode_finished(cls, task_name: str) -> bool:
        """Whether ``task_name`` was marked finished."""
        return task_name in cls._finished

    @classmethod
    def set_episode_finished(cls, task_name: str) -> None:
        """Mark ``task_name`` finished."""
        with cls._lock:
            cls._finished.add(task_name)

    @classmethod
    def gen_task_idx(cls) -> str:
        """A new task index (``'0'``, ``'1'``, ... in this process)."""
        return str(next(cls._task_ids))

    # -- observations and actions --------------------------------------------------------------
    @classmethod
    def get_obs_data(cls) -> dict[str, dict[str, Any]]:
        """The latest observations, by task name."""
        return dict(cls._obs)

    @classmethod
    def set_obs_data(cls, obs: dict[str, dict[str, Any]]) -> None:
        """Replace the observations of the tasks in ``obs`` (by task name)."""
        with cls._lock:
            cls._obs.update(obs)

    @classmethod
    def get_obs_by_task_name(cls, task_name: str) -> dict[str, Any]:
        """The latest observation of ``task_name`` (``{}`` if none)."""
        return cls._obs.get(task_name, {})

    @classmethod
    def set_obs_by_task_name(cls, task_name: str, obs: dict[str, Any]) -> None:
        with cls._lock:
            cls._obs[task_name] = obs

    @classmethod
    def get_obs_by_task_name_and_robot_name(cls, task_name: str, robot_name: str) -> dict[str, Any]:
        return cls._obs.get(task_name, {}).get(robot_name, {})

    @classmethod
    def set_obs_by_task_name_and_robot_name(cls, task_name: str, robot_name: str, obs: dict[str, Any]) -> None:
        with cls._lock:
            cls._obs.setdefault(task_name, {})[robot_name] = obs

    @classmethod
    def get_actions_by_task_name(cls, task_name: str) -> dict[str, Any]:
        """The latest actions posted for ``task_name`` (``{}`` if none)."""
        return cls._actions.get(task_name, {})

    @classmethod
    def set_actions(cls, actions: dict[str, Any]) -> None:
        """Post actions, by task name."""
        with cls._lock:
            cls._actions.update(actions)

    # -- messages ------------------------------------------------------------------------------
    @classmethod
    def send_chain_of_thought(cls, cot: Any, task_name: str | None) -> None:
        """Record a chain of thought (each item a text entry, after a time entry)."""
        entry = [{'type': 'time', 'value': _now()}, *({'type': 'text', 'value': item} for item in cot)]
        with cls._lock:
            cls._thoughts.setdefault(task_name, []).append(entry)

    @classmethod
    def send_chat_control(cls, nickname: str, text: str, img: str | None = None, role: str = 'user',
                          task_name: str | None = None, at: list[str] | None = None, parent_idx: int = -1) -> None:
        """Record a chat message."""
        message = {'type': role, 'name': nickname, 'time': _now(), 'message': text, 'photo': None, 'img': img,
                   'at': at, 'parent_idx': parent_idx}
        with cls._lock:
            cls._chat.setdefault(task_name, []).append(message)

    @classmethod
    def get_chat_control(cls, task_name: str | None, read_idx: int) -> list[dict[str, Any]]:
        """Chat messages of ``task_name`` from index ``read_idx`` on."""
        return list(cls._chat.get(task_name, [])[read_idx:])

    @classmethod
    def send_log_data(cls, log_data: str, log_type: str = 'message', user: str = 'Bob', photo_url: str | None = None,
                      task_name: str | None = None) -> None:
        """Record a log line (``log_type`` 'message' or 'user'; other types are ignored, as upstream)."""
        if log_type == 'message':
            entry: dict[str, Any] = {'type': 'message', 'message': log_data}
        elif log_type == 'user':
            entry = {'type': 'user', 'name': user, 'time': _now(), 'message': log_data, 'photo': photo_url}
        else:
            return
        with cls._lock:
            cls._log.setdefault(task_name, []).append(entry)

    @classmethod
    def get_log_data(cls, task_name: str | None) -> list[dict[str, Any]]:
        return list(cls._log.get(task_name, []))

    @classmethod
    def clear(cls, uuid: str = 'none') -> None:
        """Forget everything (``uuid`` is accepted for InternUtopia's signature)."""
        with cls._lock:
            for store in (cls._finished, cls._obs, cls._actions, cls._chat, cls._log, cls._thoughts):
                store.clear()


__all__ = ['DataHub']
