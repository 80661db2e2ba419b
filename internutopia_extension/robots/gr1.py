"""Fourier GR1 T2 with two Inspire hands (InternUtopia's ``GR1Robot``; the model is
:mod:`~internutopia_extension.robots.gr1_model`, from ``fourier-robot-descriptions``).

GR1 moves in one of two ways, chosen by ``GR1RobotCfg.locomotion``:

- ``'walking'`` (the default): the physics-honest model (:func:`~.gr1_model.walking_spec`): a free
  pelvis, no gravity compensation, servos at Fourier's gains limited to the URDF's effort limits,
  sole sensors, and H1's walker with GR1's gait (:mod:`~internutopia_extension.robots.gr1_locomotion`)
  setting the 12 leg servo targets 50 times a second from the walking policy this project trained
  (:data:`~internutopia_extension.robots.gr1_locomotion.walker.POLICY_PATH`, ``walking_policy='default'``),
  an exported ONNX policy of your own (its path), or a training loop's actions
  (``walking_policy='controller'``: the walker's ``pending_action``; zero holds the standing pose,
  and with no balance GR1 then falls within seconds).
- ``'carried'``: the pelvis (``base_link``) is welded (softly) to a mocap target that
  ``move_by_speed`` moves like a holonomic base, gravity is compensated on its links and every
  joint holds :data:`~.gr1_model.STANDING_POSE` under a position servo: H1's carried mode. The
  robot still collides with the scene.

In both, a spawn height up to :data:`DROP_MARGIN` above the standing height (InternUtopia spawns
GR1 at 0.95 m and lets it drop onto its feet) is taken as the standing height: the soles rest on
the floor. ``joint_positions`` and ``joint_velocities`` are the 54 joints in InternUtopia's order
(:data:`~internutopia_extension.configs.robots.gr1.GR1_JOINT_NAMES`).
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from internutopia.core.robot.base import BaseRobot
from internutopia_extension.configs.robots.gr1 import GR1_BODY_JOINT_NAMES, GR1_JOINT_NAMES
from internutopia_extension.robots.carried_base import reset_targets, teleport_target
from internutopia_extension.robots.gr1_locomotion import gait, rewards
from internutopia_extension.robots.gr1_locomotion.walker import POLICY_PATH, GR1Walker
from internutopia_extension.robots.gr1_model import STANDING_HEIGHT, STANDING_POSE, carried_spec, walking_spec
from internutopia_extension.robots.upstream_bodies import UpstreamBodies
from internutopia_extension.robots.walker_driven import WalkerDrivenRobot

#: A GR1 spawned at most this far above its standing height stands on the floor instead.
DROP_MARGIN = 0.1


class GR1UpstreamMethods(UpstreamBodies):
    """InternUtopia's GR1 attributes of one slot's GR1 (its base is the torso, as InternUtopia's)."""

    upstream_bodies = {'_robot_base': 'torso_link', '_imu_in_torso': 'imu_link'}


@BaseRobot.register('GR1Robot')
class GR1Robot(WalkerDrivenRobot):
    """A carried GR1, or one on its walking model driven by a walker; see the module docstring."""

    base_body = 'base_link'
    mocap_body = 'base_target'
    joint_names = GR1_JOINT_NAMES
    upstream_methods = GR1UpstreamMethods
    #: The walking rewards and fall check (what ``LocomotionTask`` trains a walking GR1 with).
    locomotion_rewards = rewards

    def __init__(self, config: Any, env_num: int, sim: Any) -> None:
        # (set first: the controllers, made in BaseRobot's __init__, read them)
        self.carried = getattr(config, 'locomotion', 'carried') == 'carried'
        #: The walking controller's runtime (``None`` for a carried GR1).
        self.walker: GR1Walker | None = None
        if not self.carried:
            # The walker ticks at 50 Hz over 200 Hz physics: longer physics steps run in substeps.
            self.start_walker(config, env_num, GR1Walker, gait, POLICY_PATH, 'GR1')
        super().__init__(config, env_num, sim)
        self.standing_pose = np.array([STANDING_POSE.get(name, 0.0) for name in self.joint_names])  # (carried too)

    def build_spec(self) -> mujoco.MjSpec:
        return carried_spec(self.mocap_body) if self.carried else walking_spec()

    def bind(self, world, slots) -> None:
        super().bind(world, slots)
        self.mocap_id = np.full(self.env_num, -1, dtype=np.intp)
        self.bind_walker(world)
        if self.carried:
            #: Mocap index of the base target (the same in every slot of the pack).
            self.mocap_index = int(world.model.body_mocapid[world.model.body(self.full_name(self.mocap_body)).id])
            self.mocap_id[self.slots] = self.mocap_index

    def teleport(self, slot, position, orientation) -> None:
        if self.carried:
            # The pelvis is welded to the base target: the target goes along (upright, same heading).
            teleport_target(self.bound_world.data, slot, self.mocap_id[slot], position, orientation)
        super().teleport(slot, position, orientation)

    def reset_slots(self, slots, configs) -> None:
        super().reset_slots(slots, configs)
        self.stand(slots, self.standing_pose)
        data = self.bound_world.data
        positions = np.array([c.position for c in configs], dtype=float)
        # InternUtopia drops GR1 onto its feet from a little above its standing height.
        above = positions[:, 2] - STANDING_HEIGHT
        positions[:, 2] = np.where((above > 0.0) & (above <= DROP_MARGIN), STANDING_HEIGHT, positions[:, 2])
        assert self._root_qposadr is not None  # (a free pelvis)
        data.qpos[slots, self._root_qposadr + 2] = positions[:, 2]
        if self.walker is not None:
            self.reset_walking(slots)
            return
        # The target is upright (the base glides on the floor): only the heading of the start pose.
        reset_targets(data, slots, self.mocap_id[slots], positions, configs)


@BaseRobot.register('GR1WeldedHandsRobot')
class GR1WeldedHandsRobot(GR1Robot):
    """GR1 on its walking model with both hands welded to the wrists (38 dof instead of 60; see
    :func:`~internutopia_extension.robots.gr1_model.weld_hands`): what the walking trainer trains
    on. Its joints, observations and joint targets are the 32 of the body (no fingers)."""

    joint_names = GR1_BODY_JOINT_NAMES

    def __init__(self, config: Any, env_num: int, sim: Any) -> None:
        if getattr(config, 'locomotion', 'walking') != 'walking':
            raise ValueError(f"robot {config.name!r}: GR1WeldedHandsRobot is the walking model only (locomotion='walking'); "
                             "a carried GR1 is GR1Robot's")
        super().__init__(config, env_num, sim)

    def build_spec(self) -> mujoco.MjSpec:
        return walking_spec(hands='welded')


__all__ = ['DROP_MARGIN', 'GR1Robot', 'GR1UpstreamMethods', 'GR1WeldedHandsRobot']
