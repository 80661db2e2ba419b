"""The ``internutopia/H1Walk-v0`` id: a walking H1 learns to follow velocity commands.

Episodes are sampled endlessly from the env's seeded generator: an H1 standing at the slot
origin with a random heading, given a new random command every 4-8 s (forward -0.3 to 1 m/s,
lateral up to +-0.4 m/s, yaw rate up to +-1 rad/s, sometimes zero: stand still), for 20 s or
until it falls; every 5-10 s it is pushed (0.25-0.5 m/s of pelvis velocity). The action is the 10 leg actions of the walking controller
(:mod:`internutopia_extension.robots.h1_locomotion.gait`), one every 0.02 s (four 200 Hz physics
steps); the observation is the controller's 41 numbers; the reward is the walking reward of
:mod:`internutopia_extension.robots.h1_locomotion.rewards`. Episode records (``info['metrics']``)
say whether the robot fell and how well it tracked its commands.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Physics steps per action (a 50 Hz policy over 200 Hz physics).
ACTION_REPEAT = 4
PHYSICS_DT = 0.005
EPISODE_SECONDS = 20.0
#: Seconds a command holds before the next (drawn uniformly).
COMMAND_HOLD = (4.0, 8.0)
#: Command ranges of training episodes: forward, lateral (m/s), yaw rate (rad/s).
FORWARD_RANGE = (-0.3, 1.0)
LATERAL_RANGE = (-0.4, 0.4)
YAW_RATE_RANGE = (-1.0, 1.0)
#: Share of commands that are zero (stand), and of those with a lateral or a yaw part.
STAND_SHARE = 0.15
LATERAL_SHARE = 0.4
YAW_SHARE = 0.5
#: Pelvis height a walking H1 starts at (standing pose, soles 1 cm above the floor).
START_HEIGHT = 1.0
#: Pushes of training episodes: every 5-10 s, up to 0.5 m/s of pelvis velocity.
PUSH_INTERVAL = (5.0, 10.0)
PUSH_SPEED = 0.5


def random_command(rng: np.random.Generator) -> tuple[float, float, float]:
    """One training command ``(forward, lateral, yaw_rate)``."""
    if rng.random() < STAND_SHARE:
        return (0.0, 0.0, 0.0)
    forward = float(rng.uniform(*FORWARD_RANGE))
    lateral = float(rng.uniform(*LATERAL_RANGE)) if rng.random() < LATERAL_SHARE else 0.0
    yaw_rate = float(rng.uniform(*YAW_RATE_RANGE)) if rng.random() < YAW_SHARE else 0.0
    return (forward, lateral, yaw_rate)


def walk_sampler(batch: int = 16, seconds: float = EPISODE_SECONDS, pushes: bool = True) -> Any:
    """An endless episode sampler ``f(rng) -> list[LocomotionTaskCfg]``, ``batch`` episodes a call
    (with random pushes unless ``pushes`` is false)."""
    from internutopia.macros import gm
    from internutopia_extension.configs.controllers.h1_leg_action import H1LegActionControllerCfg
    from internutopia_extension.configs.robots.h1 import H1RobotCfg
    from internutopia_extension.configs.tasks import LocomotionTaskCfg

    def episode(rng: np.random.Generator, index: int) -> Any:
        yaw = float(rng.uniform(-np.pi, np.pi))
        robot = H1RobotCfg(locomotion='walking', walking_policy='controller', position=(0.0, 0.0, START_HEIGHT),
                           orientation=(float(np.cos(yaw / 2)), 0.0, 0.0, float(np.sin(yaw / 2))),
                           controllers=[H1LegActionControllerCfg()])
        commands, start = [], 0.0
        while start < seconds:
            commands.append((start, *random_command(rng)))
            start += float(rng.uniform(*COMMAND_HOLD))
        return LocomotionTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', robots=[robot],
                                 max_steps=int(round(seconds / PHYSICS_DT)), commands=commands,
                                 push_interval=PUSH_INTERVAL if pushes else None, push_speed=PUSH_SPEED)

    def sample(rng: np.random.Generator) -> list:
        return [episode(rng, i) for i in range(batch)]

    sample.first = episode(np.random.default_rng(0), 0)  # type: ignore[attr-defined]
    return sample


def make_walk_vec(num_envs: int = 64, seconds: float = EPISODE_SECONDS, metrics_save_path: str = 'none',
                  backend: str = 'mujoco', device: str | None = None, pushes: bool = True, **kwargs: Any) -> Any:
    """The H1 walking :class:`~internutopia.core.gym_vector.VectorEnv` (see the module docstring)
    on physics ``backend`` (and ``device``, for ``'warp'``); ``kwargs`` go to ``VectorEnv``
    (``autoreset_mode``, ...)."""
    from gymnasium import spaces

    from internutopia.core.config import Config, SimConfig
    from internutopia.core.gym_vector import VectorEnv
    from internutopia_extension.robots.h1_locomotion.gait import ACTION_SIZE

    sampler = walk_sampler(seconds=seconds, pushes=pushes)
    config = Config(simulator=SimConfig(physics_dt=PHYSICS_DT, rendering_dt=PHYSICS_DT, backend=backend, device=device), env_num=num_envs,
                    env_offset_size=3.0, metrics_save_path=metrics_save_path, task_configs=[sampler.first])
    kwargs.setdefault('action_space', spaces.Box(-1.0, 1.0, (ACTION_SIZE,), dtype=np.float32))
    kwargs.setdefault('obs_keys', ['robot.policy_obs'])
    return VectorEnv(config, episodes=sampler, robot='h1', controller='leg_action', action_repeat=ACTION_REPEAT, **kwargs)


__all__ = ['make_walk_vec', 'random_command', 'walk_sampler']
