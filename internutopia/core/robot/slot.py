"""Robots one slot at a time: InternUtopia's robot API on top of our vectorized robot groups.

Two kinds of per-slot robot object exist, both made by a robot group
(:meth:`BaseRobot.slot_instance <internutopia.core.robot.base.BaseRobot.slot_instance>`) for one
slot and episode:

- an instance of an upstream-style robot class (``class MyH1(H1Robot)`` with
  ``__init__(self, config, scene)``, ``apply_action(action)``, ``get_obs()``): the group runs the
  physics (the model, controllers and sensors of the nearest built-in class), the instance decides
  what an action does and what the robot observes;
- a view of a built-in robot in one slot (what ``env.runner.current_tasks[...].robots[name]`` and
  upstream-style tasks, controllers and sensors see).

Either way the object has InternUtopia's attributes: ``name``, ``config``, ``articulation`` (an
:class:`~internutopia.core.robot.articulation.IArticulation`), ``controllers`` and ``sensors`` (per
slot, by name) and the methods below.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.robot.articulation import IArticulation
from internutopia.core.util.slot_instances import OrderedObsMixin

if TYPE_CHECKING:
    from internutopia.core.robot.base import BaseRobot
    from internutopia.core.robot.rigid_body import IRigidBody


class SlotRobotMixin(OrderedObsMixin):
    """InternUtopia's per-instance robot methods, for robot objects of one slot (see the module docstring)."""

    _slot_group: BaseRobot | None = None
    _slot: int = -1
    # Attributes of one slot's robot (set by _init_slot), as InternUtopia's robots have them.
    name: str
    config: Any
    articulation: IArticulation
    controllers: OrderedDict
    sensors: OrderedDict
    obs_keys: list[str]

    @property
    def per_slot(self) -> bool:
        """Whether this object is one slot's robot (not a vectorized group)."""
        return self._slot_group is not None

    def _init_slot(self, config: Any, scene: Any) -> None:
        """Set up this object as the robot ``config`` of the scene's slot (called by ``__init__``)."""
        group = self._slot_group
        if group is None:
            raise ValueError(f'{type(self).__name__}(config, scene) is built by the env, one per slot and episode, from '
                             'the robot config of the episode (see docs/extensions.md); it cannot be made directly')
        self.name = config.name
        self.config = config
        self._scene = scene
        self.env_num = group.env_num
        self.obs_keys: list[str] = []
        self._rigid_body_map: dict[str, IRigidBody] = {}
        self.articulation = IArticulation(group, self._slot, origin=scene.origin)
        self.controllers = OrderedDict((name, c.slot_view(self._slot, self, scene)) for name, c in group.controllers.items())
        self.sensors = OrderedDict((name, s.slot_view(self._slot, self, scene)) for name, s in group.sensors.items())

    # -- InternUtopia's API --------------------------------------------------------------------
    def apply_action(self, action: dict[str, Any]) -> None:
        """Send each ``{controller_name: args}`` entry to that controller (unknown names are skipped
        with a warning, as in InternUtopia)."""
        for controller_name, controller_action in action.items():
            controller = self.controllers.get(controller_name)
            if controller is None:
                warnings.warn(f'robot {self.name!r} in env {self._slot}: unknown controller {controller_name!r} in the '
                              f'action is ignored; controllers: {list(self.controllers)}', stacklevel=2)
                continue
            control = controller.action_to_control(controller_action)
            if control is not None:
                self.articulation.apply_action(control)

    def _slot_obs(self) -> dict[str, Any]:
        """This slot's row of the group's observation (position, orientation, joints, controllers, sensors)."""
        return self._slot_group.slot_row(self._slot)

    def _get_controllers_and_sensors_obs(self) -> tuple[OrderedDict, OrderedDict]:
        """``(controller observations, sensor data)`` of this slot, by name."""
        controllers = OrderedDict((name, c.get_obs()) for name, c in self.controllers.items())
        sensors = OrderedDict((name, s.get_data()) for name, s in self.sensors.items())
        return controllers, sensors

    def get_robot_base(self) -> IRigidBody:
        """The robot's base body (its ``position``/``orientation``)."""
        return self.articulation.base()

    def get_robot_scale(self) -> np.ndarray:
        """The robot's scale, ``(1, 1, 1)`` (robots are not scaled here; see ``RobotCfg.scale``)."""
        return np.asarray(self.config.scale if self.config.scale is not None else (1.0, 1.0, 1.0), dtype=float)

    def get_robot_articulation(self) -> IArticulation:
        """The robot's :class:`IArticulation`."""
        return self.articulation

    def get_controllers(self) -> OrderedDict:
        """The robot's controllers in this slot, by name."""
        return self.controllers

    def get_rigid_bodies(self) -> list[IRigidBody]:
        """The robot's bodies (after :meth:`create_rigid_bodies`)."""
        return list(self._rigid_body_map.values())

    def create_rigid_bodies(self) -> None:
        """Look up every body of the robot's model as an :class:`IRigidBody`."""
        from internutopia.core.robot.rigid_body import IRigidBody

        group = self._slot_group
        model = group.world.model
        prefix = f'{group.name}/'
        for body in range(model.nbody):
            name = model.body(body).name
            if name.startswith(prefix):
                local = name[len(prefix):]
                self._rigid_body_map[name] = IRigidBody(group, self._slot, local, origin=self._scene.origin, name=name)

    def clean_stale_rigid_bodies(self) -> None:
        """Nothing is stale here: a slot's bodies live as long as its episode."""

    def set_up_to_scene(self, scene: Any) -> None:
        """Nothing to set up: the env placed the robot in its slot from the config."""
        self._scene = scene

    def save_robot_info(self) -> None:
        """Nothing to save: resetting one slot leaves every other slot's state as it was."""

    def restore_robot_info(self) -> None:
        """Nothing to restore (see :meth:`save_robot_info`)."""

    def post_reset(self) -> None:
        """Called once the episode's start state is in place: the sensors' ``post_reset``."""
        for sensor in self.sensors.values():
            hook = getattr(sensor, 'post_reset', None)
            if hook is not None:
                hook()

    def cleanup(self) -> None:
        """Called when the slot's episode is replaced: the controllers' and sensors' ``cleanup``."""
        for part in (*self.controllers.values(), *self.sensors.values()):
            hook = getattr(part, 'cleanup', None)
            if hook is not None:
                hook()


class SlotActionSink:
    """Takes the action entries of a robot run by an upstream-style class and hands each slot's
    ``{controller_name: args}`` to that slot's instance (``apply_action``), in the step's command phase."""

    def __init__(self, group: BaseRobot) -> None:
        self.group = group
        self.name = f'{group.name} (per-slot robot)'

    def parse_action(self, action: Any) -> Any:
        """InternUtopia's robots take ``{controller_name: args}``; anything else is a ``ValueError``."""
        if not isinstance(action, dict):
            raise ValueError(f'robot {self.group.name!r} takes a dict {{controller_name: args}}; got {type(action).__name__}')
        return action

    def batch(self, parsed: list[Any]) -> list[Any]:
        return list(parsed)

    def apply(self, slots: np.ndarray, actions: list[Any]) -> None:
        for slot, action in zip(slots.tolist(), actions, strict=True):
            # Each slot gets its own dict: scripts often send one object to every slot.
            self.group.slot_instance(slot).apply_action(dict(action))


__all__ = ['SlotActionSink', 'SlotRobotMixin']
