"""Sensors one slot at a time: InternUtopia's sensor API next to our vectorized sensors.

- An upstream-style sensor class (``get_data()``, built as ``cls(config, robot, scene)``) is run by
  a :class:`SlotSensorAdapter`: one instance per slot and episode; ``obs[robot]['sensors'][name]``
  is its ``get_data()``.
- An upstream-style class built on a built-in sensor (``class GrayCam(RepCamera)`` calling
  ``super().get_data()``) is run by the adapter put in front of that built-in
  (:func:`~internutopia.per_slot.style.adapter_class`): the built-in reads the robot's slots as it
  would on its own, and the instances' default ``get_data()`` is its reading for their slot. On a
  built-in camera the instances are also the slot's :class:`~internutopia.per_slot.camera.ICamera`
  and have upstream ``RepCamera``'s methods (:class:`SlotCameraSensor`).
- A built-in sensor seen from one slot (a per-slot robot's ``sensors[name]``) is a
  :class:`SlotSensorView` (:class:`SlotCameraView`, an :class:`~internutopia.per_slot.camera.ICamera`,
  for cameras): ``get_data()`` is the slot's row of the sensor's observation.

All are :class:`SlotSensor` objects, with InternUtopia's sensor attributes.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.sensor.base import BaseSensor
from internutopia.core.util.trees import row
from internutopia.per_slot.building import BUILDING, SlotRobotContext
from internutopia.per_slot.camera import ICamera
from internutopia.per_slot.instances import (
    OrderedObsMixin,
    adapter_preset,
    build_slot_instance,
    held_values,
    read_once,
    stale_slots,
)
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

    #: Where the class builds on a built-in sensor (``class GrayCam(RepCamera)``), the adapter
    #: running that built-in for the robot's slots (set before ``__init__``, with ``_slot``): the
    #: default ``get_data()`` is the built-in's reading for this slot.
    runner_of_slot: Any = None
    #: The slot of an instance run by an adapter (set before ``__init__``).
    _slot: int = -1
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
        """This slot's reading: upstream-style sensors define it; one built on a built-in sensor
        gets the built-in's reading for this slot (what ``super().get_data()`` reaches)."""
        runner = self.runner_of_slot
        if runner is None:
            raise NotImplementedError(f'{type(self).__name__}.get_data is not implemented')
        return runner.builtin_reading(self._slot)

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
        return builtin_reading(self.group, self.slot)

    def __repr__(self) -> str:
        return f'{type(self.group).__name__}({self.name!r}, env {self.slot})'


class SlotCameraView(SlotSensorView, ICamera):
    """A built-in camera seen from one slot: :class:`SlotSensorView` plus :class:`ICamera`."""


class SlotCameraSensor(SlotSensor, ICamera):
    """The per-slot API of a class built on a built-in camera (``class GrayCam(RepCamera)``):
    :class:`SlotSensor`'s, the slot's :class:`ICamera` (``get_rgba()``, ``get_camera_params()``,
    poses; read from the built-in, whatever the class's own ``get_data()`` adds) and upstream
    ``RepCamera``'s: ``get_camera_data()`` (the built-in's reading, as ``get_data()`` by default),
    ``resolution`` and ``_camera`` (the slot's ``ICamera``, as upstream's ``post_reset`` makes it)."""

    def __init__(self, config: Any, robot: Any, scene: Any) -> None:  # noqa: D107
        super().__init__(config, robot, scene)
        resolution = getattr(config, 'resolution', None)
        self.resolution = tuple(resolution) if resolution is not None else (64, 64)
        self.env_id = self._slot
        self.offset = np.asarray(scene.origin, dtype=float)
        self._camera = self._slot_camera()

    def _slot_camera(self) -> Any:
        runner = self.runner_of_slot
        return SlotCameraView(runner, self._slot, self._robot, self._scene) if runner is not None else None

    def get_camera_data(self) -> OrderedDict:
        """The built-in camera's reading for this slot (upstream ``RepCamera.get_camera_data``)."""
        return self.runner_of_slot.builtin_reading(self._slot)

    def restore_sensor_info(self) -> None:
        """Upstream remakes the camera here: the slot's ``ICamera`` again."""
        self._camera = self._slot_camera()

    def _reading(self) -> dict[str, Any]:
        return self.runner_of_slot.builtin_reading(self._slot)

    def _sensor(self) -> Any:
        return self.runner_of_slot

    def get_camera_params(self) -> dict[str, Any] | None:
        return self.runner_of_slot.camera_params(self._slot)

    def _env_pose(self) -> tuple[np.ndarray, np.ndarray]:
        return self.runner_of_slot.camera_pose(self._slot)

    def _set_env_pose(self, position: np.ndarray | None, orientation: np.ndarray | None) -> None:
        self.runner_of_slot.set_camera_pose(self._slot, position, orientation)


def sensor_api(builtin: type) -> type:
    """The per-slot API of the instances of a class built on the sensor class ``builtin``
    (``BaseSensor`` itself for a class built on nothing else)."""
    return SlotCameraSensor if is_camera(builtin) else SlotSensor


def is_camera(sensor: Any) -> bool:
    """Whether ``sensor`` (a sensor or its class) is a camera: one slot of it is an ``ICamera``."""
    return hasattr(sensor, 'camera_pose')


class SlotSensorAdapter(BaseSensor):
    """Runs an upstream-style sensor class for every slot of a robot group, one instance per slot and episode.

    Where the class builds on a built-in sensor, the adapter stands in front of that built-in
    (:func:`~internutopia.per_slot.style.adapter_class`): the built-in adds to the robot's model,
    binds, resets and reads the slots as on its own, and :meth:`builtin_reading` is its reading
    of one slot (the instances' default ``get_data()``).
    """

    #: A subclass of a built-in sensor is run with the built-in behind this adapter.
    runs_builtins = True
    #: The built-in sensor behind (set on the class :func:`~internutopia.per_slot.style.adapter_class` makes).
    builtin_class: type | None = None
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
        #: The built-in's rows of the slots being read now (read for them at once, then each
        #: slot's instance takes its own: one batch of pictures for a camera's slots).
        self._prefetched: dict[int, Any] = {}
        robot.add_listener(self)  # (told when a slot's state is set by hand, and when its episode is over)

    def in_slot(self, slot: int, robot: Any, scene: Any) -> Any:
        """``slot``'s instance, made with the slot's robot object ``robot`` and ``scene`` if there is none yet."""
        return build_slot_instance(self._instances, slot, self.instance_class, self.config, robot, scene,
                                   preset=adapter_preset(self, slot))

    def _instance(self, slot: int) -> Any:
        """``slot``'s instance, made now if the slot has none (its robot object builds it with its own)."""
        made = self._instances.get(slot)
        if made is not None:
            return made
        robot = self._robot_in_slot(self.robot, slot)  # builds the slot's sensor instance with the robot's
        made = self._instances.get(slot)
        if made is None:
            # The robot object was made before this try of the episode (a retried start), or did
            # not take this sensor: a new instance, in the robot's sensors, started as the robot was.
            made = self.in_slot(slot, robot, robot._scene)
            sensors = getattr(robot, 'sensors', None)
            if isinstance(sensors, dict) and self.name in sensors:
                sensors[self.name] = made
            if getattr(robot, '_slot_started', False):
                token = BUILDING.set(SlotRobotContext(self.robot, int(slot), robot._scene.origin))
                try:
                    made.post_reset()
                finally:
                    BUILDING.reset(token)
        return made

    def get_obs(self, slots: np.ndarray) -> Any:
        times = self.robot.bound_world.data.time
        read = self._read
        listed = np.asarray(slots).tolist()
        todo = stale_slots(read, listed, times)
        if todo:
            if self.builtin_class is not None:
                self._prefetch(todo)
            try:
                read_once(read, todo, times, lambda slot: self._instance(slot).get_data())
            finally:
                self._prefetched.clear()
        return held_values(read, listed)

    def _prefetch(self, slots: list[int]) -> None:
        """Read the built-in for ``slots`` at once; where that raises, each slot reads alone
        (in its instance's ``get_data()``: a slot's error is its own)."""
        try:
            tree = super().get_obs(np.array(slots, dtype=np.intp))
        except Exception:
            return
        self._prefetched = {slot: row(tree, index) for index, slot in enumerate(slots)}

    def builtin_reading(self, slot: int) -> OrderedDict:
        """The built-in sensor's reading of ``slot`` now (what :class:`SlotSensorView` gives for a
        built-in sensor): the instances' default ``get_data()``."""
        held = self._prefetched.pop(slot, None)
        if held is None:
            held = row(super().get_obs(np.array([slot], dtype=np.intp)), 0)
        return OrderedDict(held)

    def forget(self, slot: int) -> None:
        """``slot``'s state was set by hand: read it again when asked, even in the same step."""
        self._read.pop(slot, None)

    def state_changed(self, slot: int) -> None:
        """Told by the robot's group (a listener): :meth:`forget`."""
        self.forget(slot)

    def episode_ended(self, slot: int) -> None:
        """``slot``'s episode is over: its instance goes (its ``cleanup()`` is its robot's to call,
        InternUtopia's ``BaseRobot.cleanup``, once)."""
        self._instances.pop(slot, None)
        self._read.pop(slot, None)

    def reset(self, slots: np.ndarray) -> None:
        super().reset(slots)  # (the built-in behind's)
        for slot in np.asarray(slots).tolist():
            self.episode_ended(slot)  # (the last episode's, if its end was not told)


def sensor_in_slot(sensor: BaseSensor, slot: int, robot: Any, scene: Any) -> Any:
    """Sensor ``sensor`` (of a robot group) as one slot's sensor object (an ``ICamera`` for cameras)."""
    if isinstance(sensor, SlotSensorAdapter):
        return sensor.in_slot(slot, robot, scene)
    view_class = SlotCameraView if is_camera(sensor) else SlotSensorView
    return view_class(sensor, slot, robot, scene)


def builtin_reading(sensor: BaseSensor, slot: int) -> OrderedDict:
    """The reading of ``slot`` by the built-in sensor ``sensor`` (of one behind an adapter, the
    built-in's, not the per-slot class's ``get_data()``)."""
    if isinstance(sensor, SlotSensorAdapter):
        return sensor.builtin_reading(slot)
    return OrderedDict(row(sensor.get_obs(np.array([slot], dtype=np.intp)), 0))


def create_sensors(robot_cfg: Any, robot: Any, scene: Any) -> OrderedDict[str, Any]:
    """The enabled sensors of ``robot_cfg`` of a per-slot robot object, by name, in the config's
    order (InternUtopia's ``internutopia.core.sensor.sensor.create_sensors``)."""
    sensors = robot.sensors
    return OrderedDict((s.name, sensors[s.name]) for s in robot_cfg.sensors or [] if s.name in sensors)


__all__ = ['PER_SLOT_SENSOR_METHODS', 'SlotCameraSensor', 'SlotCameraView', 'SlotSensor', 'SlotSensorAdapter', 'SlotSensorView',
           'builtin_reading', 'create_sensors', 'is_camera', 'sensor_api', 'sensor_in_slot']
