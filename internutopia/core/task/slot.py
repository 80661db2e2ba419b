"""Tasks one slot at a time: InternUtopia's task API next to our vectorized tasks.

- An upstream-style task class (``cls(config, scene)`` with ``is_done()``, ``get_observations()``,
  ``calculate_metrics()``) is run by a :class:`SlotTaskAdapter`, a vectorized task holding one
  instance per slot and episode: every step it asks each instance ``is_done()`` (``terminated``),
  its reward's ``calc()`` (``reward``) and ``get_observations()`` (the slot's observation), and its
  ``calculate_metrics()`` when the episode ends.
- A built-in task seen from one slot (``env.runner.current_tasks[name]``) is a
  :class:`SlotTaskView` with the same attributes (``robots``, ``objects``, ``config``, ``metrics``,
  ``steps``...).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.task.base import BaseTask
from internutopia.core.view import EnvView


def task_name(view: EnvView, slot: int) -> str:
    """The name of ``slot``'s current episode in ``current_tasks`` (unique in the run)."""
    return f'task_{view.episode_index(slot)}'


def _overrides(instance: Any, name: str) -> bool:
    method = getattr(type(instance), name, None)
    return method is not None and method is not getattr(BaseTask, name, None)


class SlotTaskAdapter(BaseTask):
    """Runs the upstream-style task class ``slot_class`` in every slot whose episode is of its type."""

    #: The instances compute their reward (their ``self.reward``); the env adds none.
    handles_reward = True
    #: Observations are per-slot dicts, not arrays (``step_arrays`` cannot serve this task).
    observes_per_slot = True

    def __init__(self, view: EnvView, slot_class: type) -> None:
        super().__init__(view)
        self.slot_class = slot_class
        self.instances: dict[int, Any] = {}

    def reset_slot(self, slot: int, config: Any) -> None:
        from internutopia.core.task.slot_scene import SlotScene

        super().reset_slot(slot, config)
        old = self.instances.pop(slot, None)
        if old is not None:
            old.cleanup()
        scene = SlotScene(self.view, slot)
        instance = self.slot_class.__new__(self.slot_class)
        self.slot_class.__init__(instance, config, scene)
        instance.set_up_runtime(task_name(self.view, slot), slot, scene.env_offset)
        instance.set_up_scene(scene)
        instance.post_reset()
        self.instances[slot] = instance

    def step(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        reward = np.zeros(len(slots))
        terminated = np.zeros(len(slots), dtype=bool)
        steps = self.view.steps
        for row, slot in enumerate(np.asarray(slots).tolist()):
            instance = self.instances[slot]
            instance.steps = int(steps[slot])
            terminated[row] = bool(instance.is_done())
            if instance.reward is not None:
                value = instance.reward.calc()
                reward[row] = float(value) if value is not None else 0.0
        return reward, terminated, np.zeros(len(slots), dtype=bool)

    def get_observations(self, slots: np.ndarray | None = None) -> Any:
        if slots is None:
            raise TypeError('get_observations(slots) of a task adapter needs the slots')
        return [self.instances[slot].get_observations() for slot in np.asarray(slots).tolist()]

    def episode_metrics(self, slot: int, metrics: dict[str, Any]) -> Any:
        """The metrics recorded for the episode ending in ``slot``: the instance's
        ``calculate_metrics()`` when its class defines one, else ``metrics`` (the env's)."""
        instance = self.instances.get(slot)
        if instance is not None and _overrides(instance, 'calculate_metrics'):
            return instance.calculate_metrics()
        return metrics

    def slot_task(self, slot: int) -> Any:
        return self.instances[slot]


class SlotTaskView(BaseTask):
    """A built-in task's episode in one slot, with InternUtopia's task attributes and methods."""

    def __init__(self, task: BaseTask, slot: int) -> None:  # noqa: D107
        from internutopia.core.task.slot_scene import SlotScene

        view = task.view
        scene = SlotScene(view, slot)
        self._init_slot(view.task_config(slot), scene)
        self.group = task
        self.slot = int(slot)
        self.set_up_runtime(task_name(view, slot), slot, scene.env_offset)

    def is_done(self) -> bool:
        """Whether the slot's episode has ended (the slot is no longer running it)."""
        return int(self.slot) not in self.group.view.active_slots().tolist()

    def get_observations(self, slots: Any = None) -> dict[str, Any]:
        """The slot's observation, as a step returns it (robots, and the task's own entries)."""
        out = self.group.view.slot(self.slot).robot_observations()
        slot_array = np.array([self.slot], dtype=np.intp)
        extra = self.group.get_observations(slot_array)
        if extra:
            from internutopia.core.util.trees import row

            out.update(row(extra, 0))
        return out

    def __repr__(self) -> str:
        return f'{type(self.group).__name__}({self.name!r}, env {self.slot})'


__all__ = ['SlotTaskAdapter', 'SlotTaskView', 'task_name']
