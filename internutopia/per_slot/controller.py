"""Controllers one slot at a time: InternUtopia's controller API next to our vectorized controllers.

- An upstream-style controller class (``action_to_control(action) -> ArticulationAction``,
  built as ``cls(config, robot, scene)``) is run by a :class:`SlotControllerAdapter`: one instance
  per slot and episode; each commanded slot's action goes through its instance, and the returned
  :class:`~internutopia.per_slot.articulation_action.ArticulationAction` goes to that slot's robot.
- An upstream-style class built on a built-in controller (``class DiscreteDD(DifferentialDriveController)``
  calling ``self.forward(...)``) is run by the adapter put in front of that built-in
  (:func:`~internutopia.per_slot.style.adapter_class`): the built-in binds, resets and observes
  the slots as on its own, and the instances' default methods (:class:`SlotBuiltinController`:
  ``action_to_control``, ``get_obs``, upstream's ``forward``) command and read it for their slot.
- A built-in controller seen from one slot (a per-slot robot's ``controllers[name]``) is a
  :class:`SlotControllerView`: ``get_obs()`` is the slot's row of the controller's observation and
  ``action_to_control(action)`` commands the slot right away (returning no joint targets).

All are :class:`SlotController` objects, with InternUtopia's controller attributes.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.controller.base import BaseController
from internutopia.core.runner.failures import each_slot
from internutopia.core.util.trees import row
from internutopia.per_slot.instances import (
    OrderedObsMixin,
    adapter_preset,
    build_slot_instance,
    held_values,
    read_once,
    stale_slots,
)
from internutopia.per_slot.style import with_api
from internutopia.per_slot.upstream_forward import UPSTREAM_ATTRIBUTES, forward_action, forward_call, upstream_table

if TYPE_CHECKING:
    from internutopia.core.robot.base import BaseRobot
    from internutopia.per_slot.articulation_subset import ArticulationSubset

#: Methods only InternUtopia-style (per-slot) controller classes define (the built-in controllers
#: here have no ``forward``: a subclass overriding upstream's ``forward`` is written per slot).
PER_SLOT_CONTROLLER_METHODS = ('action_to_control', 'get_joint_subset', 'forward')
#: How a per-slot controller class is told apart (see :func:`~internutopia.per_slot.style.is_per_slot`).
CONTROLLER_MARKS = (PER_SLOT_CONTROLLER_METHODS, ('get_obs',), ('scene',))

#: ``robot_in_slot(group, slot)``: the per-slot robot object (given by the robot module, which builds on this one).
RobotInSlot = Callable[['BaseRobot', int], Any]


class SlotController(OrderedObsMixin):
    """InternUtopia's per-instance controller: one slot's controller, built as ``cls(config, robot, scene)``."""

    #: Where the class builds on a built-in controller (``class DiscreteDD(DifferentialDriveController)``),
    #: the adapter running that built-in for the robot's slots (set before ``__init__``, with
    #: ``_slot``): the default ``action_to_control`` and ``get_obs`` command and read it for this slot.
    runner_of_slot: Any = None
    #: The slot of an instance run by an adapter (set before ``__init__``).
    _slot: int = -1
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
        """Turn one slot's action into an ``ArticulationAction``: upstream-style controllers define
        it; one built on a built-in controller commands the built-in for this slot right away
        (its argument check applies) and returns no joint targets (``None``); where its class
        overrides upstream's ``forward``, the action goes to ``self.forward(...)`` as the arguments
        upstream's ``action_to_control`` of the built-in's twin makes of it (see
        :func:`~internutopia.per_slot.upstream_forward.forward_call`)."""
        runner = self.runner_of_slot
        if runner is None:
            raise NotImplementedError(f'{type(self).__name__}.action_to_control is not implemented')
        forward = getattr(type(self), 'forward', None)
        if forward is not None and forward is not SlotBuiltinController.forward:
            return forward_call(self, runner, action)
        command_slot(runner, self._slot, action)
        return None

    def get_obs(self) -> OrderedDict:
        """This slot's controller observation: none by default; the built-in's row for this slot
        for a class built on a built-in controller."""
        runner = self.runner_of_slot
        return OrderedDict() if runner is None else observe_slot(runner, self._slot)

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
        return observe_slot(self.group, self.slot)

    def action_to_control(self, action: Any) -> None:
        """Command this slot now (the controller's own argument check applies); no joint targets to return."""
        command_slot(self.group, self.slot, action)
        return None

    def forward(self, *args: Any, **kwargs: Any) -> None:
        """InternUtopia's ``forward`` of this controller, for this slot: see :func:`upstream_forward`."""
        return upstream_forward(self.group, self.slot, self.name, args, kwargs)

    def __repr__(self) -> str:
        return f'{type(self.group).__name__}({self.name!r}, env {self.slot})'


class SlotBuiltinController(SlotController):
    """The per-slot API of a class built on a built-in controller (``class DiscreteDD(DifferentialDriveController)``):
    :class:`SlotController`'s, whose default ``action_to_control`` and ``get_obs`` are the
    built-in's for the slot, plus upstream's ``forward`` of the built-in's upstream twin
    (:func:`upstream_forward`) and the attributes its ``__init__`` sets from the config (a
    differential drive's ``_wheel_base``, a move_to_point's ``forward_speed``, ...)."""

    def __init__(self, config: Any, robot: Any, scene: Any) -> None:  # noqa: D107
        super().__init__(config, robot, scene)
        runner = self.runner_of_slot
        for attribute, (source, default) in upstream_table(runner, UPSTREAM_ATTRIBUTES).items():
            value = source(runner) if callable(source) else getattr(config, source, None) if source else None
            setattr(self, attribute, default if value is None else value)

    def forward(self, *args: Any, **kwargs: Any) -> None:
        """InternUtopia's ``forward`` of the built-in's upstream twin, for this slot: see :func:`upstream_forward`."""
        return upstream_forward(self.runner_of_slot, self._slot, self.name, args, kwargs)


def controller_api(builtin: type) -> type:
    """The per-slot API of the instances of a class built on the controller class ``builtin``
    (``BaseController`` itself for a class built on nothing else)."""
    return SlotController if builtin is BaseController else SlotBuiltinController


class SlotControllerAdapter(BaseController):
    """Runs an upstream-style controller class for every slot of a robot group, one instance per slot and episode.

    Where the class builds on a built-in controller, the adapter stands in front of that built-in
    (:func:`~internutopia.per_slot.style.adapter_class`): the built-in (its sub-controllers
    included) binds, resets and observes the slots as on its own; each slot's action goes to the
    slot's instance, whose default methods command the built-in for that slot.
    """

    #: A subclass of a built-in controller is run with the built-in behind this adapter.
    runs_builtins = True
    #: The built-in controller behind (set on the class :func:`~internutopia.per_slot.style.adapter_class` makes).
    builtin_class: type | None = None

    # (A property where the base class has a class attribute: one a built-in behind sets when bound is ignored.)
    @property
    def idempotent_apply(self) -> bool:
        """Never: each slot's instance decides what an action does, on every step."""
        return False

    @idempotent_apply.setter
    def idempotent_apply(self, value: bool) -> None:
        pass  # (a built-in behind sets its own when bound; the instances' code decides here)

    def __init__(self, config: Any, robot: BaseRobot, instance_class: type[SlotController], robot_in_slot: RobotInSlot) -> None:
        super().__init__(config, robot)
        self.instance_class = instance_class
        self._robot_in_slot = robot_in_slot
        self._instances: dict[int, Any] = {}
        #: Each slot's ``get_obs()`` (or its error) with the slot's sim time: a controller is
        #: observed once a step, however many readers observe its robot (the step's observation, a metric's).
        self._observed: dict[int, tuple[float, Any, Exception | None]] = {}
        robot.add_listener(self)  # (told when a slot's state is set by hand, and when its episode is over)

    def in_slot(self, slot: int, robot: Any, scene: Any) -> Any:
        """``slot``'s instance, made with the slot's robot object ``robot`` and ``scene`` if there is none yet."""
        fresh = slot not in self._instances
        made = build_slot_instance(self._instances, slot, self.instance_class, self.config, robot, scene,
                                   preset=adapter_preset(self, slot))
        if fresh and self.sub_controllers and not made.sub_controllers:
            made.sub_controllers = [controller_in_slot(sub, slot, robot, scene) for sub in self.sub_controllers]
        return made

    def _instance(self, slot: int) -> Any:
        made = self._instances.get(slot)
        if made is None:
            robot = self._robot_in_slot(self.robot, slot)  # builds the slot's robot object, and with it this instance
            made = self._instances.get(slot)
            if made is None:  # a robot object made before this try of the episode, or one that did not take it
                made = self.in_slot(slot, robot, robot._scene)
                controllers = getattr(robot, 'controllers', None)
                if isinstance(controllers, dict) and self.name in controllers:
                    controllers[self.name] = made
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
        """Each slot's instance's ``get_obs()``, called once per slot and step (asked again in the
        same step, the same observation, or the same error; again after a state set by hand)."""
        times = self.robot.bound_world.data.time
        observed = self._observed
        listed = np.asarray(slots).tolist()
        read_once(observed, stale_slots(observed, listed, times), times, lambda slot: self._instance(slot).get_obs())
        return held_values(observed, listed)

    def state_changed(self, slot: int) -> None:
        """``slot``'s state was set by hand: observe it again when asked, even in the same step."""
        self._observed.pop(slot, None)

    def episode_ended(self, slot: int) -> None:
        """``slot``'s episode is over: its instance goes (its ``cleanup()`` is its robot's to call,
        InternUtopia's ``BaseRobot.cleanup``, once)."""
        self._instances.pop(slot, None)
        self._observed.pop(slot, None)

    def reset(self, slots: np.ndarray) -> None:
        super().reset(slots)
        for slot in np.asarray(slots).tolist():
            self.episode_ended(slot)  # (the last episode's, if its end was not told)


def _builtin(controller: BaseController) -> Any:
    """What runs ``controller``'s built-in behaviour: past the adapter's own methods for one
    behind an adapter (``super(SlotControllerAdapter, controller)``), else the controller."""
    return super(SlotControllerAdapter, controller) if isinstance(controller, SlotControllerAdapter) else controller


def command_slot(controller: BaseController, slot: int, action: Any) -> None:
    """Command the built-in ``controller`` (or the built-in behind an adapter) for ``slot`` with one
    slot's ``action``, right away (its ``parse_action`` checks it)."""
    builtin = _builtin(controller)
    parsed = builtin.parse_action(action)
    builtin.apply(np.array([slot], dtype=np.intp), builtin.batch([parsed]))


def observe_slot(controller: BaseController, slot: int) -> OrderedDict:
    """``slot``'s row of the observation of the built-in ``controller`` (or of the built-in behind an adapter)."""
    return OrderedDict(row(_builtin(controller).get_obs(np.array([slot], dtype=np.intp)), 0))


def upstream_forward(controller: BaseController, slot: int, name: str, args: tuple, kwargs: dict[str, Any]) -> None:
    """InternUtopia's ``forward(...)`` of the built-in ``controller``'s upstream twin, for ``slot``:
    it commands the slot right away, as the built-in computes it, and returns no joint targets
    (``None``), so an ``action_to_control`` may return what it returns (see
    :func:`~internutopia.per_slot.upstream_forward.forward_action` for the arguments each takes)."""
    action = forward_action(controller, slot, name, args, kwargs)
    if action is not None:
        command_slot(controller, slot, action)


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


__all__ = ['PER_SLOT_CONTROLLER_METHODS', 'SlotBuiltinController', 'SlotController', 'SlotControllerAdapter', 'SlotControllerView',
           'apply_control', 'command_slot', 'controller_api', 'controller_in_slot', 'create_controllers',
           'inject_sub_controllers', 'observe_slot', 'upstream_forward']
