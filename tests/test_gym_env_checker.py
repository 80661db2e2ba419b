"""``gym_env.Env`` (InternUtopia's dict API) and ``FlatEnv`` (arrays) pass Gymnasium's ``check_env``."""

from __future__ import annotations

import itertools
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import internutopia  # noqa: F401  (registers the ids)
from internutopia.core.config import Config, SimConfig
from internutopia.core.gym_env import Env
from internutopia.core.gym_vector import FlatEnv
from internutopia_extension.configs.robots import h1
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, jetbot_camera_cfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg, PointNavTaskCfg

#: Warnings check_env gives for any env with unbounded observations or physical action units.
EXPECTED = ('minimum value is -infinity', 'maximum value is infinity', 'symmetric and normalized space',
            'not able to test alternative render modes')


def checked(env, **kw):
    """Run check_env; return the warnings it gave that are not in EXPECTED."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        check_env(env, **kw)
    return [str(w.message) for w in caught if not any(e in str(w.message).lower() for e in EXPECTED)]


def config(task, dt=1 / 240):
    return Config(simulator=SimConfig(physics_dt=dt), metrics_save_path='none', task_configs=[task])


def test_dict_api_env_passes_check_env():
    env = Env(config(FiniteStepTaskCfg(max_steps=50, robots=[JetbotRobotCfg()])), endless=True)
    assert isinstance(env.observation_space, gym.spaces.Dict)
    assert set(env.observation_space.spaces) == {'position', 'orientation', 'joint_positions', 'joint_velocities',
                                                 'render', 'controllers', 'sensors'}
    assert set(env.action_space.spaces) == {'move_by_speed', 'move_to_point', 'move_along_path', 'rotate'}
    assert checked(env) == []
    env.close()


def test_dict_api_env_with_a_camera_and_a_humanoid_passes_check_env():
    camera = jetbot_camera_cfg.update(resolution=(32, 24), depth=True)
    env = Env(config(FiniteStepTaskCfg(max_steps=50, robots=[JetbotRobotCfg(sensors=[camera])])), endless=True)
    rgba = env.observation_space['sensors']['camera']['rgba']
    assert rgba.shape == (24, 32, 4) and rgba.dtype == np.uint8
    assert env.observation_space['sensors']['camera']['depth'].dtype == np.float32
    assert checked(env) == []
    env.close()
    robot = h1.H1RobotCfg(controllers=[h1.move_by_speed_cfg, h1.move_to_point_cfg, h1.rotate_cfg, h1.joint_controller])
    env = Env(config(FiniteStepTaskCfg(max_steps=50, robots=[robot])), endless=True)
    assert env.action_space['joint_controller'].shape == (len(h1.H1_JOINT_NAMES),)
    assert checked(env) == []
    env.close()


def test_flat_env_passes_check_env_including_render_modes():
    env = gym.make('internutopia/JetbotPointNav-v0')
    assert isinstance(env.unwrapped, FlatEnv)
    assert env.observation_space.shape == (17,) and env.action_space.shape == (2,)
    assert checked(env.unwrapped) == []
    env.close()
    flat = FlatEnv(config(PointNavTaskCfg(goal=(1.0, 1.0, 0.0), robots=[JetbotRobotCfg()])), obs_mode='dict')
    assert checked(flat) == []
    flat.close()


def test_flat_env_can_be_reset_after_close_and_passes_sb3_check_env():
    task = PointNavTaskCfg(goal=(1.0, 1.0, 0.0), robots=[JetbotRobotCfg()])
    flat = FlatEnv(config(task), render_mode='rgb_array')
    try:
        first, _ = flat.reset(seed=0)
        flat.close()
        again, _ = flat.reset(seed=0)  # a world built again from the same arguments
        np.testing.assert_array_equal(first, again)
        assert flat.step(flat.action_space.sample())[0] in flat.observation_space
        sb3_checker = pytest.importorskip('stable_baselines3.common.env_checker')
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # its advice on unbounded spaces; failures raise
            sb3_checker.check_env(flat, warn=False, skip_render_check=False)
    finally:
        flat.close()
    given = FlatEnv(vector_env=flat.vector_env)
    with pytest.raises(RuntimeError, match='closed.*vector_env='):
        given.reset()


def test_dict_api_keeps_internutopia_semantics():
    task = FiniteStepTaskCfg(max_steps=3, robots=[JetbotRobotCfg()])
    env = Env(config(task))
    with pytest.raises(RuntimeError, match='call reset'):
        env.step({'move_by_speed': [0.1, 0.0]})
    obs, info = env.reset()
    assert obs in env.observation_space and info['episode_index'] == 0 and info['task_config'] == task
    for _ in range(3):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert obs in env.observation_space
    assert terminated is True and truncated is True and env.reset() == (None, None) and env.finished
    with pytest.raises(RuntimeError, match='every episode of the queue has been run'):
        env.step({'move_by_speed': [0.1, 0.0]})
    env.close()


def test_seeded_reset_starts_the_episode_sequence_over():
    first = FiniteStepTaskCfg(max_steps=5, robots=[JetbotRobotCfg(position=(0.0, 0.0, 0.0))])
    second = FiniteStepTaskCfg(max_steps=5, robots=[JetbotRobotCfg(position=(1.0, 0.0, 0.0))])
    env = Env(Config(metrics_save_path='none', task_configs=[first, second]))
    assert env.reset()[1]['episode_index'] == 0
    assert env.reset()[1]['episode_index'] == 1
    assert env.reset() == (None, None)
    obs, info = env.reset(seed=3)
    assert info['episode_index'] == 0 and np.allclose(obs['position'][:2], [0.0, 0.0], atol=1e-3)
    env.close()
    env = Env(Config(metrics_save_path='none', task_configs=[first]), episodes=itertools.repeat(second, 2))
    assert env.reset()[0]['position'][0] == pytest.approx(1.0, abs=1e-3)
    env.close()
