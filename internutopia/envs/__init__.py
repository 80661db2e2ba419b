"""Gymnasium ids for internutopia's tasks (registered when ``internutopia`` is imported).

======================================  ====================================================================================
id                                      what
======================================  ====================================================================================
``internutopia/JetbotPointNav-v0``      jetbot drives to a point goal on flat ground (``move_by_speed``, 10 Hz)
``internutopia/H1PointNav-v0``          Unitree H1 (walking on its own legs) goes to a point goal (``move_by_speed``, 10 Hz)
``internutopia/G1PointNav-v0``          Unitree G1 walks to a point goal with its trained ONNX policy (10 Hz)
``internutopia/AliengoPointNav-v0``     Unitree Aliengo trots to a point goal with the policy trained here (10 Hz)
``internutopia/GR1PointNav-v0``         Fourier GR1 walks to a point goal with the policy trained here (10 Hz)
``internutopia/H1WithHandPointNav-v0``  H1 with two Inspire hands walks to a point goal with H1's policy (10 Hz)
``internutopia/FrankaReach-v0``         Franka Panda brings its tool frame to a marker (arm + gripper action, 10 Hz)
``internutopia/FrankaPick-v0``          Franka picks a cube up 10 cm
``internutopia/FrankaPickPlace-v0``     Franka puts a cube on a goal
``internutopia/H1Walk-v0``              a walking H1 follows random velocity commands (leg actions, 50 Hz)
``internutopia/AliengoWalk-v0``         the same with an Aliengo (12 leg actions)
``internutopia/GR1Walk-v0``             the same with a GR1 (12 leg actions)
``internutopia/Config-v0``              any YAML config or ``Config``: ``config='configs/h1_example.yaml'``
======================================  ====================================================================================

``gymnasium.make_vec(id, num_envs=16)`` (after ``import internutopia``, or with the id written
``internutopia:internutopia/JetbotPointNav-v0``, which imports it) builds one :class:`~internutopia.core.gym_vector.VectorEnv`
(all envs in one MuJoCo world, ``vectorization_mode='vector_entry_point'``);
``gymnasium.make(id)`` builds the one-env :class:`~internutopia.core.gym_vector.FlatEnv`. Keyword
arguments go to :func:`make_point_nav_vec` (or :class:`~internutopia.core.gym_vector.VectorEnv`
for ``Config-v0``)::

    import gymnasium as gym
    import internutopia  # registers the ids

    envs = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=16, max_distance=2.0)

Point-nav episodes are sampled endlessly by
:func:`internutopia.core.episodes.generate_point_nav_episodes` from the env's seeded generator, so
``envs.reset(seed=0)`` always starts the same sequence of episodes.

The modules: :mod:`.ids` (the ids and :func:`register_envs`), :mod:`.point_nav` (the point-nav
presets, sampler and factories) and :mod:`.config_env` (``Config-v0``'s factories). The
Gymnasium adapters they build live in :mod:`internutopia.core.gym_vector`.
"""

from internutopia.envs.config_env import make_config, make_config_vec
from internutopia.envs.ids import ENV_IDS, register_envs
from internutopia.envs.point_nav import (
    POINT_NAV_ROBOTS,
    make_point_nav,
    make_point_nav_vec,
    point_nav_robot_cfg,
    point_nav_sampler,
)

register_envs()

__all__ = ['ENV_IDS', 'POINT_NAV_ROBOTS', 'make_config', 'make_config_vec', 'make_point_nav', 'make_point_nav_vec',
           'point_nav_robot_cfg', 'point_nav_sampler', 'register_envs']
