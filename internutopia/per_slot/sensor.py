"""Sensors one slot at a time: InternUtopia's sensor API next to our vectorized sensors.

- An upstream-style sensor class (``get_data()``, built as ``cls(config, robot, scene)``) is run by
  a :class:`SlotSensorAdapter`: one instance per slot and episode; ``obs[robot]['sensors'][name]``
  is its ``get_data()``.
- A built-in sensor seen from one slot (a per-slot robot's ``sensors[name]``) is a
  :class:`SlotSensorView` (:class:`SlotCameraView`, an :class:`~internutopia.per_slot.camera.ICamera`,
  for cameras): ``get_data()`` is the slot's row of the sensor's observation.

Both are :class:`SlotSensor` objects, with InternUtopia's sensor attributes.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.sensor.base import BaseSensor
from internutopia.core.util.trees import row
from internutopia.per_slot.camera import ICamera
from internutopia.per_slot.instances import OrderedObsMixin, build_slot_instance
from internutopia.per_slot.style import with_api

if TYPE_CHECKING:
    from internutopia.core.robot.base import BaseRobot

#: Methods only InternUtopia-style (per-slot) sensor classes define.
PER_SLOT_SENSOR_METHODS = ('get_data', 'post_reset', 'restore_sensor_info')
#: How a per-slot sensor class is told apart (see :func:`~internutopia.per_slot.style.is_per_slot`).
SENSOR_MARKS = (PER_SLOT_SENSOR_METHODS, (), ('scene',))

#: ``robot_in_slot(group, slot)``: the per-slot robot object (given by the robot module, which builds on this one).
RobotInSlot = Callable[['BaseRobot', int], Any]


class SlotSensor(OrderedObsMixin):
    """InternUtopia's per-instance sensor: ``get_data()`` is what ``obs[robot]['sensors'][name]`` shows."""

    name: str
    config: Any
    obs_keys: list[str]

    def __init__(self, config: Any, robot: Any, scene: Any) -> None:
        if config.name is None:
            raise ValueError('must specify sensor name.')
        self.name = config.name
        self.config = config
        self._scene = scene
        self._robot = robot
        self.robot = robot
        self.obs_keys: list[str] = []

    def get_data(self) -> Any:
        """This slot's reading (upstream-style sensors define it)."""
        raise NotImplementedError(f'{type(self).__name__}.get_data is not implemented')

    def post_reset(self) -> None:
        """Called once the episode's start state is in place."""

    def restore_sensor_info(self) -> None:
        """Nothing to restore: resetting one slot leaves every other slot's state as it was."""

    def cleanup(self) -> None:
        """Called when the slot's episode is replaced."""


# (A base made by a call, which mypy cannot follow: SlotSensor's API in front of BaseSensor.)
class SlotSensorView(with_api(SlotSensor, BaseSensor)):  # type: ignore[misc]
    """A built-in (vectorized) sensor ``group`` seen from ``slot``."""

    def __init__(self, group: BaseSensor, slot: int, robot: Any, scene: Any) -> None:  # noqa: D107
        SlotSensor.__init__(self, group.config, robot, scene)
        self.group = group
        self._camera = group
        self.slot = int(slot)
        self.env_id = self.slot
        self.offset = np.asarray(scene.origin, dtype=float)

    def get_data(self) -> OrderedDict:
        return OrderedDict(row(self.group.get_obs(np.array([self.slot], dtype=np.intp)), 0))

    def __repr__(self) -> str:
        return f'{type(self.group).__name__}({self.name!r}, env {self.slot})'


class SlotCameraView(SlotSensorView, ICamera):
    """A built-in camera seen from one slot: :class:`SlotSensorView` plus :class:`ICamera`."""


class SlotSensorAdapter(BaseSensor):
    """Runs an upstream-style sensor class for every slot of a robot group, one instance per slot and episode."""

    #: InternUtopia builds every configured sensor; a sensor class whose config has ``enable`` reads it itself.
    dropped_when_disabled = False

    def __init__(self, config: Any, robot: BaseRobot, instance_class: type[SlotSensor], robot_in_slot: RobotInSlot) -> None:
        super().__init__(config, robot)
        self.instance_class = instance_class
        self._robot_in_slot = robot_in_slot
        self._instances: dict[int, Any] = {}
        #: Each slot's ``get_data()`` (or its error) with the slot's sim time: a sensor is read once
        #: a step, however many readers observe its robot (the step's observation, a metric's).
        self._read: dict[int, tuple[float, Any, Exception | None]] = {}

    def in_slot(self, slot: int, robot: Any, scene: Any) -> Any:
        """``slot``'s instance, made with the slot's robot object ``robot`` and ``scene`` if there is none yet."""
        return build_slot_instance(self._instances, slot, self.instance_class, self.config, robot, scene)

    def get_obs(self, slots: np.ndarray) -> Any:
        times = self.robot.bound_world.data.time
        read = self._read
        out = []
        for slot in np.asarray(slots).tolist():
            time = float(times[slot])
            held = read.get(slot)
            if held is None or held[0] != time:
                try:
                    self._robot_in_slot(self.robot, slot)  # builds the slot's sensor instance with the robot's
                    held = (time, self._instances[slot].get_data(), None)
                except Exception as exc:  # (kept: asked again this step, the same error, no second call)
                    held = (time, None, exc)
                read[slot] = held
            if held[2] is not None:
                raise held[2]
            out.append(held[1])
        return out

    def forget(self, slot: int) -> None:
        """``slot``'s state was set by hand: read it again when asked, even in the same step."""
        self._read.pop(slot, None)

    def reset(self, slots: np.ndarray) -> None:
        for slot in np.asarray(slots).tolist():
            self._read.pop(slot, None)
            old = self._instances.pop(slot, None)
            if old is not None:
                old.cleanup()


def sensor_in_slot(sensor: BaseSensor, slot: int, robot: Any, scene: Any) -> Any:
    """Sensor ``sensor`` (of a robot group) as one slot's sensor object (an ``ICamera`` for cameras)."""
    if isinstance(sensor, SlotSensorAdapter):
        return sensor.in_slot(slot, robot, scene)
    view_class = SlotCameraView if hasattr(sensor, 'camera_pose') else SlotSensorView
    return view_class(sensor, slot, robot, scene)


def create_sensors(robot_cfg: Any, robot: Any, scene: Any) -> OrderedDict[str, Any]:
    """The enabled sensors of ``robot_cfg`` of a per-slot robot object, by name, in the config's
    order (InternUtopia's ``internutopia.core.sensor.sensor.create_sensors``)."""
    sensors = robot.sensors
    return OrderedDict((s.name, sensors[s.name]) for s in robot_cfg.sensors or [] if s.name in sensors)


__all__ = ['PER_SLOT_SENSOR_METHODS', 'SlotCameraView', 'SlotSensor', 'SlotSensorAdapter', 'SlotSensorView',
           'create_sensors', 'sensor_in_slot']
