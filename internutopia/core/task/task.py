"""InternUtopia's ``internutopia.core.task.task``: ``BaseTask`` and ``create_task``.

``BaseTask`` is this package's task base class (:mod:`internutopia.core.task.base`): subclass it
either way (``docs/extensions.md``).
"""

from __future__ import annotations

from typing import Any

from internutopia.core.task.base import PER_SLOT_TASK_METHODS, BaseTask


def create_task(config: Any, scene: Any) -> BaseTask:
    """The per-slot task object of ``config`` in the scene's slot.

    An upstream-style task class is instantiated (``cls(config, scene)``); for a task of this
    package the slot's running episode of that type is returned.

    Raises:
        ValueError: the slot runs no episode of ``config.type`` and the class is not upstream-style.
    """
    from internutopia.core.extension_style import is_per_slot

    task_class = BaseTask.registry.get(config.type)
    if is_per_slot(task_class, BaseTask, PER_SLOT_TASK_METHODS, ('get_observations',)):
        return task_class(config, scene)
    task = scene.view.task(scene.slot)
    if task is None or type(task) is not task_class:
        raise ValueError(f'env {scene.slot} runs no {config.type} episode: tasks of this package are created by the '
                         'env from task_configs (reset), not by create_task')
    return task.slot_task(scene.slot)


__all__ = ['BaseTask', 'create_task']
