"""Robots, controllers, sensors, tasks, metrics and objects for internutopia, and their configs.

:func:`import_extensions` registers every built-in type. ``vec_env.Env`` and ``Config.from_yaml``
run it through this package's ``internutopia.extensions`` entry point
(:func:`internutopia.core.plugins.load_extensions`); scripts written for InternUtopia call it
themselves, which still works.
"""

from __future__ import annotations

import importlib

_MODULES = (
    'internutopia_extension.controllers',
    'internutopia_extension.sensors',
    'internutopia_extension.robots',
    'internutopia_extension.tasks',
    'internutopia_extension.metrics',
    'internutopia_extension.objects',
    'internutopia_extension.rewards',
    'internutopia_extension.configs',
)


def import_extensions() -> None:
    """Register every built-in robot, controller, sensor, task, metric, object and reward type."""
    for module in _MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


__all__ = ['import_extensions']
