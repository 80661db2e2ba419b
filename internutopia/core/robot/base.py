"""Robots: a robot type's model, controllers and sensors, vectorized over the slots that have it.

A robot is an :class:`~internutopia.core.entity.Entity` (one named robot in every slot of one
structure, read and written over all of them at once). A robot type implements
:meth:`BaseRobot.build_spec` (a standalone ``MjSpec`` with a root body named
:attr:`BaseRobot.base_body`) and registers itself::

    @BaseRobot.register('MyRobot')
    class MyRobot(BaseRobot):
        base_body = 'base'
        def build_spec(self) -> ModelSpec: ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from internutopia.core.backend.clock import RenderClock
from internutopia.core.backend.model import NO_ID, JointType
from internutopia.core.backend.parts import ModelSpec
from internutopia.core.config import RobotCfg, SimConfig
from internutopia.core.entity import Entity, as_slice, rows_of, take_rows
from internutopia.core.registry import Registry

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack
    from internutopia.core.controller.base import BaseController
    from internutopia.core.sensor.base import BaseSensor

# (the entity base and the slot-row helpers of internutopia.core.entity are importable from here
# too, as robots, extensions and scripts written before they moved there import them)
__all__ = ['NO_ID', 'BaseRobot', 'Entity', 'as_slice', 'rows_of', 'take_rows']

GetObsT = TypeVar('GetObsT', bound=Callable[..., dict[str, Any]])


def observes_by_need(get_obs: GetObsT) -> GetObsT:
    """Mark a robot class's ``get_obs`` as honouring :attr:`BaseRobot.observed_entries` (it may
    leave out the entries not named). An override without the mark is always asked for every
    entry, so one that reads its parent's entries keeps working."""
    get_obs.observes_by_need = True  # type: ignore[attr-defined]
    return get_obs


class BaseRobot(Entity[RobotCfg]):
    """A robot type: its model, its controllers and sensors, vectorized over slots.

    ``BaseRobot(config, env_num, sim)`` is one named robot in every slot of one structure (see
    :class:`Entity`). Classes written InternUtopia's way (one object per slot) subclass it too;
    the per-slot layer (:mod:`internutopia.per_slot`) runs them, and the runner never knows.
    """

    registry: Registry[type[BaseRobot]] = Registry('robot')
    #: InternUtopia's name of the registry table.
    robots = registry.table
    #: Names of the joints reported as ``joint_positions``/``joint_velocities`` (model order if empty).
    joint_names: list[str] = []
    #: Methods InternUtopia's class of this robot offers beyond the common robot API (a mixin of
    #: per-instance methods, e.g. H1's ``get_ankle_height``), which the robot's objects of one slot
    #: (and those of subclasses written InternUtopia's way) have too; ``None`` when there are none.
    upstream_methods: type | None = None

    def __init__(self, config: RobotCfg, env_num: int, sim: SimConfig) -> None:
        super().__init__(config, env_num, sim)
        from internutopia.core.controller.base import BaseController
        from internutopia.core.sensor.base import BaseSensor

        self.controllers: dict[str, BaseController] = {
            c.name: BaseController.create(c, self, where=f'robot {self.name!r}') for c in config.controllers or []
        }
        made = ((s, BaseSensor.create(s, self, where=f'robot {self.name!r}')) for s in config.sensors or [])
        self.sensors: dict[str, BaseSensor] = {s.name: sensor for s, sensor in made if s.enable or not sensor.dropped_when_disabled}
        self.joint_qposadr = np.zeros((env_num, 0), dtype=np.intp)
        self.joint_dofadr = np.zeros((env_num, 0), dtype=np.intp)
        self._joint_ranges: tuple[tuple[int, int], tuple[int, int]] | None = None
        #: Every slot's joint positions and velocities as views of the state, when the joints are
        #: contiguous (:attr:`_joint_ranges`): made once per pack, sliced every step.
        self._joint_views: tuple[np.ndarray, np.ndarray] | None = None
        #: Columns of :attr:`_joint_views` in ``joint_names``' order, when that is not model order
        #: (robots report joints in InternUtopia's order, which can differ from the asset's).
        self._joint_order: np.ndarray | None = None
        self._render_clock: RenderClock | None = None
        self._render_rows: tuple[np.ndarray, np.ndarray] | None = None  # (all False, all True) for render_steps
        #: While an observation is taken for a caller that reads only some of this robot's entries
        #: (a Gymnasium vector env's keys: ``step_arrays(observe_only=...)``), their names, else
        #: ``None``. Set only for a ``get_obs`` marked :func:`observes_by_need`, which may then
        #: leave the others out (the caller drops them anyway).
        self.observed_entries: frozenset[str] | None = None

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
        """The robot group of the type registered for ``config.type``.

        Raises:
            ValueError: the type is not registered, or ``config.scale`` is not ``None``/``(1, 1, 1)``
                for a robot class that cannot scale its model.
        """
        robot_class = cls.registry.get(config.type, where)
        if config.scale is not None and tuple(config.scale) != (1.0, 1.0, 1.0) and not robot_class.supports_scale:
            location = f' (in {where})' if where else ''
            raise ValueError(f'robot {config.name!r}{location}: scale={tuple(config.scale)} cannot be honoured; '
                             f'{config.type} does not scale its model (MuJoCo has no consistent rescaling of a '
                             'robot\'s masses, joints and actuators). Use scale=None or (1.0, 1.0, 1.0).')
        return cls.registry.maker(config.type)(config, env_num, sim)

    def commanded(self, controller_actions: Any) -> list[tuple[str | None, Any, Any]]:
        """What one slot's ``{controller_name: args}`` commands: ``(name, controller, args)`` per entry,
        the arguments still to be parsed by ``controller.parse_action``.

        Raises:
            ValueError: not a dict, or an unknown controller name (the message lists the robot's).
        """
        if not isinstance(controller_actions, dict):
            raise ValueError(f'must be a dict {{controller_name: args}}; got {type(controller_actions).__name__}')
        out = []
        controllers = self.controllers
        for controller_name, args in controller_actions.items():
            controller = controllers.get(controller_name)
            if controller is None:
                raise ValueError(f'unknown controller {controller_name!r}; controllers of {self.name!r}: {sorted(controllers)}')
            out.append((controller_name, controller, args))
        return out

    def spec(self) -> ModelSpec:
        spec = self.build_spec()
        for sensor in self.sensors.values():
            sensor.add_to_spec(spec)
        return spec

    def bind(self, world: Pack, slots: np.ndarray) -> None:
        super().bind(world, slots)
        names = self.joint_names or self._hinge_joint_names(world)
        self.joint_names = names
        self.joint_qposadr = np.zeros((self.env_num, len(names)), dtype=np.intp)
        self.joint_dofadr = np.zeros((self.env_num, len(names)), dtype=np.intp)
        self._joint_ranges = None
        self._joint_views = None
        self._joint_order = None
        if len(self.slots):
            joints = world.lookup.joints([self.full_name(n) for n in names])
            qpos, dof = joints.qposadr.astype(np.intp), joints.dofadr.astype(np.intp)
            self.joint_qposadr[self.slots] = qpos
            self.joint_dofadr[self.slots] = dof
            in_model_order = np.sort(qpos), np.sort(dof)
            if len(names) and all(np.all(np.diff(adr) == 1) for adr in in_model_order) \
                    and np.array_equal(qpos - qpos.min(), dof - dof.min()):
                # The joints fill one stretch of the state, one coordinate each: read it as slices
                # (in model order), then put the columns in ``joint_names``' order if that differs.
                qa, va = int(qpos.min()), int(dof.min())
                self._joint_ranges = ((qa, qa + len(names)), (va, va + len(names)))
                self._joint_views = (world.data.qpos[:, qa:qa + len(names)], world.data.qvel[:, va:va + len(names)])
                columns = qpos - qa
                self._joint_order = None if np.array_equal(columns, np.arange(len(names))) else columns
        for controller in self.controllers.values():
            controller.bind(world)
        for sensor in self.sensors.values():
            sensor.bind(world)

    def _hinge_joint_names(self, world: Pack) -> list[str]:
        """The robot's hinge and slide joints, in model order (without its name prefix)."""
        if not len(self.slots):
            return []
        prefix = f'{self.name}/'
        mine = [name for name in world.lookup.names('joint') if name.startswith(prefix)]
        if not mine:
            return []
        kinds = world.lookup.joints(mine).type
        return [name[len(prefix):] for name, kind in zip(mine, kinds.tolist(), strict=True)
                if kind in (JointType.HINGE, JointType.SLIDE)]

    def reset_slots(self, slots: np.ndarray, configs: Sequence[RobotCfg]) -> None:
        super().reset_slots(slots, configs)
        for controller in self.controllers.values():
            controller.reset(slots)
        for sensor in self.sensors.values():
            sensor.reset(slots)

    def render_steps(self, slots: np.ndarray) -> np.ndarray:
        """Whether the step that just ran was a camera render step (InternUtopia's ``render``
        entry of a robot's observation), for ``slots``. Shape (len(slots),), bool."""
        world = self.world
        assert world is not None, 'render_steps before bind'
        clock = self._render_clock
        if clock is None:
            clock = self._render_clock = RenderClock.of(self.sim)
        # Every slot keeps the world's one clock (cameras of all slots refresh on the same steps):
        # one decision, from the first slot's time (RenderClock.due, inlined: it runs every step).
        period = clock.period
        due = bool(len(slots)) and (period == 1 or int(round(float(world.data.time[slots[0]]) / clock.physics_dt)) % period == 0)
        # A copy of a kept all-False or all-True row (a copy costs a quarter of np.full).
        rows = self._render_rows
        if rows is None or len(rows[0]) != len(slots):
            rows = self._render_rows = (np.zeros(len(slots), dtype=bool), np.ones(len(slots), dtype=bool))
        return rows[due].copy()

    @observes_by_need
    def get_obs(self, slots: np.ndarray) -> dict[str, Any]:
        """Observation arrays of ``slots`` with a leading ``len(slots)`` axis: position, orientation,
        joints, whether cameras rendered on this step (``render``), and the controllers' and
        sensors' observations by name (only those of :attr:`observed_entries` when it is set)."""
        wanted = self.observed_entries
        if wanted is not None:
            return self._entries(slots, wanted)
        # Runs every step: one dict display, no call that is not needed (each costs about as much as a copy).
        position, orientation = self.poses(slots)
        joint_positions, joint_velocities = self._joint_state(slots)
        return {'position': position, 'orientation': orientation,
                'joint_positions': joint_positions, 'joint_velocities': joint_velocities,
                'render': self.render_steps(slots),
                'controllers': {name: c.get_obs(slots) for name, c in self.controllers.items()},
                'sensors': {name: s.get_obs(slots) for name, s in self.sensors.items()} if self.sensors else {}}

    def _entries(self, slots: np.ndarray, wanted: frozenset[str]) -> dict[str, Any]:
        """The entries ``wanted`` of :meth:`get_obs` (others are not computed)."""
        out: dict[str, Any] = {}
        if 'position' in wanted or 'orientation' in wanted:
            out['position'], out['orientation'] = self.poses(slots)
        if 'joint_positions' in wanted or 'joint_velocities' in wanted:
            out['joint_positions'], out['joint_velocities'] = self._joint_state(slots)
        if 'render' in wanted:
            out['render'] = self.render_steps(slots)
        if 'controllers' in wanted:
            out['controllers'] = {name: c.get_obs(slots) for name, c in self.controllers.items()}
        if 'sensors' in wanted:
            out['sensors'] = {name: s.get_obs(slots) for name, s in self.sensors.items()} if self.sensors else {}
        return out

    def _joint_state(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Joint positions and velocities of ``slots`` in :attr:`joint_names`' order, arrays of their own."""
        joints, columns = self._joint_views, self._joint_order
        if joints is not None and columns is not None and len(slots) == self.env_num:
            # take: an array of its own (a column gather of a slice gives a view of a transposed
            # copy, which the array API's result would copy again)
            return joints[0].take(columns, axis=1), joints[1].take(columns, axis=1)
        if joints is not None and columns is not None and len(slots):
            rows = slots[:, None]
            return joints[0][rows, columns], joints[1][rows, columns]
        if joints is not None and len(slots) == self.env_num:
            return joints[0].copy(), joints[1].copy()
        if joints is not None and len(slots):
            return joints[0][slots], joints[1][slots]  # (a gather copies)
        assert self.world is not None, 'get_obs before bind'
        data, rows = self.world.data, slots[:, None]
        return data.qpos[rows, self.joint_qposadr[slots]], data.qvel[rows, self.joint_dofadr[slots]]
