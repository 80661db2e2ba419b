"""Controllers one slot at a time: InternUtopia's controller API next to our vectorized controllers.

- An upstream-style controller class (``action_to_control(action) -> ArticulationAction``,
  built as ``cls(config, robot, scene)``) is run by a :class:`SlotControllerAdapter`: one instance
  per slot and episode; each commanded slot's action goes through its instance, and the returned
  :class:`~internutopia.core.robot.articulation_action.ArticulationAction` goes to that slot's robot.
- A built-in controller seen from one slot (a per-slot robot's ``controllers[name]``) is a
  :class:`SlotControllerView`: ``get_obs()`` is the slot's row of the controller's observation and
  ``action_to_control(action)`` commands the slot right away (returning no joint targets).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.controller.base import BaseController
from internutopia.core.util.slot_instances import build_slot_instance

if TYPE_CHECKING:
    from internutopia.core.robot.base import BaseRobot


class SlotControllerView(BaseController):
    """A built-in (vectorized) controller ``group`` seen from ``slot``; see the module docstring."""

    def __init__(self, group: BaseController, slot: int, robot: Any, scene: Any) -> None:  # noqa: D107
        self._init_slot(group.config, robot, scene)
        self.group = group
        self.slot = int(slot)
        self.sub_controllers = [sub.slot_view(slot, robot, scene) for sub in group.sub_controllers]

    def get_obs(self, slots: Any = None) -> Any:
        from internutopia.core.util.trees import row

        if slots is not None:
            return self.group.get_obs(slots)
        return OrderedDict(row(self.group.get_obs(np.array([self.slot], dtype=np.intp)), 0))

    def action_to_control(self, action: Any) -> None:
        """Command this slot now (the controller's own argument check applies); no joint targets to return."""
        parsed = self.group.parse_action(action)
        self.group.apply(np.array([self.slot], dtype=np.intp), self.group.batch([parsed]))
        return None

    def __repr__(self) -> str:
        return f'{type(self.group).__name__}({self.name!r}, env {self.slot})'


class SlotControllerAdapter(BaseController):
    """Runs an upstream-style controller class for every slot of a robot group, one instance per slot and episode."""

    def __init__(self, config: Any, robot: BaseRobot, slot_class: type) -> None:
        super().__init__(config, robot)
        self.slot_class = slot_class
        self._instances: dict[int, Any] = {}

    def slot_view(self, slot: int, robot: Any, scene: Any) -> Any:
        fresh = slot not in self._instances
        instance = build_slot_instance(self._instances, slot, self.slot_class, self.config, robot, scene)
        if fresh and self.sub_controllers and not instance.sub_controllers:
            instance.sub_controllers = [sub.slot_view(slot, robot, scene) for sub in self.sub_controllers]
        return instance

    def _instance(self, slot: int) -> Any:
        instance = self._instances.get(slot)
        if instance is None:
            self.robot.slot_instance(slot)  # builds the slot's robot object, and with it this controller's instance
            instance = self._instances.get(slot)
            if instance is None:  # an upstream-style robot that did not take this controller
                robot = self.robot.slot_instance(slot)
                instance = self.slot_view(slot, robot, robot._scene)
        return instance

    def parse_action(self, action: Any) -> Any:
        return action  # the instance's action_to_control checks it, as in InternUtopia

    def batch(self, parsed: list[Any]) -> list[Any]:
        return list(parsed)

    def parse_batch(self, actions: Any) -> list[Any]:
        return list(actions)

    def apply(self, slots: np.ndarray, batch: Any) -> None:
        for slot, action in zip(np.asarray(slots).tolist(), batch, strict=True):
            control = self._instance(slot).action_to_control(action)
            if control is not None:
                self.robot.slot_instance(slot).articulation.apply_action(control)

    def get_obs(self, slots: np.ndarray) -> Any:
        return [self._instance(slot).get_obs() for slot in np.asarray(slots).tolist()]

    def reset(self, slots: np.ndarray) -> None:
        super().reset(slots)
        for slot in np.asarray(slots).tolist():
            old = self._instances.pop(slot, None)
            if old is not None:
                old.cleanup()


__all__ = ['SlotControllerAdapter', 'SlotControllerView']
