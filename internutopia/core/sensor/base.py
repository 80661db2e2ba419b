"""Sensors: add what they need to the robot's spec, then read it for all slots at once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import mujoco
import numpy as np

from internutopia.core.config import SensorCfg
from internutopia.core.registry import Registry

if TYPE_CHECKING:
    from internutopia.core.backend.mujoco.world import Pack
    from internutopia.core.robot.base import BaseRobot


class BaseSensor:
    """One sensor of one robot group."""

    registry: Registry[type['BaseSensor']] = Registry('sensor')

    def __init__(self, config: SensorCfg, robot: 'BaseRobot') -> None:
        self.config = config
        self.name = config.name
        self.robot = robot

    @classmethod
    def register(cls, name: str) -> Callable[[type['BaseSensor']], type['BaseSensor']]:
        """Class decorator registering a sensor type under ``name``."""
        return cls.registry.register(name)

    @classmethod
    def create(cls, config: SensorCfg, robot: 'BaseRobot', where: str = '') -> 'BaseSensor':
        """Instantiate the sensor class registered for ``config.type``."""
        return cls.registry.get(config.type, where)(config, robot)

    def add_to_spec(self, spec: mujoco.MjSpec) -> None:
        """Add this sensor's elements (cameras, sites, ...) to the robot's standalone spec."""

    def bind(self, world: 'Pack') -> None:
        """Look up model indices after a compile."""

    def reset(self, slots: np.ndarray) -> None:
        """Forget per-episode state of ``slots``."""

    def get_obs(self, slots: np.ndarray) -> dict[str, Any]:
        """Readings with a leading ``len(slots)`` axis."""
        return {}
