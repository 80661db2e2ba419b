"""Fourier GR1 T2 with two Inspire hands (InternUtopia's ``GR1Robot``; the model is
:mod:`~internutopia_extension.robots.gr1_model`, from ``fourier-robot-descriptions``).

GR1 moves in one of two ways, chosen by ``GR1RobotCfg.locomotion``:

- ``'carried'`` (the default, and for now the only one that moves): the pelvis (``base_link``) is
  welded (softly) to a mocap target that ``move_by_speed`` moves like a holonomic base, gravity
  is compensated on its links and every joint holds :data:`~.gr1_model.STANDING_POSE` under a
  position servo: H1's carried mode. The robot still collides with the scene. A spawn height up to
  :data:`DROP_MARGIN` above the standing height (InternUtopia spawns GR1 at 0.95 m and lets it
  drop onto its feet) is taken as the standing height, so the soles rest on the floor.
- ``'walking'``: the physics-honest model (:func:`~.gr1_model.walking_spec`): a free pelvis, no
  gravity compensation, servos at Fourier's gains limited to the URDF's effort limits, sole
  sensors for a walking controller. No GR1 walking policy is trained yet, so nothing drives the
  legs: the servos hold the standing pose, and ``move_by_speed`` refuses commands.

``joint_positions`` and ``joint_velocities`` are the 54 joints in InternUtopia's order
(:data:`~internutopia_extension.configs.robots.gr1.GR1_JOINT_NAMES`).
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from internutopia.core.robot.base import BaseRobot
from internutopia.core.util.math import quat_to_yaw, yaw_to_quat
from internutopia_extension.configs.robots.gr1 import GR1_JOINT_NAMES
from internutopia_extension.robots.gr1_model import STANDING_HEIGHT, STANDING_POSE, WALKING_PHYSICS_DT, carried_spec, walking_spec

#: A carried GR1 spawned at most this far above its standing height stands on the floor instead.
DROP_MARGIN = 0.1


class GR1UpstreamMethods:
    """InternUtopia's GR1 methods of one slot's GR1 (its base is the torso, as InternUtopia's)."""

    config: Any
    name: str
    _rigid_body_map: dict[str, Any]

    def post_reset(self) -> None:
        root = (self.config.prim_path or f'/{self.name}').rstrip('/')
        self._robot_base = self._rigid_body_map[f'{root}/torso_link']
        self._imu_in_torso = self._rigid_body_map[f'{root}/imu_link']
        super().post_reset()  # type: ignore[misc]

    def get_robot_base(self) -> Any:
        """The torso link, as InternUtopia's GR1 gives it."""
        return self._robot_base

    def set_gains(self) -> None:
        """The servo gains are set when the model is built; nothing to do."""


@BaseRobot.register('GR1Robot')
class GR1Robot(BaseRobot):
    """A carried or a standing (walking model) GR1; see the module docstring."""

    base_body = 'base_link'
    mocap_body = 'base_target'
    joint_names = GR1_JOINT_NAMES
    upstream_methods = GR1UpstreamMethods
    #: No trained walking policy yet (a walker sets this when one drives the legs).
    walker: Any = None

    def __init__(self, config: Any, env_num: int, sim: Any) -> None:
        # (set first: the controllers, made in BaseRobot's __init__, read it)
        self.carried = getattr(config, 'locomotion', 'carried') == 'carried'
        super().__init__(config, env_num, sim)
        if not self.carried:
            # The servo gains are stiff for the light wrists and ankles: 200 Hz physics at least.
            self.max_physics_dt = WALKING_PHYSICS_DT
        self._standing = np.array([STANDING_POSE.get(name, 0.0) for name in self.joint_names])

    def build_spec(self) -> mujoco.MjSpec:
        return carried_spec(self.mocap_body) if self.carried else walking_spec()

    @property
    def actuated_joints(self) -> list[str]:
        return list(self.joint_names)

    def bind(self, world, slots) -> None:
        super().bind(world, slots)
        self.mocap_id = np.full(self.env_num, -1, dtype=np.intp)
        if self.carried:
            #: Mocap index of the base target (the same in every slot of the pack).
            self.mocap_index = int(world.model.body_mocapid[world.model.body(self.full_name(self.mocap_body)).id])
            self.mocap_id[self.slots] = self.mocap_index

    def teleport(self, slot, position, orientation) -> None:
        if self.carried:
            # The pelvis is welded to the base target: the target goes along (upright, same heading).
            data, mocap = self.bound_world.data, self.mocap_id[slot]
            if position is not None:
                data.mocap_pos[slot, mocap] = position
            if orientation is not None:
                data.mocap_quat[slot, mocap] = yaw_to_quat(quat_to_yaw(np.asarray(orientation, dtype=float)))
        super().teleport(slot, position, orientation)

    def reset_slots(self, slots, configs) -> None:
        super().reset_slots(slots, configs)
        data = self.bound_world.data
        rows = slots[:, None]
        data.qpos[rows, self.joint_qposadr[slots]] = self._standing
        data.qvel[rows, self.joint_dofadr[slots]] = 0.0
        data.ctrl[rows, self.ids(slots, 'actuator', list(self.joint_names))] = self._standing
        positions = np.array([c.position for c in configs], dtype=float)
        # InternUtopia drops GR1 onto its feet from a little above its standing height.
        above = positions[:, 2] - STANDING_HEIGHT
        positions[:, 2] = np.where((above > 0.0) & (above <= DROP_MARGIN), STANDING_HEIGHT, positions[:, 2])
        assert self._root_qposadr is not None  # (a free pelvis)
        data.qpos[slots, self._root_qposadr + 2] = positions[:, 2]
        if not self.carried:
            data.qvel[rows, self.root_dofadr[slots][:, None] + np.arange(6)] = 0.0
            return
        mocap = self.mocap_id[slots]
        data.mocap_pos[slots, mocap] = positions
        # The target is upright (the base glides on the floor): keep only the heading of the start pose.
        orientations = np.array([c.orientation if c.orientation is not None else (1.0, 0.0, 0.0, 0.0) for c in configs], dtype=float)
        data.mocap_quat[slots, mocap] = yaw_to_quat(quat_to_yaw(orientations))


__all__ = ['DROP_MARGIN', 'GR1Robot', 'GR1UpstreamMethods']
