"""``import_extensions``: import every built-in module, so each registers its types."""

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
