"""The vectorized "entity group" robots and objects are built on, and the slot-row helpers they use.

An :class:`Entity` object stands for one named robot or object *in every slot that has it* (the
same name and the same structure, so the slots of one :class:`~internutopia.core.backend.interface.Pack`).
Those slots share one model, so a model id (body, joint, actuator) is the same in every slot, and
the pack's ``(env_num, ...)`` arrays are read as ``data.xpos[slots, body_id]``. State arrays are
indexed by slot id, so a slot joining or leaving the pack only re-binds and leaves the others'
controller state untouched. Per-step work (controllers, observations) runs once per entity group
over all its slots, with numpy, never per robot. Robots (:mod:`internutopia.core.robot.base`) and
objects (:mod:`internutopia.core.object.base`) subclass it.
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from internutopia.core.backend.model import NO_ID
from internutopia.core.backend.parts import ModelSpec
from internutopia.core.config import ObjectCfg, RobotCfg, SimConfig
from internutopia.core.util.math import rotate_one

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack

__all__ = ['NO_ID', 'Entity', 'EntityCfgT', 'as_slice', 'begin_command_phase', 'end_command_phase', 'in_command_phase', 'rows_of', 'take_rows',
           'unit_quaternion']

#: The config type of an entity: a robot's or an object's.
EntityCfgT = TypeVar('EntityCfgT', bound=RobotCfg | ObjectCfg)


#: True while the runner applies a step's commands (the robots' ``begin_step`` hooks, the
#: controllers, the ``before_physics`` hooks): a target written then is that step's command;
#: one written outside (a script or a task's hook between steps) is one the robot keeps.
_COMMANDING: contextvars.ContextVar[bool] = contextvars.ContextVar('internutopia_commanding', default=False)


def begin_command_phase() -> contextvars.Token[bool]:
    """Mark the start of a step's command phase (the runner's, around applying the commands);
    :func:`end_command_phase` with the token ends it (in a ``finally``). A pair of calls rather
    than a context manager: every step runs it, and a ``contextlib`` one costs six times as much
    (about 3 us against 0.5), a tenth of a one-slot step's Python."""
    return _COMMANDING.set(True)


def end_command_phase(token: contextvars.Token[bool]) -> None:
    """End the command phase :func:`begin_command_phase` started (``token``: what it returned)."""
    _COMMANDING.reset(token)


def in_command_phase() -> bool:
    """Whether a step's commands are being applied now (see :func:`begin_command_phase`)."""
    return _COMMANDING.get()


def unit_quaternion(quat: Any) -> tuple[float, float, float, float]:
    """A wxyz quaternion (non-zero: configs check it) scaled to unit length, as Python floats.

    >>> unit_quaternion((2.0, 0.0, 0.0, 0.0))
    (1.0, 0.0, 0.0, 0.0)
    """
    w, x, y, z = quat  # (then each as a Python float: a generator's frame costs more than the four calls)
    w, x, y, z = float(w), float(x), float(y), float(z)
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    if norm == 1.0:
        return w, x, y, z
    return w / norm, x / norm, y / norm, z / norm


def rows_of(slots: np.ndarray, env_num: int) -> np.ndarray | slice:
    """An index for the rows of ``slots`` (sorted, distinct) in ``(env_num, ...)`` arrays: a slice
    when they are every slot, since a slice reads a view and writes in place, with no gather."""
    return slice(None) if len(slots) == env_num else slots


def as_slice(indices: np.ndarray) -> slice | np.ndarray:
    """``indices`` as a slice when they are consecutive and ascending (basic indexing: a view, and a
    write a fraction of an index array's), else as they are.

    >>> as_slice(np.array([7, 8, 9])), as_slice(np.array([3, 1]))
    (slice(7, 10, None), array([3, 1]))
    """
    indices = np.asarray(indices, dtype=np.intp)
    if len(indices) and np.array_equal(indices, np.arange(indices[0], indices[0] + len(indices))):
        return slice(int(indices[0]), int(indices[0]) + len(indices))
    return indices


def take_rows(array: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """A copy of the rows of ``slots`` (sorted, distinct) of a slot-indexed ``array``: one copy
    when they are every row, which costs half a gather."""
    return array.copy() if len(slots) == len(array) else array[slots]


class Entity(Generic[EntityCfgT]):
    """A named robot or object in the slots of one pack, bound to that pack's model ids.

    Id arrays (``base_body_id`` and the like) are indexed by slot and hold the same id in every
    slot of the pack, so ``data.xpos[slots, self.base_body_id[slots]]`` gathers all slots at once.
    """

    #: Name of the body whose pose is the entity's ``position``/``orientation``.
    base_body: str = ''
    #: Longest physics step the entity stays accurate with (``None``: any). A slot holding it is
    #: stepped in equal substeps no longer than this, whatever ``SimConfig.physics_dt`` is.
    max_physics_dt: float | None = None
    #: Whether the array API (``step_arrays``) can serve the entity: its observations are arrays
    #: and its controllers take batches of rows (an adapter of per-slot objects cannot).
    array_api: bool = True
    #: The env's :class:`~internutopia.core.view.EnvView` (a layer above this one, hence untyped),
    #: set by the runner when the group enters the world.
    env_view: Any = None
    _pose_views: tuple[np.ndarray, np.ndarray] | None = None
    _joint_views: tuple[np.ndarray, np.ndarray] | None = None
    #: What :meth:`add_listener` registered (a class-level empty default: none).
    _listeners: tuple[Any, ...] = ()

    def __init__(self, config: EntityCfgT, env_num: int, sim: SimConfig) -> None:
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
    def build_spec(self) -> ModelSpec:
        """A fresh standalone spec of this entity (its root body named :attr:`base_body`)."""
        raise NotImplementedError

    def spec(self) -> ModelSpec:
        """The spec to attach into a slot: :meth:`build_spec` plus whatever sensors add."""
        return self.build_spec()

    def full_name(self, element: str) -> str:
        """The compiled-model name of this entity's ``element`` (the same in every slot)."""
        return f'{self.name}/{element}'

    @property
    def root_offset(self) -> tuple[float, float, float]:
        """Where :attr:`base_body` sits, in the entity's own frame, relative to the configured
        ``position``: InternUtopia places a robot by its asset's root frame (a Jetbot's is on the
        ground, so ``position=(0, 0, 0)`` rests on the floor), which need not be the base body.
        The origin here; a subclass overrides it (with a property, or a class attribute)."""
        return (0.0, 0.0, 0.0)

    @property
    def bound_world(self) -> Pack:
        """:attr:`world`, the pack the entity is bound to (an ``AttributeError`` before :meth:`bind`,
        as reading a field of ``world`` then is)."""
        world = self.world
        if world is None:
            raise AttributeError(f'{self.name!r} is not bound to a pack yet (it is, from its first reset on)')
        return world

    def bind(self, world: Pack, slots: np.ndarray) -> None:
        """Look up this entity's model ids for the slots ``slots`` of ``world`` (after a change)."""
        self.world = world
        self.slots = np.asarray(sorted(int(s) for s in slots), dtype=np.intp)
        body = world.lookup.body(self.full_name(self.base_body))
        root_qposadr, root_dofadr = body.root_qposadr, body.root_dofadr
        for array, value in ((self.base_body_id, body.id), (self.root_qposadr, root_qposadr), (self.root_dofadr, root_dofadr)):
            array[:] = NO_ID
            array[self.slots] = value
        self.root_mocapid = int(body.mocap)
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

    @property
    def root_qpos_column(self) -> int | None:
        """The ``qpos`` column where a free root's position starts (the same in every slot of
        the pack), or ``None`` (a mocap or fixed root, or not bound)."""
        return self._root_qposadr

    def ids(self, slots: np.ndarray, kind: str, names: list[str]) -> np.ndarray:
        """Model ids ``(len(slots), len(names))`` of this entity's elements of ``kind`` (e.g. 'joint')."""
        assert self.world is not None, 'ids before bind'
        ids = self.world.lookup.ids(kind, [self.full_name(n) for n in names]).astype(np.intp)
        return np.broadcast_to(ids, (len(slots), len(names))).copy()

    # -- state -------------------------------------------------------------------------------
    def reset_slots(self, slots: np.ndarray, configs: Sequence[EntityCfgT]) -> None:
        """Put the entity of each slot at its episode's start pose, at rest."""
        assert self.world is not None, 'reset before bind'
        qpos = self.world.data.qpos
        for slot, config in zip(slots, configs, strict=True):
            adr = self.root_qposadr[slot]
            if adr == NO_ID:
                continue
            # (a config's quaternion need not be a unit one: a free joint keeps what is written)
            orientation = unit_quaternion(config.orientation) if config.orientation is not None else (1.0, 0.0, 0.0, 0.0)
            qpos[slot, adr:adr + 3] = self.base_position(config.position, orientation)
            qpos[slot, adr + 3:adr + 7] = orientation

    def base_position(self, position: Any, orientation: Any) -> np.ndarray:
        """Where the base body goes for a configured ``position`` and wxyz ``orientation`` (see :attr:`root_offset`)."""
        if not any(self.root_offset):
            return np.asarray(position, dtype=float)
        ox, oy, oz = rotate_one(orientation, self.root_offset)  # (one pose: Python floats, numpy's numbers)
        px, py, pz = position
        return np.array((float(px) + ox, float(py) + oy, float(pz) + oz))

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
        world = self.world
        assert world is not None, 'poses before bind'
        bodies = self.base_body_id[slots]
        return world.field('xpos')[slots, bodies], world.field('xquat')[slots, bodies]

    def positions(self, slots: np.ndarray) -> np.ndarray:
        """The positions of :meth:`poses` alone, ``(k, 3)`` (tasks and metrics read them every physics step)."""
        views = self.pose_views  # (None when poses() is overridden: what it says holds)
        if views is None:
            return self.poses(slots)[0]
        return views[0].copy() if len(slots) == self.env_num else views[0][slots]

    def teleport(self, slot: int, position: np.ndarray | None, orientation: np.ndarray | None) -> None:
        """Put the base body of ``slot`` at an env-local pose, at rest (``None`` keeps that part).

        ``orientation`` is normalized (a free joint or a mocap body keeps what is written, so
        the pose read back would not be a unit quaternion).

        Raises:
            ValueError: the base is fixed in the scene (neither free-floating nor mocap-driven),
                or ``orientation`` is not four finite numbers, not all zero.
        """
        world = self.world
        assert world is not None, 'teleport before bind'
        if orientation is not None:
            quat = np.asarray(orientation, dtype=float).reshape(-1)
            norm = float(np.linalg.norm(quat)) if quat.shape == (4,) else 0.0
            if not np.isfinite(norm) or norm < 1e-9:
                raise ValueError(f'{self.name!r} in env {slot}: orientation must be a non-zero wxyz quaternion '
                                 f'(w, x, y, z) of finite numbers; got {np.asarray(orientation).tolist()}')
            orientation = quat / norm
        data = world.data
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
        world.forward(np.array([slot]))
        self.state_changed(slot)

    def add_listener(self, listener: Any) -> None:
        """Have ``listener`` told about this entity's slots: its ``state_changed(slot)`` (where it
        has one) after :meth:`state_changed`, its ``episode_ended(slot)`` after :meth:`episode_ended`.
        Anything that keeps what it read of a slot (a reading kept for the step, an object per
        slot and episode) registers so, without the entity knowing what it is; once is enough."""
        if not any(listener is held for held in self._listeners):
            self._listeners = (*self._listeners, listener)

    def state_changed(self, slot: int) -> None:
        """Called after ``slot``'s state was written outside a step (a teleport, joints set by hand):
        a group that caches what it read this step drops ``slot``'s rows here (and calls this
        one); the listeners (:meth:`add_listener`) are told."""
        for listener in self._listeners:
            hook = getattr(listener, 'state_changed', None)
            if hook is not None:
                hook(slot)

    def episode_ended(self, slot: int) -> None:
        """Called when ``slot``'s episode that had this entity is over (the reset that replaces it,
        or empties the slot): the listeners (:meth:`add_listener`) are told."""
        for listener in self._listeners:
            hook = getattr(listener, 'episode_ended', None)
            if hook is not None:
                hook(slot)

    def get_obs(self, slots: np.ndarray) -> dict[str, Any]:
        """Observation arrays with a leading ``len(slots)`` axis."""
        position, orientation = self.poses(slots)
        return {'position': position, 'orientation': orientation}

    # -- stepping hooks ----------------------------------------------------------------------
    def begin_step(self) -> None:
        """Called once per env step, before controllers apply this step's commands."""

    def before_physics(self) -> None:
        """Called once per env step, after controllers and before the physics step."""

    def quiet_steps(self, limit: int) -> int:
        """How many of the env steps after the coming one (at most ``limit``) this group's
        :meth:`begin_step` and :meth:`before_physics`, with the controllers applying the coming
        step's commands again between them (controllers whose apply is idempotent), would
        change nothing on, given that nothing else runs between them. The runner then advances
        the physics of those steps in the same call as the coming one (an action repeat's
        steps, see ``Runner.step_arrays_repeated``). Asked only of a group that overrides a
        hook; by default 0 (every step's hooks run)."""
        return 0
