"""Sensors: add what they need to the robot's spec, then read it for all slots at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.backend.parts import ModelSpec
from internutopia.core.config import SensorCfg
from internutopia.core.registry import Registry

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack

#: The robot group the object belongs to (a :class:`~internutopia.core.robot.base.BaseRobot`; not
#: imported, since a robot is built from its controllers and sensors, a layer it sits on).
RobotGroup = Any


class BaseSensor:
    """One sensor of one robot group, read for every slot of the group at once.

    Classes written InternUtopia's way (one object per slot, ``get_data()``) subclass it too; the
    per-slot layer (:mod:`internutopia.per_slot`) runs them.
    """

    registry: Registry[type[BaseSensor]] = Registry('sensor')
    #: InternUtopia's name of the registry table.
    sensors = registry.table
    #: Whether ``enable=False`` in the sensor's config removes it from the robot before anything is
    #: built (so it costs nothing). Sensors that read ``enable`` themselves say ``False``.
    dropped_when_disabled: bool = True
    #: Whether the sensor draws its robot's structure from the first step (a camera): the world
    #: then compiles the structure's drawn model with its physics (``SlotPart.draws``).
    draws_structure: bool = False

    def __init__(self, config: SensorCfg, robot: RobotGroup) -> None:
        self.config = config
        self.name = config.name
        self.robot = robot

    @classmethod
    def register(cls, name: str) -> Callable[[type[BaseSensor]], type[BaseSensor]]:
        """Class decorator registering a sensor type under ``name``."""
        return cls.registry.register(name)

    @classmethod
    def create(cls, config: SensorCfg, robot: RobotGroup, where: str = '') -> BaseSensor:
        """The sensor of the type registered for ``config.type``, for every slot of ``robot``."""
        return cls.registry.maker(config.type, where)(config, robot)

    def add_to_spec(self, spec: ModelSpec) -> None:
        """Add this sensor's elements (cameras, sites, ...) to the robot's standalone spec."""

    def bind(self, world: Pack) -> None:
        """Look up model indices after a compile."""

    def reset(self, slots: np.ndarray) -> None:
        """Forget per-episode state of ``slots``."""

    def get_obs(self, slots: np.ndarray) -> dict[str, Any]:
        """Readings with a leading ``len(slots)`` axis."""
        return {}
