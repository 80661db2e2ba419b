"""Episodes Aliengo's walking policy trains in: H1's sampler with a quadruped's robot and ranges.

An Aliengo stands at the slot origin with a random heading; as H1's
(:mod:`internutopia_extension.robots.h1_locomotion.episodes`), half the episodes hold random
velocity commands for 4-8 s each (some zero: stand still), the other half steer through goal
points the way ``move_to_point`` does, for 20 s or until the robot falls, with pushes every 5-10 s.
The commands span :data:`COMMAND_RANGES` (InternUtopia's Aliengo configs walk at 1 m/s and
rotate at 2 rad/s).
"""

from __future__ import annotations

from typing import Any

from internutopia_extension.robots.h1_locomotion.episodes import ACTION_REPEAT, EPISODE_SECONDS, PHYSICS_DT, STAND_SHARE, walk_sampler

#: Command ranges of training episodes: forward, lateral (m/s), yaw rate (rad/s).
COMMAND_RANGES = ((-0.6, 1.2), (-0.6, 0.6), (-2.0, 2.0))
#: Forward speeds of goal-steering episodes (m/s).
GOAL_SPEED = (0.4, 1.2)
#: Base height an Aliengo starts at (standing pose, feet 1 cm above the floor).
START_HEIGHT = 0.37
#: Pushes: up to this much base velocity (m/s).
PUSH_SPEED = 0.5


def aliengo_walk_sampler(batch: int = 16, seconds: float = EPISODE_SECONDS, pushes: bool = True,
                         lateral_share: float = 0.5, reward_scales: dict[str, float] | None = None,
                         sidestep_share: float = 0.1, stand_share: float = STAND_SHARE) -> Any:
    """An endless sampler of Aliengo training episodes (``walk_sampler``'s arguments and result)."""
    from internutopia_extension.configs.controllers.aliengo_leg_action import AliengoLegActionControllerCfg
    from internutopia_extension.configs.robots.aliengo import AliengoRobotCfg

    def aliengo(position: tuple, orientation: tuple) -> Any:
        return AliengoRobotCfg(walking_policy='controller', position=position, orientation=orientation,
                               controllers=[AliengoLegActionControllerCfg()])

    return walk_sampler(batch=batch, seconds=seconds, pushes=pushes, lateral_share=lateral_share, reward_scales=reward_scales,
                        sidestep_share=sidestep_share, make_robot=aliengo, ranges=COMMAND_RANGES, goal_speed=GOAL_SPEED,
                        push_speed=PUSH_SPEED, start_height=START_HEIGHT, stand_share=stand_share)


__all__ = ['ACTION_REPEAT', 'COMMAND_RANGES', 'PHYSICS_DT', 'aliengo_walk_sampler']
