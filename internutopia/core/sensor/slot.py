"""Sensors one slot at a time: InternUtopia's sensor API next to our vectorized sensors.

- An upstream-style sensor class (``get_data()``, built as ``cls(config, robot, scene)``) is run by
  a :class:`SlotSensorAdapter`: one instance per slot and episode; ``obs[robot]['sensors'][name]``
  is its ``get_data()``.
- A built-in sensor seen from one slot (a per-slot robot's ``sensors[name]``) is a
  :class:`SlotSensorView` (:class:`SlotCameraView`, an :class:`~internutopia.core.sensor.camera.ICamera`,
  for cameras): ``get_data()`` is the slot's row of the sensor's observation.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.sensor.base import BaseSensor
from internutopia.core.sensor.camera import ICamera
from internutopia.core.util.slot_instances import build_slot_instance

if TYPE_CHECKING:
    from internutopia.core.robot.base import BaseRobot


class SlotSensorView(BaseSensor):
    """A built-in (vectorized) sensor ``group`` seen from ``slot``."""

    def __init__(self, group: BaseSensor, slot: int, robot: Any, scene: Any) -> None:  # noqa: D107
        self._init_slot(group.config, robot, scene)
        self.group = group
        self._camera = group
        self.slot = int(slot)
        self.env_id = self.slot
        self.offset = np.asarray(scene.origin, dtype=float)

    def get_data(self) -> OrderedDict:
        from internutopia.core.util.trees import row

        return OrderedDict(row(self.group.get_obs(np.array([self.slot], dtype=np.intp)), 0))

    def get_obs(self, slots: Any = None) -> Any:
        return self.get_data() if slots is None else self.group.get_obs(slots)

    def __repr__(self) -> str:
        return f'{type(self.group).__name__}({self.name!r}, env {self.slot})'


class SlotCameraView(SlotSensorView, ICamera):
    """A built-in camera seen from one slot: :class:`SlotSensorView` plus :class:`ICamera`."""


class SlotSensorAdapter(BaseSensor):
    """Runs an upstream-style sensor class for every slot of a robot group, one instance per slot and episode."""

    def __init__(self, config: Any, robot: BaseRobot, slot_class: type) -> None:
        super().__init__(config, robot)
        self.slot_class = slot_class
        self._instances: dict[int, Any] = {}

    def slot_view(self, slot: int, robot: Any, scene: Any) -> Any:
        return build_slot_instance(self._instances, slot, self.slot_class, self.config, robot, scene)

    def get_obs(self, slots: np.ndarray) -> Any:
        out = []
        for slot in np.asarray(slots).tolist():
            self.robot.slot_instance(slot)  # builds the slot's sensor instance with the robot's
            out.append(self._instances[slot].get_data())
        return out

    def reset(self, slots: np.ndarray) -> None:
        for slot in np.asarray(slots).tolist():
            old = self._instances.pop(slot, None)
            if old is not None:
                old.cleanup()


__all__ = ['SlotCameraView', 'SlotSensorAdapter', 'SlotSensorView']
