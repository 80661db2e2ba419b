"""What Gymnasium's ``call``/``get_attr``/``set_attr`` see of one sub-environment (env slot) of a vector env."""

from __future__ import annotations

from typing import Any, Protocol

from internutopia.core.config import TaskCfg
from internutopia.core.vec_env import Env as InternVecEnv

__all__ = ['SlotOwner', 'SlotView']


class SlotOwner(Protocol):
    """What a :class:`SlotView` reads of its vector env (:class:`~internutopia.core.gym_vector.VectorEnv`)."""

    @property
    def vec_env(self) -> InternVecEnv:
        """The ``vec_env.Env`` whose slots are the sub-environments."""
        ...

    #: The robot the spaces are built for.
    robot_name: str


class SlotView:
    """What ``get_attr``/``call``/``set_attr`` see of one sub-environment (env slot).

    Read-only: ``slot``, ``task_config`` (the running episode's ``TaskCfg``), ``episode_index``,
    ``steps`` (env steps of the running episode, physics steps), ``robot_name``. Any other attribute
    can be set with ``set_attr`` and read back with ``get_attr``.
    """

    _READ_ONLY = ('slot', 'task_config', 'episode_index', 'steps', 'robot_name')
    _env: SlotOwner
    _slot: int

    def __init__(self, env: SlotOwner, slot: int) -> None:
        object.__setattr__(self, '_env', env)
        object.__setattr__(self, '_slot', slot)

    @property
    def slot(self) -> int:
        """The slot index."""
        return self._slot

    @property
    def task_config(self) -> TaskCfg | None:
        """The running (or just finished) episode's config."""
        episode = self._env.vec_env.runner.episodes[self._slot]
        return episode.config if episode is not None else None

    @property
    def episode_index(self) -> int:
        """Index of the running episode in the episode stream (since the last restart)."""
        episode = self._env.vec_env.runner.episodes[self._slot]
        return episode.index if episode is not None else -1

    @property
    def steps(self) -> int:
        """Physics steps the running episode has taken."""
        return int(self._env.vec_env.runner.steps[self._slot])

    @property
    def robot_name(self) -> str:
        """The robot the spaces are built for."""
        return self._env.robot_name

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._READ_ONLY:
            raise AttributeError(f'{name!r} of a sub-environment is read-only')
        object.__setattr__(self, name, value)
