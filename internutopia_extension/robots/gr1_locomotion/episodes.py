"""Episodes a GR1 walking policy is to train in: H1's sampler with GR1's robot.

A GR1 on its walking model stands at the slot origin with a random heading; as H1's
(:mod:`internutopia_extension.robots.h1_locomotion.episodes`), half the episodes hold random
velocity commands for 4-8 s each (some zero: stand still), the other half steer through goal
points the way ``move_to_point`` does, for 20 s or until the robot falls, with pushes every
5-10 s. The command ranges are H1's.
"""

from __future__ import annotations

from typing import Any

from internutopia_extension.robots.gr1_model import STANDING_HEIGHT
from internutopia_extension.robots.h1_locomotion.episodes import (
    ACTION_REPEAT,
    COMMAND_RANGES,
    EPISODE_SECONDS,
    GOAL_SPEED,
    LATERAL_SHARE,
    PHYSICS_DT,
    PUSH_SPEED,
    SIDESTEP_SHARE,
    STAND_SHARE,
    walk_sampler,
)

#: Pelvis height a GR1 starts at (standing pose, soles 1 cm above the floor).
START_HEIGHT = round(STANDING_HEIGHT + 0.01, 3)


def gr1_walk_sampler(batch: int = 16, seconds: float = EPISODE_SECONDS, pushes: bool = True,
                     lateral_share: float = LATERAL_SHARE, reward_scales: dict[str, float] | None = None,
                     sidestep_share: float = SIDESTEP_SHARE, hands: str = 'servo',
                     stand_share: float = STAND_SHARE) -> Any:
    """An endless sampler of GR1 training episodes (``walk_sampler``'s arguments and result).

    ``hands='welded'`` puts the GR1 of each episode on the model with its hands welded to the
    wrists (``GR1WeldedHandsRobotCfg``: the walking trainer's, a physics step about 40 % cheaper);
    the default ``'servo'`` is GR1 as users drive it."""
    from internutopia_extension.configs.controllers.gr1_leg_action import GR1LegActionControllerCfg
    from internutopia_extension.configs.robots.gr1 import GR1RobotCfg, GR1WeldedHandsRobotCfg
    from internutopia_extension.robots.gr1_model import check_hands

    robot_cfg = GR1WeldedHandsRobotCfg if check_hands(hands) == 'welded' else GR1RobotCfg

    def gr1(position: tuple, orientation: tuple) -> Any:
        return robot_cfg(locomotion='walking', walking_policy='controller', position=position, orientation=orientation,
                         controllers=[GR1LegActionControllerCfg()])

    return walk_sampler(batch=batch, seconds=seconds, pushes=pushes, lateral_share=lateral_share, reward_scales=reward_scales,
                        sidestep_share=sidestep_share, make_robot=gr1, ranges=COMMAND_RANGES, goal_speed=GOAL_SPEED,
                        push_speed=PUSH_SPEED, start_height=START_HEIGHT, stand_share=stand_share)


__all__ = ['ACTION_REPEAT', 'COMMAND_RANGES', 'EPISODE_SECONDS', 'PHYSICS_DT', 'START_HEIGHT', 'gr1_walk_sampler']
