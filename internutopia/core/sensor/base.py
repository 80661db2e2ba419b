"""Sensors: add what they need to the robot's spec, then read it for all slots at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from internutopia.core.config import SensorCfg
from internutopia.core.registry import Registry
from internutopia.core.sensor.slot_api import SlotSensorMixin

if TYPE_CHECKING:
    from internutopia.core.backend.mujoco.world import Pack
    from internutopia.core.robot.base import BaseRobot


#: Methods only InternUtopia-style (per-slot) sensor classes define.
PER_SLOT_SENSOR_METHODS = ('get_data', 'post_reset', 'restore_sensor_info')


class BaseSensor(SlotSensorMixin):
    """One sensor of one robot group.

    ``BaseSensor(config, robot)`` is a sensor of a robot group (this package's);
    ``BaseSensor(config, robot, scene)`` is one slot's sensor, InternUtopia's way (upstream-style
    subclasses; see :mod:`internutopia.core.sensor.slot`).
    """

    registry: Registry[type[BaseSensor]] = Registry('sensor')
    #: InternUtopia's name of the registry table.
    sensors = registry.table

    def __init__(self, config: SensorCfg, robot: BaseRobot, scene: Any = None) -> None:
        if scene is not None:  # InternUtopia's signature: one slot's sensor
            self._init_slot(config, robot, scene)
            return
        self.config = config
        self.name = config.name
        self.robot = robot

    @classmethod
    def register(cls, name: str) -> Callable[[type[BaseSensor]], type[BaseSensor]]:
        """Class decorator registering a sensor type under ``name``."""
        return cls.registry.register(name)

    @classmethod
    def create(cls, config: SensorCfg, robot: BaseRobot, where: str = '') -> BaseSensor:
        """Instantiate the sensor class registered for ``config.type`` (an upstream-style one runs
        through a per-slot adapter)."""
        from internutopia.core.extension_style import is_per_slot

        sensor_class = cls.registry.get(config.type, where)
        if is_per_slot(sensor_class, BaseSensor, PER_SLOT_SENSOR_METHODS):
            from internutopia.core.sensor.slot import SlotSensorAdapter

            return SlotSensorAdapter(config, robot, sensor_class)
        return sensor_class(config, robot)

    def slot_view(self, slot: int, robot: Any, scene: Any) -> Any:
        """This sensor as one slot's sensor object (an ``ICamera`` for cameras)."""
        from internutopia.core.sensor.slot import SlotCameraView, SlotSensorView

        view_class = SlotCameraView if hasattr(self, 'camera_pose') else SlotSensorView
        return view_class(self, slot, robot, scene)

    def add_to_spec(self, spec: mujoco.MjSpec) -> None:
        """Add this sensor's elements (cameras, sites, ...) to the robot's standalone spec."""

    def bind(self, world: Pack) -> None:
        """Look up model indices after a compile."""

    def reset(self, slots: np.ndarray) -> None:
        """Forget per-episode state of ``slots``."""

    def get_obs(self, slots: np.ndarray) -> dict[str, Any]:
        """Readings with a leading ``len(slots)`` axis."""
        return {}
