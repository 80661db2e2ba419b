"""InternUtopia's ``internutopia.core.robot.robot``: ``BaseRobot`` and the per-slot robot factories.

``BaseRobot`` is this package's robot base class (:mod:`internutopia.core.robot.base`): subclass
it, or a built-in robot, either way (``docs/extensions.md``). The factories give the robots of an
env slot as InternUtopia's per-slot objects; the env builds them, so they look them up.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from internutopia.core.robot.base import BaseRobot


def create_robots(task_config: Any, scene: Any) -> OrderedDict[str, BaseRobot]:
    """The robots of ``task_config`` in the scene's slot, as per-slot robot objects, by name.

    Raises:
        ValueError: a robot of the config is not in the slot (the slot runs another episode).
    """
    robots = scene.view.robots(scene.slot)
    out: OrderedDict[str, BaseRobot] = OrderedDict()
    for robot in task_config.robots:
        group = robots.get(robot.name)
        if group is None:
            raise ValueError(f'env {scene.slot} has no robot {robot.name!r}; robots: {sorted(robots)}')
        out[robot.name] = group.slot_instance(scene.slot)
    return out


def init_robots(task_config: Any, scene: Any) -> OrderedDict[str, BaseRobot]:
    """The same as :func:`create_robots`."""
    return create_robots(task_config, scene)


__all__ = ['BaseRobot', 'create_robots', 'init_robots']
