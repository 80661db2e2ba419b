"""InternUtopia's ``internutopia.core.sensor.sensor``: ``BaseSensor`` and its factory.

``BaseSensor`` is this package's sensor base class (:mod:`internutopia.core.sensor.base`):
subclass it either way (``docs/extensions.md``).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from internutopia.core.sensor.base import BaseSensor


def create_sensors(robot_cfg: Any, robot: Any, scene: Any) -> OrderedDict[str, BaseSensor]:
    """The enabled sensors of ``robot_cfg`` of a per-slot robot object, by name, in the config's order."""
    sensors = robot.sensors
    return OrderedDict((s.name, sensors[s.name]) for s in robot_cfg.sensors or [] if s.name in sensors)


__all__ = ['BaseSensor', 'create_sensors']
