"""InternUtopia's ``internutopia.core.robot.controller``: ``BaseController`` and its factories.

``BaseController`` is this package's controller base class (:mod:`internutopia.core.controller.base`):
subclass it either way (``docs/extensions.md``). A per-slot robot's controllers are built with the
robot by the env; the factories return them.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from internutopia.core.controller.base import BaseController


def create_controllers(robot_cfg: Any, robot: Any, scene: Any) -> OrderedDict[str, BaseController]:
    """The controllers of ``robot_cfg`` of a per-slot robot object, by name, in the config's order."""
    controllers = robot.controllers
    missing = [c.name for c in robot_cfg.controllers or [] if c.name not in controllers]
    if missing:
        raise ValueError(f'robot {robot.name!r} has no controller(s) {missing}; controllers: {list(controllers)}')
    return OrderedDict((c.name, controllers[c.name]) for c in robot_cfg.controllers or [])


def inject_sub_controllers(parent: Any, configs: list[Any], robot: Any, scene: Any) -> None:
    """Give a per-slot controller object its sub-controllers (the env builds them from the config:
    a per-slot controller's ``sub_controllers`` are set already, so this only checks the names)."""
    have = [getattr(sub, 'name', None) for sub in parent.sub_controllers or []]
    missing = [c.name for c in configs if c.name not in have]
    if missing:
        raise ValueError(f'controller {parent.name!r} has no sub-controller(s) {missing}; it has {have}')


__all__ = ['BaseController', 'create_controllers', 'inject_sub_controllers']
