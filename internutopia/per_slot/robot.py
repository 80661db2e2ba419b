"""Robots one slot at a time: InternUtopia's robot API on top of our vectorized robot groups.

Two kinds of per-slot robot object exist, both made for one slot and episode by
:func:`robot_in_slot`:

- an instance of an upstream-style robot class (``class MyH1(H1Robot)`` with
  ``__init__(self, config, scene)``, ``apply_action(action)``, ``get_obs()``). Its robot group is a
  :class:`SlotRobotGroup`: the nearest built-in class runs the physics (model, controllers and
  sensors) for every slot, and each slot's instance decides what an action does and what the
  robot observes;
- a view of a built-in robot in one slot (what ``env.runner.current_tasks[...].robots[name]`` and
  upstream-style tasks, controllers and sensors see).

Either way the object is a :class:`SlotRobot`, with InternUtopia's attributes: ``name``,
``config``, ``articulation`` (an :class:`~internutopia.per_slot.articulation.IArticulation`),
``controllers`` and ``sensors`` (per slot, by name) and the methods below.
"""

from __future__ import annotations

import functools
import warnings
import weakref
from collections import OrderedDict
from typing import Any

import numpy as np

from internutopia.core.robot.base import BaseRobot
from internutopia.core.util.trees import row
from internutopia.per_slot.articulation import IArticulation
from internutopia.per_slot.building import BUILDING, SlotRobotContext
from internutopia.per_slot.controller import apply_control, controller_in_slot
from internutopia.per_slot.instances import OrderedObsMixin, warn_cleanup_error
from internutopia.per_slot.model import ModelRobot
from internutopia.per_slot.rigid_body import IRigidBody
from internutopia.per_slot.robot_episode import built_robots_start, end_robot, start_robot
from internutopia.per_slot.robot_group import SlotActionSink, SlotRobotGroup, build_robot
from internutopia.per_slot.sensor import sensor_in_slot
from internutopia.per_slot.style import instance_class, is_per_slot, vectorized_base, with_api
from internutopia.per_slot.wheeled import slot_articulation

#: Methods only InternUtopia-style (per-slot) robot classes define.
PER_SLOT_ROBOT_METHODS = ('apply_action', 'get_robot_base', 'get_robot_scale', 'set_up_to_scene', 'get_rigid_bodies')
#: How a per-slot robot class is told apart (see :func:`~internutopia.per_slot.style.is_per_slot`).
ROBOT_MARKS = (PER_SLOT_ROBOT_METHODS, ('get_obs',), ('scene',))


class SlotRobot(OrderedObsMixin):
    """InternUtopia's per-instance robot, for robot objects of one slot (see the module docstring).

    Built by :func:`robot_in_slot` (``__init__(config, scene)`` runs with the slot's group and id set).
    """

    _slot_group: BaseRobot | None = None
    _slot: int = -1
    #: Whether the episode's ``post_reset`` ran (see :func:`~internutopia.per_slot.robot_episode.start_robot`).
    _slot_started: bool = False
    #: Whether the episode is over for this object: its ``cleanup`` ran, or its task's ran (see :func:`end_robot`).
    _slot_ended: bool = False
    # Set by __init__, as InternUtopia's robots have them.
    name: str
    config: Any
    articulation: IArticulation
    controllers: OrderedDict
    sensors: OrderedDict
    obs_keys: list[str]

    def __init__(self, config: Any, scene: Any) -> None:
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
        # (a WheeledArticulation for a robot that names its wheel joints: the Jetbot's)
        self.articulation = slot_articulation(group, self._slot, origin=scene.origin)
        self.create_rigid_bodies()  # (before the parts, which may be bodies: the Franka's ``end_effector``)
        for part_name, part in self.articulation_parts().items():  # e.g. the Franka's ``articulation.gripper``
            setattr(self.articulation, part_name, part)
        self.controllers = OrderedDict((name, controller_in_slot(c, self._slot, self, scene)) for name, c in group.controllers.items())
        self.sensors = OrderedDict((name, sensor_in_slot(s, self._slot, self, scene)) for name, s in group.sensors.items())

    # -- InternUtopia's API --------------------------------------------------------------------
    def apply_action(self, action: dict[str, Any]) -> None:
        """Send each ``{controller_name: args}`` entry to that controller (unknown names are skipped
        with a warning, as in InternUtopia); anything but a dict is a ``ValueError``."""
        if not isinstance(action, dict):
            raise ValueError(f'robot {self.name!r} in env {self._slot} takes a dict {{controller_name: args}}; got '
                             f'{type(action).__name__} (an upstream-style robot class that takes other actions '
                             'defines its own apply_action)')
        for controller_name, controller_action in action.items():
            controller = self.controllers.get(controller_name)
            if controller is None:
                warnings.warn(f'robot {self.name!r} in env {self._slot}: unknown controller {controller_name!r} in the '
                              f'action is ignored; controllers: {list(self.controllers)}', stacklevel=2)
                continue
            control = controller.action_to_control(controller_action)
            if control is not None:
                apply_control(self.articulation, control, controller_name)

    #: (read by :class:`~internutopia.per_slot.robot_group.SlotActionSink`: this apply_action needs a dict)
    apply_action.takes_controller_dict = True  # type: ignore[attr-defined]

    def get_obs(self) -> dict[str, Any]:
        """This slot's row of the group's observation (position, orientation, joints, controllers,
        sensors); upstream-style classes override it to decide what their robot observes."""
        group = self._slot_group
        assert group is not None  # __init__ checked
        return slot_row(group, self._slot)

    def _get_controllers_and_sensors_obs(self) -> tuple[OrderedDict, OrderedDict]:
        """``(controller observations, sensor data)`` of this slot, by name."""
        controllers = OrderedDict((name, c.get_obs()) for name, c in self.controllers.items())
        sensors = OrderedDict((name, s.get_data()) for name, s in self.sensors.items())
        return controllers, sensors

    def articulation_parts(self) -> dict[str, Any]:
        """Parts InternUtopia's articulation of this robot has beyond joints (a Franka's ``gripper``),
        by attribute name; the robot's ``upstream_methods`` provide them. Set after the rigid
        bodies are looked up (``_rigid_body_map``) and before the controllers are built, which
        look them up."""
        return {}

    def get_robot_base(self) -> IRigidBody:
        """The robot's base body (its ``position``/``orientation``)."""
        return self.articulation.base()

    def get_robot_scale(self) -> np.ndarray:
        """The robot's ``config.scale`` (``(1, 1, 1)`` when ``None``), as InternUtopia's robots give it."""
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
        """Look up every body of the robot's model as an :class:`IRigidBody`, keyed as InternUtopia
        keys them: by prim path, the robot's ``prim_path`` (``config.prim_path``, or ``/<name>``)
        and the body's name (``'/h1/torso_link'``). Done when the robot is built; again here."""
        group = self._slot_group
        assert group is not None  # __init__ checked
        prefix = f'{group.name}/'
        root = (self.config.prim_path or f'/{self.name}').rstrip('/')
        for name in group.bound_world.lookup.names('body'):
            if name.startswith(prefix):
                local = name[len(prefix):]
                self._rigid_body_map[f'{root}/{local}'] = IRigidBody(group, self._slot, local, origin=self._scene.origin,
                                                                     name=name)

    def get_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """The robot base's env-local position ``(3,)`` and wxyz orientation ``(4,)`` (InternUtopia's robots' ``get_pose``)."""
        return self.articulation.get_pose()

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
        """Called once the episode's start state is in place: the sensors' ``post_reset`` (in which
        ``ICamera.create`` makes cameras on this robot in this slot, as InternUtopia's sensors do).
        The env calls it once per slot and episode (see :func:`~internutopia.per_slot.robot_episode.start_robot`); one that raises
        leaves the robot not started."""
        self._slot_started = True
        group = self._slot_group
        token = BUILDING.set(SlotRobotContext(group, self._slot, self._scene.origin)) if group is not None else None
        try:
            for sensor in self.sensors.values():
                hook = getattr(sensor, 'post_reset', None)
                if hook is not None:
                    hook()
        except BaseException:
            self._slot_started = False
            raise
        finally:
            if token is not None:
                BUILDING.reset(token)

    def _forget_slot(self) -> None:
        """Let this object go from where it is kept for its slot (its start failed: a retry builds
        another)."""
        _forget(self)

    def cleanup(self) -> None:
        """Called once when the slot's episode is over (by its task's ``cleanup``, InternUtopia's
        order): the controllers' and sensors' ``cleanup``."""
        for part in (*self.controllers.values(), *self.sensors.values()):
            hook = getattr(part, 'cleanup', None)
            if hook is not None:
                hook()


@functools.cache
def robot_api(physics: type) -> type:
    """InternUtopia's per-instance robot API for robots run by the built-in class ``physics``:
    :class:`SlotRobot`, with the built-in's own upstream methods in front (``upstream_methods``)."""
    extra = getattr(physics, 'upstream_methods', None)
    if extra is None:
        return SlotRobot
    return type(f'{extra.__name__}Robot', (extra, SlotRobot), {'__module__': __name__})


@functools.cache
def robot_group_class(cls: type) -> type:
    """The group class of the upstream-style robot class ``cls``: :class:`SlotRobotGroup` in front
    of the nearest built-in class (:class:`~internutopia.per_slot.model.ModelRobot` when ``cls``
    subclasses ``BaseRobot`` directly: its model comes from ``usd_path``)."""
    physics = vectorized_base(cls, BaseRobot, *ROBOT_MARKS)
    if physics is BaseRobot:
        physics = ModelRobot
    return type(f'{cls.__name__}Group', (SlotRobotGroup, physics), {
        '__module__': __name__, 'instance_class': instance_class(cls, robot_api(physics), BaseRobot, ROBOT_MARKS)})


def robot_maker(cls: type) -> Any:
    """What builds the group of ``cls`` (registered as a robot), ``None`` for a vectorized class."""
    return robot_group_class(cls) if is_per_slot(cls, BaseRobot, *ROBOT_MARKS) else None


#: Per-slot views of built-in robot groups: ``{group: {slot: (episode index, view)}}``.
_views: weakref.WeakKeyDictionary[BaseRobot, dict[int, tuple[Any, Any]]] = weakref.WeakKeyDictionary()


def robot_in_slot(group: BaseRobot, slot: int) -> Any:
    """Robot ``group`` in ``slot`` as InternUtopia's per-slot object (made once per slot and episode)."""
    if isinstance(group, SlotRobotGroup):
        return group.instance(slot)
    views = _views.setdefault(group, {})
    episode = group.env_view.episode_index(slot) if group.env_view is not None else None
    held = views.get(slot)
    if held is not None and held[0] == episode:
        return held[1]
    if held is not None:  # (the slot's last episode's, if its end was not told)
        _end_view(views, slot)
    if group not in _view_enders:
        _view_enders[group] = _ViewEnder(views)
        group.add_listener(_view_enders[group])
    task = group.env_view.task_config(slot) if group.env_view is not None else None
    config = next((r for r in task.robots if r.name == group.name), group.config) if task is not None else group.config
    # (mypy takes class objects for unhashable, python/mypy#11470: the cache's Hashable check)
    made = build_robot(with_api(robot_api(type(group)), type(group)), group, slot, config, {})  # type: ignore[arg-type]
    views[slot] = (episode, made)
    if built_robots_start():
        start_robot(made)  # the episode's start: its per-slot sensors' post_reset, as InternUtopia calls it
    return made


class _ViewEnder:
    """A built-in robot group's listener: when one of its slots' episodes is over, the slot's
    per-slot object (see :func:`robot_in_slot`) gets its ``cleanup()`` (once) and goes."""

    def __init__(self, views: dict[int, tuple[Any, Any]]) -> None:
        self.views = views

    def episode_ended(self, slot: int) -> None:
        _end_view(self.views, slot)


def _end_view(views: dict[int, tuple[Any, Any]], slot: int) -> None:
    held = views.pop(slot, None)
    if held is not None:
        try:
            end_robot(held[1])
        except Exception as exc:
            warn_cleanup_error(held[1], slot, exc)


#: The listener of each built-in robot group whose per-slot objects were made.
_view_enders: weakref.WeakKeyDictionary[BaseRobot, _ViewEnder] = weakref.WeakKeyDictionary()


def _forget(robot: Any) -> None:
    """Drop ``robot`` (whose start failed) from the cache it is kept in, so that it is not reused."""
    group, slot = robot._slot_group, robot._slot
    if isinstance(group, SlotRobotGroup):
        group.forget_instance(slot, robot)
        return
    views = _views.get(group) if group is not None else None
    if views is not None and views.get(slot, (None, None))[1] is robot:
        del views[slot]


def slot_row(group: BaseRobot, slot: int) -> dict[str, Any]:
    """``slot``'s row of the built-in observation of ``group``."""
    if isinstance(group, SlotRobotGroup):
        return group.row(slot)
    return row(group.get_obs(np.array([slot], dtype=np.intp)), 0)


def create_robots(task_config: Any, scene: Any) -> OrderedDict[str, Any]:
    """The robots of ``task_config`` in the scene's slot, as per-slot robot objects, by name
    (InternUtopia's ``internutopia.core.robot.robot.create_robots``).

    Raises:
        ValueError: a robot of the config is not in the slot (the slot runs another episode).
    """
    robots = scene.view.robots(scene.slot)
    out: OrderedDict[str, Any] = OrderedDict()
    for robot in task_config.robots:
        group = robots.get(robot.name)
        if group is None:
            raise ValueError(f'env {scene.slot} has no robot {robot.name!r}; robots: {sorted(robots)}')
        out[robot.name] = robot_in_slot(group, scene.slot)
    return out


def init_robots(task_config: Any, scene: Any) -> OrderedDict[str, Any]:
    """The same as :func:`create_robots`."""
    return create_robots(task_config, scene)


__all__ = ['PER_SLOT_ROBOT_METHODS', 'SlotActionSink', 'SlotRobot', 'SlotRobotGroup', 'create_robots', 'init_robots',
           'robot_group_class', 'robot_in_slot', 'robot_maker', 'slot_row']
