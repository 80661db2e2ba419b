"""Unitree H1 humanoid (Unitree's MJCF from MuJoCo Menagerie, via a PyPI assets package).

No trained H1 walking policy is published on PyPI, so H1 does not walk: its pelvis is welded
(softly) to a mocap target that ``move_by_speed`` moves like a holonomic base, gravity is
compensated on its links, and every joint holds a standing pose under a position servo. The robot
still collides with the scene. G1 (:mod:`internutopia_extension.robots.g1`) walks for real.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from internutopia.core.robot.base import BaseRobot
from internutopia.core.util.math import quat_to_yaw, yaw_to_quat
from internutopia_extension.configs.robots.h1 import H1_JOINT_NAMES
from internutopia_extension.robots.assets import (
    load_spec,
    make_position_servos,
    menagerie_path,
    strip_for_attach,
    suffix_joint_names,
)

#: (kp, kd) of the standing-pose servos, by joint-name substring.
_H1_GAINS = {'hip': (200.0, 5.0), 'knee': (300.0, 6.0), 'ankle': (40.0, 2.0), 'torso': (300.0, 6.0),
             'shoulder': (40.0, 2.0), 'elbow': (40.0, 2.0)}

#: Sliding friction of H1's soles.
_SOLE_FRICTION = 0.05


class H1UpstreamMethods:
    """InternUtopia's H1 methods of one slot's H1 (its ``post_reset`` looks up the base and ankles by
    prim path, as InternUtopia's does, for subclasses that read them)."""

    config: Any
    name: str
    _rigid_body_map: dict[str, Any]

    def post_reset(self) -> None:
        root = (self.config.prim_path or f'/{self.name}').rstrip('/')
        self._robot_base = self._rigid_body_map[f'{root}/pelvis']
        self._robot_right_ankle = self._rigid_body_map[f'{root}/right_ankle_link']
        self._robot_left_ankle = self._rigid_body_map[f'{root}/left_ankle_link']
        super().post_reset()  # type: ignore[misc]

    def get_ankle_height(self) -> float:
        """The lower ankle's height above the floor (m), world z as InternUtopia reports it."""
        return float(min(self._robot_right_ankle.get_pose()[0][2], self._robot_left_ankle.get_pose()[0][2]))

    def set_gains(self) -> None:
        """The servo gains are set when the model is built (``_H1_GAINS``); nothing to do."""


@BaseRobot.register('H1Robot')
class H1Robot(BaseRobot):
    """H1 carried by a mocap base target; see the module docstring."""

    base_body = 'pelvis'
    mocap_body = 'base_target'
    #: InternUtopia's names and order (Isaac's breadth-first order, ``_joint`` suffix); Menagerie's
    #: file names them without the suffix, depth first, so :meth:`build_spec` renames them.
    joint_names = H1_JOINT_NAMES
    upstream_methods = H1UpstreamMethods

    def build_spec(self) -> mujoco.MjSpec:
        spec = strip_for_attach(load_spec(menagerie_path('unitree_h1', 'h1.xml')))
        suffix_joint_names(spec, '_joint')
        # Unitree's H1 (and InternUtopia's) has an imu_link fixed to the torso where Menagerie has
        # an 'imu' site: extensions look it up by prim path. A massless body with no joint changes
        # nothing in the dynamics.
        imu = spec.site('imu')
        spec.body('torso_link').add_body(name='imu_link', pos=list(imu.pos))
        pelvis = spec.body('pelvis')
        for joint in pelvis.joints:
            if joint.type == mujoco.mjtJoint.mjJNT_FREE:
                joint.name = 'root'
        for body in spec.bodies:
            if body.name != 'world':
                body.gravcomp = 1.0
        make_position_servos(spec, _H1_GAINS, default=(100.0, 4.0))
        for geom in spec.geoms:
            if geom.classname.name in ('foot', 'foot1', 'foot2', 'foot3'):
                # The base glides rather than steps: slippery soles keep the feet from dragging the legs.
                geom.friction = [_SOLE_FRICTION, 0.005, 0.0001]
        target = spec.worldbody.add_body(name=self.mocap_body, mocap=True, pos=list(pelvis.pos))
        target.add_site(name='base_target', size=[0.02, 0, 0], rgba=[1, 0.5, 0, 0.0])
        spec.add_equality(type=mujoco.mjtEq.mjEQ_WELD, objtype=mujoco.mjtObj.mjOBJ_BODY, name1='pelvis',
                          name2=self.mocap_body, solref=[0.02, 1.0], data=[0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0])
        return spec

    @property
    def actuated_joints(self) -> list[str]:
        return list(self.joint_names)

    def bind(self, world, slots) -> None:
        super().bind(world, slots)
        model = world.model
        #: Mocap index of the base target (the same in every slot of the pack).
        self.mocap_index = int(model.body_mocapid[model.body(self.full_name(self.mocap_body)).id])
        self.mocap_id = np.full(self.env_num, -1, dtype=np.intp)
        self.mocap_id[self.slots] = self.mocap_index

    def teleport(self, slot, position, orientation) -> None:
        # The pelvis is welded to the base target: the target goes along (upright, same heading).
        mocap = self.mocap_id[slot]
        data = self.bound_world.data
        if position is not None:
            data.mocap_pos[slot, mocap] = position
        if orientation is not None:
            data.mocap_quat[slot, mocap] = yaw_to_quat(quat_to_yaw(np.asarray(orientation, dtype=float)))
        super().teleport(slot, position, orientation)

    def reset_slots(self, slots, configs) -> None:
        super().reset_slots(slots, configs)
        data = self.bound_world.data
        mocap = self.mocap_id[slots]
        data.mocap_pos[slots, mocap] = np.array([c.position for c in configs])
        # The target is upright (the base glides on the floor): keep only the heading of the start pose.
        orientations = np.array([c.orientation if c.orientation is not None else (1.0, 0.0, 0.0, 0.0) for c in configs], dtype=float)
        data.mocap_quat[slots, mocap] = yaw_to_quat(quat_to_yaw(orientations))
