"""Unitree H1 humanoid (Unitree's MJCF from MuJoCo Menagerie, via a PyPI assets package).

H1 moves in one of two ways, chosen by ``H1RobotCfg.locomotion``:

- ``'walking'`` (the default): H1 walks on its own legs. Nothing holds the pelvis; a walking policy this
  project trained (:mod:`internutopia_extension.robots.h1_locomotion`) sets the leg servo targets
  50 times a second from the pelvis's motion, the joints and the velocity command that
  ``move_by_speed`` gives; the servos' forces are limited to the motors' torque limits.
- ``'carried'``: the pelvis is welded (softly) to a mocap target that ``move_by_speed`` moves like a
  holonomic base, gravity is compensated on its links, and every joint holds a standing pose under
  a position servo. Cheaper to step and exact in where it goes; the robot still collides with the
  scene.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from internutopia.core.robot.base import BaseRobot
from internutopia_extension.configs.robots.h1 import H1_JOINT_NAMES
from internutopia_extension.robots.assets import make_position_servos
from internutopia_extension.robots.carried_base import reset_targets, teleport_target, weld_to_mocap
from internutopia_extension.robots.h1_locomotion import gait, rewards
from internutopia_extension.robots.h1_locomotion.model import h1_base_spec, walking_spec
from internutopia_extension.robots.h1_locomotion.walker import POLICY_PATH, H1Walker
from internutopia_extension.robots.upstream_bodies import UpstreamBodies
from internutopia_extension.robots.walker_driven import WalkerDrivenRobot

#: (kp, kd) of the carried H1's standing-pose servos, by joint-name substring.
_H1_GAINS = {'hip': (200.0, 5.0), 'knee': (300.0, 6.0), 'ankle': (40.0, 2.0), 'torso': (300.0, 6.0),
             'shoulder': (40.0, 2.0), 'elbow': (40.0, 2.0)}

#: Sliding friction of the carried H1's soles.
_SOLE_FRICTION = 0.05


class H1UpstreamMethods(UpstreamBodies):
    """InternUtopia's H1 methods of one slot's H1 (the base and ankles it looks up, for subclasses
    that read them)."""

    upstream_bodies = {'_robot_base': 'pelvis', '_robot_right_ankle': 'right_ankle_link',
                       '_robot_left_ankle': 'left_ankle_link'}
    _robot_right_ankle: Any
    _robot_left_ankle: Any

    def get_ankle_height(self) -> float:
        """The lower ankle's height above the floor (m), world z as InternUtopia reports it."""
        return float(min(self._robot_right_ankle.get_pose()[0][2], self._robot_left_ankle.get_pose()[0][2]))


def _carried_spec(mocap_body: str) -> mujoco.MjSpec:
    spec = h1_base_spec()
    make_position_servos(spec, _H1_GAINS, default=(100.0, 4.0))
    for geom in spec.geoms:
        if geom.classname.name in ('foot', 'foot1', 'foot2', 'foot3'):
            # The base glides rather than steps: slippery soles keep the feet from dragging the legs.
            geom.friction = [_SOLE_FRICTION, 0.005, 0.0001]
    weld_to_mocap(spec, 'pelvis', mocap_body, spec.body('pelvis').pos)
    return spec


@BaseRobot.register('H1Robot')
class H1Robot(WalkerDrivenRobot):
    """A walking or a carried H1; see the module docstring."""

    base_body = 'pelvis'
    mocap_body = 'base_target'
    #: InternUtopia's names and order (Isaac's breadth-first order, ``_joint`` suffix); Menagerie's
    #: file names them without the suffix, depth first, so the model is renamed.
    joint_names = H1_JOINT_NAMES
    upstream_methods = H1UpstreamMethods
    #: The walking rewards and fall check (what ``LocomotionTask`` trains it with).
    locomotion_rewards = rewards

    def __init__(self, config: Any, env_num: int, sim: Any) -> None:
        super().__init__(config, env_num, sim)
        #: The walking controller's runtime (``None`` for a carried H1).
        self.walker: H1Walker | None = None
        if getattr(config, 'locomotion', 'carried') == 'walking':
            self.start_walker(config, env_num, H1Walker, gait, POLICY_PATH, 'H1')

    def build_spec(self) -> mujoco.MjSpec:
        return walking_spec() if self.walker is not None else _carried_spec(self.mocap_body)

    def bind(self, world, slots) -> None:
        super().bind(world, slots)
        model = world.model
        self.mocap_id = np.full(self.env_num, -1, dtype=np.intp)
        if self.walker is not None:
            # Frozen: the walker recognises the group's slots by identity on every step (a new
            # array comes with every bind).
            self.slots.flags.writeable = False
            self.bind_walker(world)
            return
        #: Mocap index of the base target (the same in every slot of the pack).
        self.mocap_index = int(model.body_mocapid[model.body(self.full_name(self.mocap_body)).id])
        self.mocap_id[self.slots] = self.mocap_index

    def teleport(self, slot, position, orientation) -> None:
        if self.walker is None:
            # The pelvis is welded to the base target: the target goes along (upright, same heading).
            teleport_target(self.bound_world.data, slot, self.mocap_id[slot], position, orientation)
        super().teleport(slot, position, orientation)

    def reset_slots(self, slots, configs) -> None:
        super().reset_slots(slots, configs)
        data = self.bound_world.data
        if self.walker is not None:
            self.stand(slots, self.standing_pose)
            self.reset_walking(slots)
            return
        # The target is upright (the base glides on the floor): only the heading of the start pose.
        reset_targets(data, slots, self.mocap_id[slots], np.array([c.position for c in configs]), configs)


__all__ = ['H1Robot', 'H1UpstreamMethods']
