"""InternUtopia's per-instance controller methods, mixed into :class:`~internutopia.core.controller.base.BaseController`.

A controller object built InternUtopia's way, ``cls(config, robot, scene)``, is one slot's
controller (see :mod:`internutopia.core.controller.slot`); these are its methods.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from internutopia.core.util.slot_instances import OrderedObsMixin

if TYPE_CHECKING:
    from internutopia.core.robot.articulation_subset import ArticulationSubset


class SlotControllerMixin(OrderedObsMixin):
    # Attributes of one slot's controller (set by _init_slot), as InternUtopia's controllers have them.
    config: Any
    name: str
    scene: Any
    robot: Any
    robot_ref: Any
    sub_controllers: list[Any]
    obs_keys: list[str]

    """InternUtopia's per-instance controller methods (for objects built as ``cls(config, robot, scene)``)."""

    def _init_slot(self, config: Any, robot: Any, scene: Any) -> None:
        if config.name is None:
            raise ValueError('must specify controller name.')
        self.config = config
        self.name = config.name
        self.scene = scene
        self.robot = robot
        self.robot_ref = weakref.ref(robot)
        self.sub_controllers: list[Any] = []
        self.obs_keys: list[str] = []
        self._obs: dict[str, Any] = {}

    def action_to_control(self, action: Any) -> Any:
        """Turn one slot's action into an ``ArticulationAction`` (upstream-style controllers define it)."""
        raise NotImplementedError(f'{type(self).__name__}.action_to_control is not implemented')

    def cleanup(self) -> None:
        """Called when the slot's episode is replaced."""

    def get_joint_subset(self) -> ArticulationSubset | None:
        """The joints this controller drives: its ``joint_subset``, else its first sub-controller's."""
        if getattr(self, 'joint_subset', None) is not None:
            return self.joint_subset
        subs = getattr(self, 'sub_controllers', None)
        return subs[0].get_joint_subset() if subs else None


__all__ = ['SlotControllerMixin']
