"""Robots and the vectorized "entity group" they are built on.

An :class:`Entity` object stands for one named robot or object *in every slot that has it* (the
same name and the same structure, so the slots of one :class:`~internutopia.core.backend.mujoco.world.Pack`).
Those slots share one model, so a model id (body, joint, actuator) is the same in every slot, and
the pack's ``(env_num, ...)`` arrays are read as ``data.xpos[slots, body_id]``. State arrays are
indexed by slot id, so a slot joining or leaving the pack only re-binds and leaves the others'
controller state untouched. Per-step work (controllers, observations) runs once per entity group
over all its slots, with numpy, never per robot.

A robot type implements :meth:`BaseRobot.build_spec` (a standalone ``MjSpec`` with a root body
named :attr:`BaseRobot.base_body`) and registers itself::

    @BaseRobot.register('MyRobot')
    class MyRobot(BaseRobot):
        base_body = 'base'
        def build_spec(self) -> mujoco.MjSpec: ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from internutopia.core.config import ObjectCfg, RobotCfg, SimConfig
from internutopia.core.registry import Registry
from internutopia.core.robot.slot import SlotRobotMixin

if TYPE_CHECKING:
    from internutopia.core.backend.mujoco.world import Pack
    from internutopia.core.controller.base import BaseController
    from internutopia.core.sensor.base import BaseSensor

NO_ID = -1

#: Methods only InternUtopia-style (per-slot) robot classes define.
PER_SLOT_ROBOT_METHODS = ('apply_action', 'get_robot_base', 'get_robot_scale', 'set_up_to_scene', 'get_rigid_bodies')


def rows_of(slots: np.ndarray, env_num: int) -> np.ndarray | slice:
    """An index for the rows of ``slots`` (sorted, distinct) in ``(env_num, ...)`` arrays: a slice
    when they are every slot, since a slice reads a view and writes in place, with no gather."""
    return slice(None) if len(slots) == env_num else slots


def take_rows(array: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """A copy of the rows of ``slots`` (sorted, distinct) of a slot-indexed ``array``: one copy
    when they are every row, which costs half a gather."""
    return array.copy() if len(slots) == len(array) else array[slots]


class Entity:
    """A named robot or object in the slots of one pack, bound to that pack's model ids.

    Id arrays (``base_body_id`` and the like) are indexed by slot and hold the same id in every
    slot of the pack, so ``data.xpos[slots, self.base_body_id[slots]]`` gathers all slots at once.
    """

    #: Name of the body whose pose is the entity's ``position``/``orientation``.
    base_body: str = ''
    #: Where :attr:`base_body` sits, in the entity's own frame, relative to the configured
    #: ``position``: InternUtopia places a robot by its asset's root frame (a Jetbot's is on the
    #: ground, so ``position=(0, 0, 0)`` rests on the floor), which need not be the base body.
    root_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    #: Longest physics step the entity stays accurate with (``None``: any). A slot holding it is
    #: stepped in equal substeps no longer than this, whatever ``SimConfig.physics_dt`` is.
    max_physics_dt: float | None = None
    _pose_views: tuple[np.ndarray, np.ndarray] | None = None
    _joint_views: tuple[np.ndarray, np.ndarray] | None = None

    def __init__(self, config: RobotCfg | ObjectCfg, env_num: int, sim: SimConfig) -> None:
        self.config = config
        self.name = config.name
        self.env_num = env_num
        self.sim = sim
        self.slots = np.zeros(0, dtype=np.intp)
        self.world: Pack | None = None
        self.base_body_id = np.full(env_num, NO_ID, dtype=np.intp)
        self.root_qposadr = np.full(env_num, NO_ID, dtype=np.intp)
        self.root_dofadr = np.full(env_num, NO_ID, dtype=np.intp)
        self.root_mocapid = NO_ID
        self._root_qposadr: int | None = None  # the same in every slot of the pack
        #: Every slot's base position ``(env_num, 3)`` and wxyz orientation ``(env_num, 4)`` as live
        #: views of the state, for compiled kernels that read poses in place rather than through
        #: :meth:`poses`' copies. ``None`` when the pose is not state (a base fixed in the scene)
        #: or :meth:`poses` is overridden (kernels then use :meth:`poses`).
        self.pose_views: tuple[np.ndarray, np.ndarray] | None = None

    # -- structure ---------------------------------------------------------------------------
    def build_spec(self) -> mujoco.MjSpec:
        """A fresh standalone spec of this entity (its root body named :attr:`base_body`)."""
        raise NotImplementedError

    def spec(self) -> mujoco.MjSpec:
        """The spec to attach into a slot: :meth:`build_spec` plus whatever sensors add."""
        return self.build_spec()

    def full_name(self, element: str) -> str:
        """The compiled-model name of this entity's ``element`` (the same in every slot)."""
        return f'{self.name}/{element}'

    def bind(self, world: Pack, slots: np.ndarray) -> None:
        """Look up this entity's model ids for the slots ``slots`` of ``world`` (after a change)."""
        self.world = world
        self.slots = np.asarray(sorted(int(s) for s in slots), dtype=np.intp)
        model = world.model
        body = model.body(self.full_name(self.base_body))
        root_qposadr = root_dofadr = NO_ID
        if model.body_jntnum[body.id] and int(model.jnt_type[model.body_jntadr[body.id]]) == int(mujoco.mjtJoint.mjJNT_FREE):
            joint = model.body_jntadr[body.id]
            root_qposadr, root_dofadr = model.jnt_qposadr[joint], model.jnt_dofadr[joint]
        for array, value in ((self.base_body_id, body.id), (self.root_qposadr, root_qposadr), (self.root_dofadr, root_dofadr)):
            array[:] = NO_ID
            array[self.slots] = value
        self.root_mocapid = int(model.body_mocapid[body.id])
        self._root_qposadr = int(root_qposadr) if root_qposadr != NO_ID else None
        data = world.data
        # Made once per pack: poses() runs every step.
        self._pose_views = None
        if self._root_qposadr is not None:
            adr = self._root_qposadr
            self._pose_views = (data.qpos[:, adr:adr + 3], data.qpos[:, adr + 3:adr + 7])
        elif self.root_mocapid != NO_ID:
            self._pose_views = (data.mocap_pos[:, self.root_mocapid], data.mocap_quat[:, self.root_mocapid])
        self.pose_views = self._pose_views if type(self).poses is Entity.poses else None

    def ids(self, slots: np.ndarray, kind: str, names: list[str]) -> np.ndarray:
        """Model ids ``(len(slots), len(names))`` of this entity's elements of ``kind`` (e.g. 'joint')."""
        lookup: Callable[[str], Any] = getattr(self.world.model, kind)
        ids = np.array([lookup(self.full_name(n)).id for n in names], dtype=np.intp)
        return np.broadcast_to(ids, (len(slots), len(names))).copy()

    # -- state -------------------------------------------------------------------------------
    def reset_slots(self, slots: np.ndarray, configs: list[RobotCfg | ObjectCfg]) -> None:
        """Put the entity of each slot at its episode's start pose, at rest."""
        qpos = self.world.data.qpos
        for slot, config in zip(slots, configs, strict=True):
            adr = self.root_qposadr[slot]
            if adr == NO_ID:
                continue
            orientation = config.orientation if config.orientation is not None else (1.0, 0.0, 0.0, 0.0)
            qpos[slot, adr:adr + 3] = self.base_position(config.position, orientation)
            qpos[slot, adr + 3:adr + 7] = orientation

    def base_position(self, position: Any, orientation: Any) -> np.ndarray:
        """Where the base body goes for a configured ``position`` and wxyz ``orientation`` (see :attr:`root_offset`)."""
        if not any(self.root_offset):
            return np.asarray(position, dtype=float)
        rotated = np.zeros(3)
        mujoco.mju_rotVecQuat(rotated, np.asarray(self.root_offset, dtype=float), np.asarray(orientation, dtype=float))
        return np.asarray(position, dtype=float) + rotated

    def poses(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Env-local positions ``(k, 3)`` and wxyz orientations ``(k, 4)`` of the base body.

        Read from the state, so they are those the last step reached: a free root's ``qpos``, a
        mocap root's target pose, else (a body fixed in the scene) its computed pose.
        """
        views = self._pose_views
        if views is not None:
            position, orientation = views
            if len(slots) == self.env_num:
                return position.copy(), orientation.copy()
            return position[slots], orientation[slots]  # (a gather copies)
        bodies = self.base_body_id[slots]
        return self.world.field('xpos')[slots, bodies], self.world.field('xquat')[slots, bodies]

    def teleport(self, slot: int, position: np.ndarray | None, orientation: np.ndarray | None) -> None:
        """Put the base body of ``slot`` at an env-local pose, at rest (``None`` keeps that part).

        Raises:
            ValueError: the base is fixed in the scene (neither free-floating nor mocap-driven).
        """
        data = self.world.data
        adr, dof = int(self.root_qposadr[slot]), int(self.root_dofadr[slot])
        if adr != NO_ID:
            if position is not None:
                data.qpos[slot, adr:adr + 3] = position
            if orientation is not None:
                data.qpos[slot, adr + 3:adr + 7] = orientation
            data.qvel[slot, dof:dof + 6] = 0.0
        elif self.root_mocapid != NO_ID:
            if position is not None:
                data.mocap_pos[slot, self.root_mocapid] = position
            if orientation is not None:
                data.mocap_quat[slot, self.root_mocapid] = orientation
        else:
            raise ValueError(f'{self.name!r} in env {slot} is fixed in its scene: its base cannot be moved')
        self.world.forward(np.array([slot]))
        self.state_changed(slot)

    def state_changed(self, slot: int) -> None:
        """Called after ``slot``'s state was written outside a step (rows cached for the step go)."""
        self.__dict__.get('_row_cache', {}).pop(slot, None)

    def get_obs(self, slots: np.ndarray) -> dict[str, Any]:
        """Observation arrays with a leading ``len(slots)`` axis."""
        position, orientation = self.poses(slots)
        return {'position': position, 'orientation': orientation}

    # -- stepping hooks ----------------------------------------------------------------------
    def begin_step(self) -> None:
        """Called once per env step, before controllers apply this step's commands."""

    def before_physics(self) -> None:
        """Called once per env step, after controllers and before the physics step."""


class BaseRobot(Entity, SlotRobotMixin):
    """A robot type: its model, its controllers and sensors, vectorized over slots.

    ``BaseRobot(config, env_num, sim)`` is a robot group (this package's robots);
    ``BaseRobot(config, scene)`` is one slot's robot, InternUtopia's way: upstream-style subclasses
    are built like that by their group, one per slot and episode (see
    :mod:`internutopia.core.robot.slot` and ``docs/extensions.md``).
    """

    registry: Registry[type[BaseRobot]] = Registry('robot')
    #: InternUtopia's name of the registry table.
    robots = registry.table
    #: Names of the joints reported as ``joint_positions``/``joint_velocities`` (model order if empty).
    joint_names: list[str] = []
    #: The upstream-style class whose per-slot instances drive this group (``None``: vectorized).
    slot_class: type | None = None
    #: The env's :class:`~internutopia.core.view.EnvView` (set by the runner; per-slot objects need it).
    env_view: Any = None

    def __init__(self, config: RobotCfg, env_num: Any = None, sim: SimConfig | None = None) -> None:
        from internutopia.core.scene.scene import IScene

        if isinstance(env_num, IScene):  # InternUtopia's signature: one slot's robot
            self._init_slot(config, env_num)
            return
        super().__init__(config, env_num, sim)
        self._slot_instances: dict[int, BaseRobot] = {}
        self._slot_configs: dict[int, RobotCfg] = {}
        self._action_sink: Any = None
        from internutopia.core.controller.base import BaseController
        from internutopia.core.sensor.base import BaseSensor

        self.controllers: dict[str, BaseController] = {
            c.name: BaseController.create(c, self, where=f'robot {self.name!r}') for c in config.controllers or []
        }
        self.sensors: dict[str, BaseSensor] = {
            s.name: BaseSensor.create(s, self, where=f'robot {self.name!r}') for s in config.sensors or [] if s.enable
        }
        self.joint_qposadr = np.zeros((env_num, 0), dtype=np.intp)
        self.joint_dofadr = np.zeros((env_num, 0), dtype=np.intp)
        self._joint_ranges: tuple[tuple[int, int], tuple[int, int]] | None = None
        #: Every slot's joint positions and velocities as views of the state, when the joints are
        #: contiguous (:attr:`_joint_ranges`): made once per pack, sliced every step.
        self._joint_views: tuple[np.ndarray, np.ndarray] | None = None

    @classmethod
    def register(cls, name: str) -> Callable[[type[BaseRobot]], type[BaseRobot]]:
        """Class decorator registering a robot type under ``name`` (the config's ``type``)."""
        return cls.registry.register(name)

    #: Whether the class scales its model by ``RobotCfg.scale``; MuJoCo cannot rescale a
    #: compiled robot's masses, inertias, joint limits and actuator gains consistently, so the
    #: built-in robots do not, and a non-unit ``scale`` for them is an error.
    supports_scale: bool = False

    @classmethod
    def create(cls, config: RobotCfg, env_num: int, sim: SimConfig, where: str = '') -> BaseRobot:
        """Instantiate the robot class registered for ``config.type``.

        Raises:
            ValueError: the type is not registered, or ``config.scale`` is not ``None``/``(1, 1, 1)``
                for a robot class that cannot scale its model.
        """
        from internutopia.core.extension_style import is_per_slot, vectorized_base

        robot_class = cls.registry.get(config.type, where)
        if config.scale is not None and tuple(config.scale) != (1.0, 1.0, 1.0) and not robot_class.supports_scale:
            location = f' (in {where})' if where else ''
            raise ValueError(f'robot {config.name!r}{location}: scale={tuple(config.scale)} cannot be honoured; '
                             f'{config.type} does not scale its model (MuJoCo has no consistent rescaling of a '
                             'robot\'s masses, joints and actuators). Use scale=None or (1.0, 1.0, 1.0).')
        if not is_per_slot(robot_class, BaseRobot, PER_SLOT_ROBOT_METHODS, ('get_obs',)):
            return robot_class(config, env_num, sim)
        # An upstream-style class: its nearest built-in base runs the physics for every slot, and
        # one instance per slot and episode decides actions and observations.
        physics = vectorized_base(robot_class, BaseRobot, PER_SLOT_ROBOT_METHODS, ('get_obs',))
        if physics is BaseRobot:
            from internutopia.core.robot.model import ModelRobot

            physics = ModelRobot
        group = physics(config, env_num, sim)
        group.slot_class = robot_class
        return group

    # -- per-slot objects ------------------------------------------------------------------------
    def slot_instance(self, slot: int) -> BaseRobot:
        """This robot in ``slot`` as InternUtopia's per-slot object (made once per slot and episode):
        an instance of the upstream-style class when the group has one, else a view of this group."""
        instance = self._slot_instances.get(slot)
        if instance is not None:
            return instance
        if self.env_view is None:
            raise RuntimeError(f'robot {self.name!r} is not in an env yet; per-slot robots exist once an episode runs')
        from internutopia.core.robot.articulation import _BUILDING, SlotRobotContext

        scene = self.env_view.scene(slot)
        config = self._slot_configs.get(slot, self.config)
        cls = self.slot_class or type(self)
        instance = cls.__new__(cls)
        instance._slot_group = self
        instance._slot = int(slot)
        self._slot_instances[slot] = instance
        token = _BUILDING.set(SlotRobotContext(self, int(slot), scene.origin))
        try:
            if self.slot_class is not None:
                self.slot_class.__init__(instance, config, scene)
            else:
                BaseRobot.__init__(instance, config, scene)
        except BaseException:
            self._slot_instances.pop(slot, None)
            raise
        finally:
            _BUILDING.reset(token)
        if self.slot_class is not None:
            instance.post_reset()
        return instance

    @property
    def action_sink(self) -> Any:
        """Where actions for this robot go when an upstream-style class drives it (``None`` otherwise)."""
        if self.slot_class is None:
            return None
        if self._action_sink is None:
            from internutopia.core.robot.slot import SlotActionSink

            self._action_sink = SlotActionSink(self)
        return self._action_sink

    def spec(self) -> mujoco.MjSpec:
        spec = self.build_spec()
        for sensor in self.sensors.values():
            sensor.add_to_spec(spec)
        return spec

    def bind(self, world: Pack, slots: np.ndarray) -> None:
        super().bind(world, slots)
        model = world.model
        names = self.joint_names or self._hinge_joint_names(model)
        self.joint_names = names
        self.joint_qposadr = np.zeros((self.env_num, len(names)), dtype=np.intp)
        self.joint_dofadr = np.zeros((self.env_num, len(names)), dtype=np.intp)
        self._joint_ranges = None
        self._joint_views = None
        if len(self.slots):
            joints = self.ids(self.slots, 'joint', names)
            self.joint_qposadr[self.slots] = model.jnt_qposadr[joints]
            self.joint_dofadr[self.slots] = model.jnt_dofadr[joints]
            qpos, dof = model.jnt_qposadr[joints[0]], model.jnt_dofadr[joints[0]]
            if len(names) and np.all(np.diff(qpos) == 1) and np.all(np.diff(dof) == 1):
                # Joints in model order, one coordinate each: read as slices.
                self._joint_ranges = ((int(qpos[0]), int(qpos[-1]) + 1), (int(dof[0]), int(dof[-1]) + 1))
                (qa, qb), (va, vb) = self._joint_ranges
                self._joint_views = (world.data.qpos[:, qa:qb], world.data.qvel[:, va:vb])
        for part in (*self.controllers.values(), *self.sensors.values()):
            part.bind(world)

    def _hinge_joint_names(self, model: mujoco.MjModel) -> list[str]:
        if not len(self.slots):
            return []
        prefix = f'{self.name}/'
        return [model.joint(j).name[len(prefix):] for j in range(model.njnt)
                if model.joint(j).name.startswith(prefix)
                and int(model.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))]

    def reset_slots(self, slots: np.ndarray, configs: list[RobotCfg]) -> None:
        super().reset_slots(slots, configs)
        for part in (*self.controllers.values(), *self.sensors.values()):
            part.reset(slots)
        for slot, config in zip(np.asarray(slots).tolist(), configs, strict=True):
            self._slot_configs[slot] = config
            self.__dict__.get('_row_cache', {}).pop(slot, None)  # a new start state
            old = self._slot_instances.pop(slot, None)
            if old is not None and self.slot_class is not None:
                old.cleanup()

    def get_obs(self, slots: np.ndarray | None = None) -> Any:
        """Observation arrays with a leading ``len(slots)`` axis; per slot (one slot's robot, no
        ``slots``) that slot's observation dict. An upstream-style class decides what its slots
        observe: the group then returns one dict per slot."""
        if slots is None:
            if not self.per_slot:
                raise TypeError('get_obs(slots) of a robot group needs the slots to observe')
            return self._slot_obs()
        if self.slot_class is not None:
            slots = np.asarray(slots, dtype=np.intp)
            self._cache_rows(slots)  # the group's own rows, read once for all slots (instances use them)
            return [self.slot_instance(slot).get_obs() for slot in slots.tolist()]
        return self.vector_obs(slots)

    def _cache_rows(self, slots: np.ndarray) -> None:
        """Keep each of ``slots``' row of :meth:`vector_obs`, stamped with the slot's sim time."""
        from internutopia.core.util.trees import row

        tree = self.vector_obs(slots)
        times = self.world.data.time
        cache = self.__dict__.setdefault('_row_cache', {})
        for index, slot in enumerate(slots.tolist()):
            cache[slot] = (float(times[slot]), row(tree, index))

    def slot_row(self, slot: int) -> dict[str, Any]:
        """``slot``'s row of :meth:`vector_obs` now (from the step's cached rows when they are current)."""
        from internutopia.core.util.trees import row

        cached = self.__dict__.get('_row_cache', {}).get(slot)
        if cached is not None and cached[0] == float(self.world.data.time[slot]):
            return dict(cached[1])
        return row(self.vector_obs(np.array([slot], dtype=np.intp)), 0)

    def vector_obs(self, slots: np.ndarray) -> dict[str, Any]:
        """The group's own observation arrays of ``slots`` (position, orientation, joints, controllers, sensors)."""
        # Runs every step: one dict display, no call that is not needed (each costs about as much as a copy).
        position, orientation = self.poses(slots)
        joints = self._joint_views
        if joints is not None and len(slots) == self.env_num:
            joint_positions, joint_velocities = joints[0].copy(), joints[1].copy()
        elif joints is not None and len(slots):
            joint_positions, joint_velocities = joints[0][slots], joints[1][slots]  # (a gather copies)
        else:
            data, rows = self.world.data, slots[:, None]
            joint_positions, joint_velocities = data.qpos[rows, self.joint_qposadr[slots]], data.qvel[rows, self.joint_dofadr[slots]]
        return {'position': position, 'orientation': orientation,
                'joint_positions': joint_positions, 'joint_velocities': joint_velocities,
                'controllers': {name: c.get_obs(slots) for name, c in self.controllers.items()},
                'sensors': {name: s.get_obs(slots) for name, s in self.sensors.items()} if self.sensors else {}}
