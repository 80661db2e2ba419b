"""Tasks: one object per task type, holding per-slot state in arrays indexed by slot id.

``reset_slot`` runs when a slot takes an episode (per slot, rare); ``step`` runs every env step
for all active slots of this task type at once and returns reward, terminated and truncated
arrays. A task's reward comes from its config's ``reward`` (a :class:`BaseReward`) when it has one.
A task reads the env through its :class:`~internutopia.core.view.EnvView` (``self.view``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from internutopia.core.config import TaskCfg
from internutopia.core.registry import Registry
from internutopia.core.task.slot_api import SlotTaskMixin
from internutopia.core.view import EnvView

#: Methods only InternUtopia-style (per-slot) task classes define.
PER_SLOT_TASK_METHODS = ('is_done', 'calculate_metrics', 'set_up_scene', 'load', 'pre_step', 'post_reset', 'set_up_runtime')


class BaseTask(SlotTaskMixin):
    """All slots currently running episodes of one task type.

    ``BaseTask(view)`` serves every slot of its type (this package's tasks); ``BaseTask(config,
    scene)`` is one slot's episode, InternUtopia's way (upstream-style subclasses, run by
    :class:`~internutopia.core.task.slot.SlotTaskAdapter`).

    Args:
        view: what the task sees of the env (slots, their robots and objects, step counts).

    Attributes:
        view: the :class:`~internutopia.core.view.EnvView` given at construction.
        env_num: number of env slots (length of per-slot arrays).
        configs: the ``TaskCfg`` of each slot's episode of this task, by slot (``None`` elsewhere).
    """

    registry: Registry[type[BaseTask]] = Registry('task')
    #: InternUtopia's name of the registry table.
    tasks = registry.table
    #: Whether the task computes the reward of its config's ``reward`` itself (else the env does).
    handles_reward = False

    def __init__(self, view: Any, scene: Any = None) -> None:
        if scene is not None:  # InternUtopia's signature (config, scene): one slot's episode
            self._init_slot(view, scene)
            return
        self.view = view
        self.env_num = view.env_num
        self.configs: list[TaskCfg | None] = [None] * self.env_num

    @classmethod
    def register(cls, name: str) -> Callable[[type[BaseTask]], type[BaseTask]]:
        """Class decorator registering a task type under ``name``."""
        return cls.registry.register(name)

    @classmethod
    def create(cls, type_name: str, view: EnvView, where: str = '') -> BaseTask:
        """The task object serving ``type_name`` episodes (an upstream-style class runs through a
        per-slot adapter)."""
        from internutopia.core.extension_style import is_per_slot

        task_class = cls.registry.get(type_name, where)
        if is_per_slot(task_class, BaseTask, PER_SLOT_TASK_METHODS, ('get_observations',)):
            from internutopia.core.task.slot import SlotTaskAdapter

            return SlotTaskAdapter(view, task_class)
        return task_class(view)

    def slot_task(self, slot: int) -> Any:
        """``slot``'s episode as InternUtopia's per-slot task object (kept until the slot's next episode)."""
        views = self.__dict__.setdefault('_slot_views', {})
        key = (slot, self.view.episode_index(slot))
        task = views.get(slot)
        if task is None or task[0] != key:
            from internutopia.core.task.slot import SlotTaskView

            task = views[slot] = (key, SlotTaskView(self, slot))
        return task[1]

    def reset_slot(self, slot: int, config: TaskCfg) -> None:
        """Start ``config``'s episode in ``slot`` (robots are already at their start poses)."""
        self.configs[slot] = config

    def step(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Reward (float), terminated and truncated (bool) arrays, shape (len(slots),), after a physics step."""
        zeros = np.zeros(len(slots))
        return zeros, zeros.astype(bool), zeros.astype(bool)

    def get_observations(self, slots: np.ndarray | None = None) -> dict[str, Any]:
        """Task-level observations (e.g. the goal), arrays with a leading ``len(slots)`` axis.

        One slot's episode (called without ``slots``): ``{robot_name: robot.get_obs()}`` of its robots.
        """
        if slots is None:
            obs = {}
            for name, robot in self.robots.items():
                robot_obs = robot.get_obs()
                if robot_obs:
                    obs[name] = robot_obs
            return obs
        return {}
