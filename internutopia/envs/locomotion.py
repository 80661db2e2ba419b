"""The ``internutopia/H1Walk-v0`` and ``internutopia/AliengoWalk-v0`` ids: a walking robot learns
to follow velocity commands.

The episodes are :mod:`internutopia_extension.robots.h1_locomotion.episodes`' (random commands
and pushes for 20 s, or until the robot falls). The action is the 10 leg actions of the walking
controller (:mod:`internutopia_extension.robots.h1_locomotion.gait`), one every 0.02 s (four
200 Hz physics steps); the observation is the controller's 44 numbers; the reward is the walking
reward of :mod:`internutopia_extension.robots.h1_locomotion.rewards`. Episode records
(``info['metrics']``) say whether the robot fell and how well it tracked its commands.

``AliengoWalk-v0`` is the same with a quadruped: :mod:`internutopia_extension.robots.aliengo_locomotion`'s
episodes, 12 leg actions, a 50-number observation and its rewards. ``GR1Walk-v0`` is the same with
GR1 (:mod:`internutopia_extension.robots.gr1_locomotion`: 12 leg actions, 50 numbers).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def make_walk_vec(num_envs: int = 64, seconds: float | None = None, metrics_save_path: str = 'none',
                  backend: str = 'mujoco', device: str | None = None, pushes: bool = True, lateral_share: float | None = None,
                  reward_scales: dict[str, float] | None = None, sidestep_share: float | None = None,
                  stand_share: float | None = None, **kwargs: Any) -> Any:
    """The H1 walking :class:`~internutopia.core.gym_vector.VectorEnv` (see the module docstring)
    on physics ``backend`` (and ``device``, for ``'warp'``); ``lateral_share``, ``sidestep_share``,
    ``stand_share`` and ``reward_scales`` go to the episode sampler (its defaults when ``None``); ``kwargs`` go to ``VectorEnv``
    (``autoreset_mode``, ...)."""
    shares = {'lateral_share': lateral_share, 'sidestep_share': sidestep_share, 'stand_share': stand_share}
    return _robot_walk_vec('h1', num_envs, seconds, metrics_save_path, backend, device, pushes, reward_scales, shares,
                           sampler_name='walk_sampler', **kwargs)


def _walk_vec(sampler: Any, robot: str, action_size: int, num_envs: int, metrics_save_path: str, backend: str,
              device: str | None, **kwargs: Any) -> Any:
    from gymnasium import spaces

    from internutopia.core.config import Config, SimConfig
    from internutopia.core.gym_vector import VectorEnv
    from internutopia_extension.robots.h1_locomotion import episodes

    config = Config(simulator=SimConfig(physics_dt=episodes.PHYSICS_DT, rendering_dt=episodes.PHYSICS_DT, backend=backend, device=device), env_num=num_envs,
                    env_offset_size=3.0, metrics_save_path=metrics_save_path, task_configs=[sampler.first])
    kwargs.setdefault('action_space', spaces.Box(-1.0, 1.0, (action_size,), dtype=np.float32))
    kwargs.setdefault('obs_keys', ['robot.policy_obs'])
    return VectorEnv(config, episodes=sampler, robot=robot, controller='leg_action', action_repeat=episodes.ACTION_REPEAT, **kwargs)


def make_aliengo_walk_vec(num_envs: int = 64, seconds: float | None = None, metrics_save_path: str = 'none',
                          backend: str = 'mujoco', device: str | None = None, pushes: bool = True, lateral_share: float | None = None,
                          reward_scales: dict[str, float] | None = None, sidestep_share: float | None = None,
                          stand_share: float | None = None, **kwargs: Any) -> Any:
    """The Aliengo walking :class:`~internutopia.core.gym_vector.VectorEnv` (``make_walk_vec``'s
    arguments; the sampler is :func:`~internutopia_extension.robots.aliengo_locomotion.episodes.aliengo_walk_sampler`)."""
    shares = {'lateral_share': lateral_share, 'sidestep_share': sidestep_share, 'stand_share': stand_share}
    return _robot_walk_vec('aliengo', num_envs, seconds, metrics_save_path, backend, device, pushes, reward_scales, shares, **kwargs)


def make_gr1_walk_vec(num_envs: int = 64, seconds: float | None = None, metrics_save_path: str = 'none',
                      backend: str = 'mujoco', device: str | None = None, pushes: bool = True, lateral_share: float | None = None,
                      reward_scales: dict[str, float] | None = None, sidestep_share: float | None = None, hands: str = 'servo',
                      stand_share: float | None = None, **kwargs: Any) -> Any:
    """The GR1 walking :class:`~internutopia.core.gym_vector.VectorEnv` (``make_walk_vec``'s
    arguments; the sampler is :func:`~internutopia_extension.robots.gr1_locomotion.episodes.gr1_walk_sampler`).
    ``hands='welded'``: GR1 with its hands welded to the wrists, the walking trainer's model."""
    options = {'lateral_share': lateral_share, 'sidestep_share': sidestep_share, 'stand_share': stand_share, 'hands': hands}
    return _robot_walk_vec('gr1', num_envs, seconds, metrics_save_path, backend, device, pushes, reward_scales, options, **kwargs)


def _robot_walk_vec(robot: str, num_envs: int, seconds: float | None, metrics_save_path: str, backend: str, device: str | None,
                    pushes: bool, reward_scales: dict[str, float] | None, sampler_options: dict[str, Any],
                    sampler_name: str | None = None, **kwargs: Any) -> Any:
    """The walking env of ``robot`` from its ``{robot}_locomotion`` episodes (``sampler_name``, by
    default ``{robot}_walk_sampler``, given ``sampler_options`` but those that are ``None``: the
    sampler's defaults) and gait."""
    import importlib

    episodes = importlib.import_module(f'internutopia_extension.robots.{robot}_locomotion.episodes')
    gait = importlib.import_module(f'internutopia_extension.robots.{robot}_locomotion.gait')
    sampler = getattr(episodes, sampler_name or f'{robot}_walk_sampler')(
        seconds=episodes.EPISODE_SECONDS if seconds is None else seconds, pushes=pushes, reward_scales=reward_scales,
        **{name: value for name, value in sampler_options.items() if value is not None})
    return _walk_vec(sampler, robot, gait.ACTION_SIZE, num_envs, metrics_save_path, backend, device, **kwargs)


def make_walk(render_mode: str | None = None, **kwargs: Any) -> Any:
    """The one-env :class:`~internutopia.core.gym_vector.FlatEnv` of :func:`make_walk_vec`."""
    from internutopia.core.gym_vector import FlatEnv

    return FlatEnv.of(lambda: make_walk_vec(num_envs=1, autoreset_mode='Disabled', render_mode=render_mode, **kwargs))


def make_aliengo_walk(render_mode: str | None = None, **kwargs: Any) -> Any:
    """The one-env :class:`~internutopia.core.gym_vector.FlatEnv` of :func:`make_aliengo_walk_vec`."""
    from internutopia.core.gym_vector import FlatEnv

    return FlatEnv.of(lambda: make_aliengo_walk_vec(num_envs=1, autoreset_mode='Disabled', render_mode=render_mode, **kwargs))


def make_gr1_walk(render_mode: str | None = None, **kwargs: Any) -> Any:
    """The one-env :class:`~internutopia.core.gym_vector.FlatEnv` of :func:`make_gr1_walk_vec`."""
    from internutopia.core.gym_vector import FlatEnv

    return FlatEnv.of(lambda: make_gr1_walk_vec(num_envs=1, autoreset_mode='Disabled', render_mode=render_mode, **kwargs))


__all__ = ['make_aliengo_walk', 'make_aliengo_walk_vec', 'make_gr1_walk', 'make_gr1_walk_vec', 'make_walk', 'make_walk_vec']
