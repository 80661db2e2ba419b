"""Controllers one slot at a time: InternUtopia's controller API next to our vectorized controllers.

- An upstream-style controller class (``action_to_control(action) -> ArticulationAction``,
  built as ``cls(config, robot, scene)``) is run by a :class:`SlotControllerAdapter`: one instance
  per slot and episode; each commanded slot's action goes through its instance, and the returned
  :class:`~internutopia.per_slot.articulation_action.ArticulationAction` goes to that slot's robot.
- A built-in controller seen from one slot (a per-slot robot's ``controllers[name]``) is a
  :class:`SlotControllerView`: ``get_obs()`` is the slot's row of the controller's observation and
  ``action_to_control(action)`` commands the slot right away (returning no joint targets).

Both are :class:`SlotController` objects, with InternUtopia's controller attributes.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.controller.base import BaseController, BaseVelocityController
from internutopia.core.runner.failures import each_slot
from internutopia.core.util.trees import row
from internutopia.per_slot.instances import OrderedObsMixin, build_slot_instance
from internutopia.per_slot.style import with_api

if TYPE_CHECKING:
    from internutopia.core.robot.base import BaseRobot
    from internutopia.per_slot.articulation_subset import ArticulationSubset

#: Methods only InternUtopia-style (per-slot) controller classes define.
PER_SLOT_CONTROLLER_METHODS = ('action_to_control', 'get_joint_subset')
#: How a per-slot controller class is told apart (see :func:`~internutopia.per_slot.style.is_per_slot`).
CONTROLLER_MARKS = (PER_SLOT_CONTROLLER_METHODS, ('get_obs',), ('scene',))

#: ``robot_in_slot(group, slot)``: the per-slot robot object (given by the robot module, which builds on this one).
RobotInSlot = Callable[['BaseRobot', int], Any]


class SlotController(OrderedObsMixin):
    """InternUtopia's per-instance controller: one slot's controller, built as ``cls(config, robot, scene)``."""

    config: Any
    name: str
    scene: Any
    robot: Any
    robot_ref: Any
    sub_controllers: list[Any]
    obs_keys: list[str]

    def __init__(self, config: Any, robot: Any, scene: Any) -> None:
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

    def get_obs(self) -> OrderedDict:
        """This slot's controller observation (none by default)."""
        return OrderedDict()

    def cleanup(self) -> None:
        """Called when the slot's episode is replaced."""

    def get_joint_subset(self) -> ArticulationSubset | None:
        """The joints this controller drives: its ``joint_subset``, else its first sub-controller's."""
        subset = getattr(self, 'joint_subset', None)  # set by controllers that have one
        if subset is not None:
            return subset
        subs = getattr(self, 'sub_controllers', None)
        return subs[0].get_joint_subset() if subs else None


# (A base made by a call, which mypy cannot follow: SlotController's API in front of BaseController.)
class SlotControllerView(with_api(SlotController, BaseController)):  # type: ignore[misc]
    """A built-in (vectorized) controller ``group`` seen from ``slot``; see the module docstring."""

    def __init__(self, group: BaseController, slot: int, robot: Any, scene: Any) -> None:  # noqa: D107
        SlotController.__init__(self, group.config, robot, scene)
        self.group = group
        self.slot = int(slot)
        self.sub_controllers = [controller_in_slot(sub, slot, robot, scene) for sub in group.sub_controllers]

    def get_obs(self) -> OrderedDict:
        return OrderedDict(row(self.group.get_obs(np.array([self.slot], dtype=np.intp)), 0))

    def action_to_control(self, action: Any) -> None:
        """Command this slot now (the controller's own argument check applies); no joint targets to return."""
        parsed = self.group.parse_action(action)
        self.group.apply(np.array([self.slot], dtype=np.intp), self.group.batch([parsed]))
        return None

    def forward(self, forward_speed: float = 0.0, rotation_speed: float = 0.0, lateral_speed: float = 0.0,
                *args: Any, **kwargs: Any) -> None:
        """InternUtopia's ``forward`` of a move-by-speed controller (the differential drive's, H1's,
        G1's): drive this slot's base at ``forward_speed`` (m/s), ``rotation_speed`` (rad/s) and
        ``lateral_speed`` (m/s; ignored by a robot that cannot move sideways) from now on. It
        commands the slot right away and returns no joint targets (``None``), so a composite
        controller's ``action_to_control`` may return what it returns. Further arguments of
        upstream's signatures (a G1's ``height``, ...) are accepted and change nothing.

        Raises:
            AttributeError: the controller is not a move-by-speed controller (upstream's other
                controllers' ``forward`` take poses and paths: use ``action_to_control(action)``).
        """
        group = self.group
        if not isinstance(group, BaseVelocityController):
            raise AttributeError(f'{type(group).__name__} {self.name!r} has no forward() here (only move-by-speed '
                                 'controllers do); command it with action_to_control(action)')
        speeds = np.array([[forward_speed, lateral_speed, rotation_speed]], dtype=float)
        if not np.all(np.isfinite(speeds)):
            raise ValueError(f'{self.name!r}.forward: speeds must be finite numbers; got {speeds[0].tolist()}')
        group.apply_base_velocity(np.array([self.slot], dtype=np.intp), speeds)
        return None

    def __repr__(self) -> str:
        return f'{type(self.group).__name__}({self.name!r}, env {self.slot})'


class SlotControllerAdapter(BaseController):
    """Runs an upstream-style controller class for every slot of a robot group, one instance per slot and episode."""

    def __init__(self, config: Any, robot: BaseRobot, instance_class: type[SlotController], robot_in_slot: RobotInSlot) -> None:
        super().__init__(config, robot)
        self.instance_class = instance_class
        self._robot_in_slot = robot_in_slot
        self._instances: dict[int, Any] = {}

    def in_slot(self, slot: int, robot: Any, scene: Any) -> Any:
        """``slot``'s instance, made with the slot's robot object ``robot`` and ``scene`` if there is none yet."""
        fresh = slot not in self._instances
        made = build_slot_instance(self._instances, slot, self.instance_class, self.config, robot, scene)
        if fresh and self.sub_controllers and not made.sub_controllers:
            made.sub_controllers = [controller_in_slot(sub, slot, robot, scene) for sub in self.sub_controllers]
        return made

    def _instance(self, slot: int) -> Any:
        made = self._instances.get(slot)
        if made is None:
            robot = self._robot_in_slot(self.robot, slot)  # builds the slot's robot object, and with it this instance
            made = self._instances.get(slot)
            if made is None:  # an upstream-style robot that did not take this controller
                made = self.in_slot(slot, robot, robot._scene)
        return made

    def parse_action(self, action: Any) -> Any:
        return action  # the instance's action_to_control checks it, as in InternUtopia

    def batch(self, parsed: list[Any]) -> list[Any]:
        return list(parsed)

    def parse_batch(self, actions: Any) -> list[Any]:
        return list(actions)

    def apply(self, slots: np.ndarray, batch: Any) -> None:
        def one(index: int, slot: int) -> None:
            control = self._instance(slot).action_to_control(batch[index])
            if control is not None:
                apply_control(self._robot_in_slot(self.robot, slot).articulation, control, self.name)

        each_slot(slots, one)

    def get_obs(self, slots: np.ndarray) -> Any:
        return [self._instance(slot).get_obs() for slot in np.asarray(slots).tolist()]

    def reset(self, slots: np.ndarray) -> None:
        super().reset(slots)
        for slot in np.asarray(slots).tolist():
            old = self._instances.pop(slot, None)
            if old is not None:
                old.cleanup()


def apply_control(articulation: Any, control: Any, controller_name: Any) -> None:
    """``articulation.apply_action(control)``, a ``ValueError`` (a bad target) naming the controller
    that returned ``control``."""
    try:
        articulation.apply_action(control)
    except ValueError as exc:
        raise ValueError(f'controller {controller_name!r}: {exc}') from None


def controller_in_slot(controller: BaseController, slot: int, robot: Any, scene: Any) -> Any:
    """Controller ``controller`` (of a robot group) as one slot's controller object; ``robot`` is that slot's robot object."""
    if isinstance(controller, SlotControllerAdapter):
        return controller.in_slot(slot, robot, scene)
    return SlotControllerView(controller, slot, robot, scene)


def create_controllers(robot_cfg: Any, robot: Any, scene: Any) -> OrderedDict[str, Any]:
    """The controllers of ``robot_cfg`` of a per-slot robot object, by name, in the config's order
    (InternUtopia's ``internutopia.core.robot.controller.create_controllers``)."""
    controllers = robot.controllers
    missing = [c.name for c in robot_cfg.controllers or [] if c.name not in controllers]
    if missing:
        raise ValueError(f'robot {robot.name!r} has no controller(s) {missing}; controllers: {list(controllers)}')
    return OrderedDict((c.name, controllers[c.name]) for c in robot_cfg.controllers or [])


def inject_sub_controllers(parent: Any, configs: list[Any], robot: Any, scene: Any) -> None:
    """Give a per-slot controller object its sub-controllers (the env builds them from the config:
    a per-slot controller's ``sub_controllers`` are set already, so this only checks the names)."""
    have = [getattr(sub, 'name', None) for sub in parent.sub_controllers or []]
    missing = [c.name for c in configs if c.name not in have]
    if missing:
        raise ValueError(f'controller {parent.name!r} has no sub-controller(s) {missing}; it has {have}')


__all__ = ['PER_SLOT_CONTROLLER_METHODS', 'SlotController', 'SlotControllerAdapter', 'SlotControllerView', 'apply_control',
           'controller_in_slot', 'create_controllers', 'inject_sub_controllers']
