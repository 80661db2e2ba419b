"""Robots and the vectorized "entity group" they are built on.

An :class:`Entity` object stands for one named robot or object *in every slot that has it* (the
same name and the same structure). Its state arrays are indexed by slot id, so a world rebuild
only re-binds model indices and leaves controller state untouched. Per-step work (controllers,
observations) runs once per entity group over all its slots, with numpy, never per robot.

A robot type implements :meth:`BaseRobot.build_spec` (a standalone ``MjSpec`` with a root body
named :attr:`BaseRobot.base_body`) and registers itself::

    @BaseRobot.register('MyRobot')
    class MyRobot(BaseRobot):
        base_body = 'base'
        def build_spec(self) -> mujoco.MjSpec: ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import mujoco
import numpy as np

from internutopia.core.config import ObjectCfg, RobotCfg, SimConfig
from internutopia.core.registry import Registry

if TYPE_CHECKING:
    from internutopia.core.backend.mujoco.world import Shard
    from internutopia.core.controller.base import BaseController
    from internutopia.core.sensor.base import BaseSensor

NO_ID = -1


class Entity:
    """A named robot or object in a set of slots of one shard, bound to that shard's model indices."""

    #: Name of the body whose pose is the entity's ``position``/``orientation``.
    base_body: str = ''

    def __init__(self, config: RobotCfg | ObjectCfg, env_num: int, sim: SimConfig) -> None:
        self.config = config
        self.name = config.name
        self.env_num = env_num
        self.sim = sim
        self.slots = np.zeros(0, dtype=np.intp)
        self.world: Shard | None = None
        self.base_body_id = np.full(env_num, NO_ID, dtype=np.intp)
        self.root_qposadr = np.full(env_num, NO_ID, dtype=np.intp)
        self.root_dofadr = np.full(env_num, NO_ID, dtype=np.intp)

    # -- structure ---------------------------------------------------------------------------
    def build_spec(self) -> mujoco.MjSpec:
        """A fresh standalone spec of this entity (its root body named :attr:`base_body`)."""
        raise NotImplementedError

    def spec(self) -> mujoco.MjSpec:
        """The spec to attach into a slot: :meth:`build_spec` plus whatever sensors add."""
        return self.build_spec()

    def full_name(self, slot: int, element: str) -> str:
        """The compiled-model name of ``element`` of this entity in ``slot``."""
        return f'env{slot}/{self.name}/{element}'

    def bind(self, world: 'Shard', slots: np.ndarray) -> None:
        """Look up this entity's model indices in every slot of ``slots`` (after a compile)."""
        self.world = world
        self.slots = np.asarray(sorted(int(s) for s in slots), dtype=np.intp)
        model = world.model
        self.base_body_id[:] = NO_ID
        self.root_qposadr[:] = NO_ID
        self.root_dofadr[:] = NO_ID
        for slot in self.slots:
            body = model.body(self.full_name(slot, self.base_body))
            self.base_body_id[slot] = body.id
            if model.body_jntnum[body.id] and int(model.jnt_type[model.body_jntadr[body.id]]) == int(mujoco.mjtJoint.mjJNT_FREE):
                joint = model.body_jntadr[body.id]
                self.root_qposadr[slot] = model.jnt_qposadr[joint]
                self.root_dofadr[slot] = model.jnt_dofadr[joint]

    def ids(self, slots: np.ndarray, kind: str, names: list[str]) -> np.ndarray:
        """Model ids ``(len(slots), len(names))`` of this entity's elements of ``kind`` (e.g. 'joint')."""
        model = self.world.model
        lookup: Callable[[str], Any] = getattr(model, kind)
        return np.array([[lookup(self.full_name(s, n)).id for n in names] for s in slots], dtype=np.intp).reshape(len(slots), len(names))

    # -- state -------------------------------------------------------------------------------
    def reset_slots(self, slots: np.ndarray, configs: list[RobotCfg | ObjectCfg]) -> None:
        """Put the entity of each slot at its episode's start pose, at rest."""
        data = self.world.data
        origins = self.world.origins[slots]
        for slot, origin, config in zip(slots, origins, configs):
            adr = self.root_qposadr[slot]
            if adr == NO_ID:
                continue
            data.qpos[adr:adr + 3] = origin + np.asarray(config.position)
            data.qpos[adr + 3:adr + 7] = config.orientation if config.orientation is not None else (1.0, 0.0, 0.0, 0.0)

    def poses(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Env-local positions ``(k, 3)`` and wxyz orientations ``(k, 4)`` of the base body."""
        bodies = self.base_body_id[slots]
        data = self.world.data
        return data.xpos[bodies] - self.world.origins[slots], data.xquat[bodies].copy()

    def get_obs(self, slots: np.ndarray) -> dict[str, Any]:
        """Observation arrays with a leading ``len(slots)`` axis."""
        position, orientation = self.poses(slots)
        return {'position': position, 'orientation': orientation}

    # -- stepping hooks ----------------------------------------------------------------------
    def begin_step(self) -> None:
        """Called once per env step, before controllers apply this step's commands."""

    def before_physics(self) -> None:
        """Called once per env step, after controllers and before the physics step."""


class BaseRobot(Entity):
    """A robot type: its model, its controllers and sensors, vectorized over slots."""

    registry: Registry[type['BaseRobot']] = Registry('robot')
    #: Names of the joints reported as ``joint_positions``/``joint_velocities`` (model order if empty).
    joint_names: list[str] = []

    def __init__(self, config: RobotCfg, env_num: int, sim: SimConfig) -> None:
        super().__init__(config, env_num, sim)
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

    @classmethod
    def register(cls, name: str) -> Callable[[type['BaseRobot']], type['BaseRobot']]:
        """Class decorator registering a robot type under ``name`` (the config's ``type``)."""
        return cls.registry.register(name)

    @classmethod
    def create(cls, config: RobotCfg, env_num: int, sim: SimConfig, where: str = '') -> 'BaseRobot':
        """Instantiate the robot class registered for ``config.type``."""
        return cls.registry.get(config.type, where)(config, env_num, sim)

    def spec(self) -> mujoco.MjSpec:
        spec = self.build_spec()
        for sensor in self.sensors.values():
            sensor.add_to_spec(spec)
        return spec

    def bind(self, world: 'Shard', slots: np.ndarray) -> None:
        super().bind(world, slots)
        model = world.model
        names = self.joint_names or self._hinge_joint_names(model)
        self.joint_names = names
        self.joint_qposadr = np.zeros((self.env_num, len(names)), dtype=np.intp)
        self.joint_dofadr = np.zeros((self.env_num, len(names)), dtype=np.intp)
        if len(self.slots):
            joints = self.ids(self.slots, 'joint', names)
            self.joint_qposadr[self.slots] = model.jnt_qposadr[joints]
            self.joint_dofadr[self.slots] = model.jnt_dofadr[joints]
        for part in (*self.controllers.values(), *self.sensors.values()):
            part.bind(world)

    def _hinge_joint_names(self, model: mujoco.MjModel) -> list[str]:
        if not len(self.slots):
            return []
        prefix = f'env{self.slots[0]}/{self.name}/'
        return [model.joint(j).name[len(prefix):] for j in range(model.njnt)
                if model.joint(j).name.startswith(prefix)
                and int(model.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))]

    def reset_slots(self, slots: np.ndarray, configs: list[RobotCfg]) -> None:
        super().reset_slots(slots, configs)
        for part in (*self.controllers.values(), *self.sensors.values()):
            part.reset(slots)

    def get_obs(self, slots: np.ndarray) -> dict[str, Any]:
        obs = super().get_obs(slots)
        data = self.world.data
        obs['joint_positions'] = data.qpos[self.joint_qposadr[slots]]
        obs['joint_velocities'] = data.qvel[self.joint_dofadr[slots]]
        obs['controllers'] = {name: c.get_obs(slots) for name, c in self.controllers.items()}
        obs['sensors'] = {name: s.get_obs(slots) for name, s in self.sensors.items()}
        return obs
