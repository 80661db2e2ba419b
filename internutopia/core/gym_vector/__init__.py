"""Gymnasium's vector API over :class:`internutopia.core.vec_env.Env`.

:class:`VectorEnv` is a :class:`gymnasium.vector.VectorEnv` whose sub-environments are the slots of
one ``vec_env.Env`` (one MuJoCo world), each slot running an episode with one robot. It turns the
InternUtopia per-slot lists and dicts into what Gymnasium users and RL libraries expect:

* **spaces** built from the robot's controllers and the episode's observations: the action space is
  the chosen controller's argument shape (``move_by_speed`` of a jetbot: ``Box((2,))`` =
  ``[forward m/s, yaw rad/s]``), the observation is a flat ``float32`` ``Box`` of named parts
  (``robot.position``, ``robot.orientation``, joint state, ``task.goal``, ...) or a ``Dict`` of them;
* **numpy batches** out (``(num_envs, ...)``), rewards ``float64``, terminations/truncations ``bool``;
* **info** as Gymnasium's dict of arrays with ``_key`` masks (``info['metrics']['success']`` on the
  step an episode ends);
* **autoreset** in all three of Gymnasium's modes (``metadata['autoreset_mode']``): ``NEXT_STEP``
  (default), ``SAME_STEP`` (``final_obs``/``final_info``) and ``DISABLED``
  (``reset(options={'reset_mask': mask})``);
* **an episode source that never runs dry**: ``config.task_configs`` cycled, any list cycled, or a
  sampler ``f(rng) -> TaskCfg | list[TaskCfg]`` drawing new episodes from a seeded generator;
  ``reset(seed=s)`` restarts that source, so the same seed gives the same episodes;
* ``call`` / ``get_attr`` / ``set_attr`` over per-slot views (:class:`SlotView`).

>>> import numpy as np
>>> from internutopia.core.config import Config, SimConfig
>>> from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
>>> from internutopia_extension.configs.tasks import FiniteStepTaskCfg
>>> task = FiniteStepTaskCfg(max_steps=3, robots=[JetbotRobotCfg()])
>>> envs = VectorEnv(Config(env_num=4, metrics_save_path='none', task_configs=[task]))
>>> envs.single_action_space
Box([-0.5 -3. ], [0.5 3. ], (2,), float32)
>>> obs, info = envs.reset(seed=0)
>>> obs.shape, obs.dtype, info['episode_index']
((4, 11), dtype('float32'), array([0, 1, 2, 3]))
>>> for _ in range(3): obs, reward, terminated, truncated, info = envs.step(np.zeros((4, 2)))
>>> truncated, info['steps']
(array([ True,  True,  True,  True]), array([3, 3, 3, 3]))
>>> obs, reward, terminated, truncated, info = envs.step(np.zeros((4, 2)))  # NEXT_STEP autoreset
>>> truncated, info['episode_index']
(array([False, False, False, False]), array([4, 5, 6, 7]))
>>> envs.close()

:class:`FlatEnv` is the one-slot ``gymnasium.Env`` with the same flat spaces (what
``gymnasium.make('internutopia/JetbotPointNav-v0')`` returns), and :func:`sb3_vec_env` bridges a
:class:`VectorEnv` to Stable-Baselines3's own ``VecEnv`` interface.

This package is the home of the Gymnasium adapters, one module each: :mod:`.vector_env`
(``VectorEnv``), :mod:`.flat_env` (``FlatEnv``), :mod:`.dict_env` (InternUtopia's
``gym_env.Env``: one slot, dict spaces; imported as ``internutopia.core.gym_env.Env``),
:mod:`.spaces` (action spaces), :mod:`.actions` (the action layout: controllers, slices, commands),
:mod:`.features` (observation layout), :mod:`.slot_view` (``SlotView``, also importable from
:mod:`.vector_env`), :mod:`.episodes` (episode sources, and what their episodes must be),
:mod:`.sb3` (the Stable-Baselines3 bridge) and :mod:`.rsl_rl_env` (the rsl-rl bridge). The Gymnasium ids
(``internutopia/JetbotPointNav-v0``, ...) are registered one layer up, by :mod:`internutopia.envs`,
since they build the built-in robots' configs.
"""

from __future__ import annotations

from internutopia.core.gym_vector.episodes import EpisodeSampler, EpisodeSource
from internutopia.core.gym_vector.features import (
    FEATURES,
    Feature,
    ObsLayout,
    register_feature,
)
from internutopia.core.gym_vector.flat_env import FlatEnv
from internutopia.core.gym_vector.sb3 import sb3_vec_env
from internutopia.core.gym_vector.slot_view import SlotView
from internutopia.core.gym_vector.spaces import (
    ACTION_SPACES,
    EmptyDict,
    ScalarBox,
    controller_action_space,
    register_action_space,
    space_from_value,
)
from internutopia.core.gym_vector.vector_env import VectorEnv

__all__ = [
    'ACTION_SPACES', 'EmptyDict', 'EpisodeSampler', 'EpisodeSource', 'FEATURES', 'Feature', 'FlatEnv', 'ObsLayout', 'ScalarBox', 'SlotView', 'VectorEnv', 'controller_action_space', 'register_action_space', 'register_feature', 'sb3_vec_env', 'space_from_value',
]
