"""Point-goal navigation envs of the ``internutopia/<Robot>PointNav-v0`` ids: robot presets, an
endless episode sampler, and the vector and one-env factories Gymnasium calls."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

#: Robot presets of the point-nav ids: physics step, physics steps per action, episode time limit,
#: start-goal distances. The walking robots other than H1 step at 200 Hz, the rate their policies
#: were trained at (the H1 keeps InternUtopia's 60 Hz).
POINT_NAV_ROBOTS: dict[str, dict[str, Any]] = {
    'jetbot': {'physics_dt': 1 / 60, 'action_repeat': 6, 'time_limit_s': 20.0, 'min_distance': 1.0, 'max_distance': 3.0},
    'h1': {'physics_dt': 1 / 60, 'action_repeat': 6, 'time_limit_s': 20.0, 'min_distance': 1.0, 'max_distance': 4.0},
    'g1': {'physics_dt': 1 / 200, 'action_repeat': 20, 'time_limit_s': 30.0, 'min_distance': 1.0, 'max_distance': 4.0},
    'aliengo': {'physics_dt': 1 / 200, 'action_repeat': 20, 'time_limit_s': 30.0, 'min_distance': 1.0, 'max_distance': 4.0},
    'h1_with_hand': {'physics_dt': 1 / 200, 'action_repeat': 20, 'time_limit_s': 20.0, 'min_distance': 1.0, 'max_distance': 4.0},
    'gr1': {'physics_dt': 1 / 200, 'action_repeat': 20, 'time_limit_s': 30.0, 'min_distance': 1.0, 'max_distance': 4.0},
}


#: The robot config of each walking robot's point-nav id: (its ``internutopia_extension.configs.robots``
#: module, its config class); built with the module's four base-motion controllers.
_WALKING_ROBOT_CONFIGS: dict[str, tuple[str, str]] = {
    'h1': ('h1', 'H1RobotCfg'),
    'g1': ('g1', 'G1RobotCfg'),
    'aliengo': ('aliengo', 'AliengoRobotCfg'),
    'gr1': ('gr1', 'GR1RobotCfg'),
    'h1_with_hand': ('h1_with_hand', 'H1WithHandRobotCfg'),
}


def point_nav_robot_cfg(robot: str) -> Any:
    """The robot config a point-nav id uses (with ``move_by_speed`` and the base-motion controllers)."""
    if robot == 'jetbot':
        from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg

        return JetbotRobotCfg()
    if robot not in _WALKING_ROBOT_CONFIGS:
        raise ValueError(f'unknown point-nav robot {robot!r}; valid robots: {sorted(POINT_NAV_ROBOTS)}')
    import importlib

    module_name, class_name = _WALKING_ROBOT_CONFIGS[robot]
    module = importlib.import_module(f'internutopia_extension.configs.robots.{module_name}')
    return getattr(module, class_name)(controllers=[module.move_by_speed_cfg, module.move_to_point_cfg,
                                                    module.move_along_path_cfg, module.rotate_cfg])


def _checked_dt(physics_dt: Any) -> float:
    """``physics_dt`` as the simulator's config takes it (a ``ValidationError`` naming it, before
    an episode length is computed from it)."""
    from internutopia.core.config import SimConfig

    return SimConfig(physics_dt=physics_dt).physics_dt


def point_nav_sampler(robot: str = 'jetbot', scenes: Sequence[str | None] = (None,), min_distance: float | None = None,
                      max_distance: float | None = None, max_steps: int | None = None, success_distance: float = 0.3,
                      physics_dt: float | None = None, batch: int = 16, robot_cfg: Any = None,
                      metrics: list | None = None) -> Any:
    """An endless episode sampler ``f(rng) -> list[PointNavTaskCfg]`` (``batch`` episodes per call).

    Defaults come from :data:`POINT_NAV_ROBOTS`; ``max_steps`` (physics steps) defaults to the
    preset's time limit. Metrics default to success, SPL and distance to goal.
    """
    from internutopia.core.episodes import PointNavEpisodes
    from internutopia_extension.configs.metrics import DistanceToGoalMetricCfg, SPLMetricCfg, SuccessMetricCfg

    preset = POINT_NAV_ROBOTS.get(robot)
    if preset is None:
        raise ValueError(f'unknown point-nav robot {robot!r}; valid robots: {sorted(POINT_NAV_ROBOTS)}')
    dt = _checked_dt(physics_dt if physics_dt is not None else preset['physics_dt'])
    kwargs = dict(
        scenes=tuple(scenes), robot_cfg=robot_cfg if robot_cfg is not None else point_nav_robot_cfg(robot),
        min_distance=preset['min_distance'] if min_distance is None else min_distance,
        max_distance=preset['max_distance'] if max_distance is None else max_distance,
        max_steps=max_steps if max_steps is not None else int(math.ceil(preset['time_limit_s'] / dt)),
        success_distance=success_distance,
        metrics=metrics if metrics is not None else [SuccessMetricCfg(), SPLMetricCfg(), DistanceToGoalMetricCfg()],
    )
    episodes = PointNavEpisodes(**kwargs)  # (its scenes' templates validated once, for every batch)
    first = episodes.draw(1, 0)  # fails early on bad arguments

    def sample(rng: Any) -> list:
        return episodes.draw(batch, int(rng.integers(2 ** 31)))

    sample.first = first[0]  # type: ignore[attr-defined]  # a function attribute, read by make_point_nav_vec
    return sample


def make_point_nav_vec(num_envs: int = 16, robot: str = 'jetbot', scenes: Sequence[str | None] = (None,),
                       min_distance: float | None = None, max_distance: float | None = None,
                       max_steps: int | None = None, success_distance: float = 0.3, physics_dt: float | None = None,
                       action_repeat: int | None = None, env_offset_size: float = 10.0, metrics_save_path: str = 'none',
                       robot_cfg: Any = None, **kwargs: Any) -> Any:
    """A point-goal navigation :class:`~internutopia.core.gym_vector.VectorEnv` with sampled episodes.

    Args:
        num_envs: env slots (one world).
        robot: ``'jetbot'``, ``'h1'``, ``'g1'``, ``'aliengo'``, ``'gr1'`` or ``'h1_with_hand'`` (presets
            in :data:`POINT_NAV_ROBOTS`).
        scenes: scene files to sample episodes in; ``None`` is flat ground.
        min_distance: shortest start-goal distance (m; default: the preset's).
        max_distance: longest start-goal distance (m; default: the preset's).
        max_steps: episode limit in physics steps (default: the preset's time limit).
        success_distance: goal radius (m).
        physics_dt: physics step (s; default: the preset's).
        action_repeat: physics steps per action (default: the preset's).
        env_offset_size: slot spacing (m).
        metrics_save_path: where finished episodes are reported (``'none'``, ``'console'``, a file).
        robot_cfg: the robot's config instead of the preset's (e.g. ``H1RobotCfg(locomotion='carried',
            ...)``, with the controllers the preset's has); it is copied, never changed.
        **kwargs: passed to :class:`~internutopia.core.gym_vector.VectorEnv` (``obs_keys``,
            ``obs_mode``, ``autoreset_mode``, ``controller``, ``render_mode``, ...).
    """
    from internutopia.core.config import Config, SimConfig
    from internutopia.core.gym_vector import VectorEnv

    preset = POINT_NAV_ROBOTS.get(robot)
    if preset is None:
        raise ValueError(f'unknown point-nav robot {robot!r}; valid robots: {sorted(POINT_NAV_ROBOTS)}')
    dt = _checked_dt(physics_dt if physics_dt is not None else preset['physics_dt'])
    sampler = point_nav_sampler(robot, scenes, min_distance, max_distance, max_steps, success_distance, dt, robot_cfg=robot_cfg)
    config = Config(simulator=SimConfig(physics_dt=dt, rendering_dt=dt), env_num=num_envs, env_offset_size=env_offset_size,
                    metrics_save_path=metrics_save_path, task_configs=[sampler.first])
    return VectorEnv(config, episodes=sampler, action_repeat=preset['action_repeat'] if action_repeat is None else action_repeat,
                     **kwargs)


def make_point_nav(render_mode: str | None = None, **kwargs: Any) -> Any:
    """The one-env :class:`~internutopia.core.gym_vector.FlatEnv` of :func:`make_point_nav_vec`."""
    from internutopia.core.gym_vector import FlatEnv

    return FlatEnv.of(lambda: make_point_nav_vec(num_envs=1, autoreset_mode='Disabled', render_mode=render_mode, **kwargs))


__all__ = ['POINT_NAV_ROBOTS', 'make_point_nav', 'make_point_nav_vec', 'point_nav_robot_cfg', 'point_nav_sampler']
