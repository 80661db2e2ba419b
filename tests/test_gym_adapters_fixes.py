"""The Gymnasium adapters at their edges: the array backends the SB3 and rsl-rl bridges take, SB3
on a ``Dict`` observation and SB3's reset options, an ``action_space=`` override of the wrong
shape, ``None`` in an action batch, and the dict env under Gymnasium's ``FlattenObservation``."""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace as Namespace

import gymnasium as gym
import numpy as np
import pytest

import internutopia  # noqa: F401  (registers the ids)
from internutopia.core.config import Config, SimConfig
from internutopia.core.gym_env import Env
from internutopia.core.gym_vector import EmptyDict, FlatEnv, VectorEnv, sb3_vec_env
from internutopia.core.gym_vector.actions import ActionLayout
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg, PointNavTaskCfg
from internutopia_extension.robots.h1_locomotion.policy.sb3_trainer import quiet_logger

POINT_NAV = 'internutopia/JetbotPointNav-v0'


def config(tasks, env_num=2, dt=1 / 60):
    return Config(simulator=SimConfig(physics_dt=dt), env_num=env_num, env_offset_size=5.0, metrics_save_path='none',
                  task_configs=list(tasks))


def nav_task(goal=(1.5, 0.5, 0.0), max_steps=600):
    return PointNavTaskCfg(goal=goal, max_steps=max_steps, robots=[JetbotRobotCfg()])


class Recorder(gym.vector.VectorWrapper):
    """Keeps what the vector env's ``reset`` was given and every observation it returned."""

    def __init__(self, env):
        super().__init__(env)
        self.resets: list[dict] = []
        self.observations: list = []

    def _keep(self, obs):
        self.observations.append({k: v.copy() for k, v in obs.items()} if isinstance(obs, dict) else obs.copy())

    def reset(self, **kwargs):
        self.resets.append(kwargs)
        obs, info = self.env.reset(**kwargs)
        self._keep(obs)
        return obs, info

    def step(self, actions):
        out = self.env.step(actions)
        self._keep(out[0])
        return out


# ------------------------------------------------------------------------------------------------
# array backends of the bridges
def test_sb3_bridge_refuses_torch_arrays_when_built_naming_array_backend():
    pytest.importorskip('stable_baselines3')
    pytest.importorskip('torch')
    envs = VectorEnv(config([nav_task()]), autoreset_mode='SameStep', array_backend='torch')
    try:
        with pytest.raises(ValueError, match=r"array_backend='torch'.*array_backend='numpy'"):
            sb3_vec_env(envs)
    finally:
        envs.close()


def test_rsl_rl_bridge_on_torch_arrays_gives_what_it_gives_on_numpy():
    """``array_backend='torch'``: the same seed and actions give the same observations, rewards,
    dones, time-outs and episode records as on numpy arrays, as fresh tensors on the bridge's device."""
    pytest.importorskip('tensordict')
    torch = pytest.importorskip('torch')
    from internutopia.core.gym_vector.rsl_rl_env import RslRlVecEnv
    from internutopia_extension.robots.h1_locomotion import gait

    def bridge(backend):
        return RslRlVecEnv(gym.make_vec('internutopia/H1Walk-v0', num_envs=2, autoreset_mode='SameStep', seconds=0.1,
                                        array_backend=backend), seed=4)

    plain, torched = bridge('numpy'), bridge('torch')
    try:
        assert torched.env.unwrapped.array_backend == 'torch'
        torch.testing.assert_close(torched.get_observations()['policy'], plain.get_observations()['policy'], rtol=0, atol=0)
        rng = np.random.default_rng(0)
        ended = 0
        for _ in range(12):
            actions = torch.as_tensor(rng.uniform(-1, 1, (2, gait.ACTION_SIZE)).astype(np.float32))
            want = plain.step(actions)
            got = torched.step(actions)
            for a, b in ((got[0]['policy'], want[0]['policy']), (got[1], want[1]), (got[2], want[2]),
                         (got[3]['time_outs'], want[3]['time_outs'])):
                assert isinstance(a, torch.Tensor) and a.dtype == b.dtype
                torch.testing.assert_close(a, b, rtol=0, atol=0)
            ended += int(got[2].sum())
        assert ended >= 2  # (0.1 s episodes: each env ends some)
        records, expected = torched.take_episodes(), plain.take_episodes()
        assert records.keys() == expected.keys() and len(records['reward']) == ended
        for key in records:
            np.testing.assert_array_equal(records[key], expected[key])
        # A fresh tensor each step (rsl-rl keeps the last one until it stores the transition).
        before = torched.get_observations()['policy']
        torched.step(torch.zeros(2, gait.ACTION_SIZE))
        assert torched.get_observations()['policy'].data_ptr() != before.data_ptr()
    finally:
        plain.close()
        torched.close()


def test_rsl_rl_bridge_refuses_warp_arrays_when_built_naming_array_backend():
    pytest.importorskip('tensordict')
    pytest.importorskip('torch')
    pytest.importorskip('warp')
    from internutopia.core.gym_vector.rsl_rl_env import RslRlVecEnv

    envs = VectorEnv(config([nav_task()]), autoreset_mode='SameStep', array_backend='warp')
    try:
        with pytest.raises(ValueError, match=r"array_backend='numpy' or 'torch'.*got array_backend='warp'"):
            RslRlVecEnv(envs)
    finally:
        envs.close()


# ------------------------------------------------------------------------------------------------
# Stable-Baselines3 on a Dict observation
def test_sb3_trains_on_the_dict_observation_and_sees_its_values_unchanged():
    """``PPO('MultiInputPolicy')`` builds on the bridge of an ``obs_mode='dict'`` env (keys without
    dots, scalars of shape (1,)) and learns a few hundred steps; what the policy's rollout holds is
    what the vector env returned, key by key; episodes that end hand SB3 their terminal observation
    under its keys (PPO bootstraps truncated ones from it)."""
    pytest.importorskip('stable_baselines3')
    torch = pytest.importorskip('torch')
    from stable_baselines3 import PPO

    torch.manual_seed(0)
    recorder = Recorder(gym.make_vec(POINT_NAV, num_envs=2, obs_mode='dict', autoreset_mode='SameStep', max_steps=60))
    venv = sb3_vec_env(recorder)
    try:
        inner = recorder.single_observation_space
        assert venv.obs_key_map == {key.replace('.', '_'): key for key in inner.spaces}
        assert set(venv.observation_space.spaces) == {
            'goal_vector', 'robot_joint_positions', 'robot_joint_velocities', 'robot_orientation', 'robot_position',
            'task_distance_to_goal', 'task_goal'}
        assert inner['task.distance_to_goal'].shape == () and venv.observation_space['task_distance_to_goal'].shape == (1,)
        for name, key in venv.obs_key_map.items():
            assert venv.observation_space[name].dtype == inner[key].dtype
        # The values as the vector env returns them, under SB3's keys.
        obs = venv.reset()
        for name, key in venv.obs_key_map.items():
            want = recorder.observations[-1][key]
            assert obs[name].dtype == want.dtype
            np.testing.assert_array_equal(obs[name], want.reshape(2, -1))
        terminal = None
        for _ in range(40):
            obs, _, dones, infos = venv.step(np.zeros((2, 2), dtype=np.float32))
            if dones.any():
                terminal = infos[int(np.flatnonzero(dones)[0])]['terminal_observation']
        assert terminal is not None and terminal in venv.observation_space

        recorder.observations.clear()
        n_steps = 64
        model = PPO('MultiInputPolicy', venv, n_steps=n_steps, batch_size=64, n_epochs=1, device='cpu', seed=0)
        model.set_logger(quiet_logger())  # (no /tmp/SB3-<date> folder left behind)
        model.learn(256)
        assert model.num_timesteps >= 256
        # The last rollout's observations are the vector env's, from the second rollout on
        # (recorded[0] is learn's reset, recorded[t] what step t returned).
        buffer = model.rollout_buffer
        rollouts = model.num_timesteps // (n_steps * 2)
        first = (rollouts - 1) * n_steps
        assert buffer.generator_ready  # (PPO's update has flattened it env by env: (n_envs * n_steps, ...))
        for name, key in venv.obs_key_map.items():
            got = buffer.observations[name]
            want = np.stack([recorder.observations[first + t][key] for t in range(n_steps)])  # (n_steps, n_envs, ...)
            want = want.swapaxes(0, 1).reshape(got.shape)
            np.testing.assert_array_equal(got, want.astype(got.dtype))
        action, _ = model.predict(venv.reset(), deterministic=True)
        assert action.shape == (2, 2)
    finally:
        venv.close()


def test_sb3_check_env_passes_on_a_single_dict_env_under_sb3_keys():
    pytest.importorskip('stable_baselines3')
    from stable_baselines3.common.env_checker import check_env

    from internutopia.core.gym_vector.sb3 import SB3DictObservation

    flat = FlatEnv(config([nav_task()], env_num=1), obs_mode='dict')
    env = SB3DictObservation(flat)
    try:
        obs, _ = env.reset(seed=0)
        raw = flat.vector_env.reset(seed=0)[0]
        for name, key in env.key_map.items():
            np.testing.assert_array_equal(obs[name], raw[key][0].reshape(env.observation_space[name].shape))
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # its advice on unbounded spaces; failures raise
            check_env(env, warn=True, skip_render_check=True)
    finally:
        env.close()
    with pytest.raises(TypeError, match='Dict observation'):
        SB3DictObservation(gym.make('CartPole-v1'))


# ------------------------------------------------------------------------------------------------
# SB3's reset options
def test_sb3_set_options_reach_the_vector_env_reset():
    pytest.importorskip('stable_baselines3')
    recorder = Recorder(VectorEnv(config([nav_task()]), autoreset_mode='SameStep'))
    venv = sb3_vec_env(recorder)
    try:
        venv.reset()
        for _ in range(5):
            moved = venv.step(np.array([[0.4, 0.0], [0.4, 0.0]], dtype=np.float32))[0].copy()
        indices = venv.get_attr('episode_index')
        mask = np.array([False, True])
        venv.set_options({'reset_mask': mask})
        obs = venv.reset()
        given = recorder.resets[-1]['options']
        assert list(given) == ['reset_mask'] and np.array_equal(given['reset_mask'], mask)
        np.testing.assert_array_equal(obs[0], moved[0])  # env 0 was not reset
        assert venv.get_attr('episode_index')[0] == indices[0] and venv.get_attr('episode_index')[1] != indices[1]
        venv.reset()  # options are used once, as SB3's own VecEnvs do
        assert recorder.resets[-1]['options'] is None

        venv.set_options({'no_such_option': 1})  # rejected as VectorEnv rejects it
        with pytest.raises(ValueError, match=r"unknown reset option\(s\) \['no_such_option'\]"):
            venv.reset()
        venv.set_options([{'reset_mask': mask}, {}])
        with pytest.raises(ValueError, match='set_options.*different options'):
            venv.reset()
        venv.set_options([1, 1])
        with pytest.raises(TypeError, match='set_options: options must be dicts'):
            venv.reset()
        venv.set_options([{'reset_mask': mask}, {'reset_mask': mask.copy()}])  # the same for every env
        venv.reset()
        assert np.array_equal(recorder.resets[-1]['options']['reset_mask'], mask)
    finally:
        venv.close()


# ------------------------------------------------------------------------------------------------
# actions
def test_action_space_override_of_the_wrong_shape_is_refused_when_built():
    with pytest.raises(ValueError, match=r'action_space must have shape \(2,\).*move_by_speed \(2,\).*shape \(5,\)'):
        VectorEnv(config([nav_task()]), action_space=gym.spaces.Box(-1, 1, (5,), np.float32))
    with pytest.raises(ValueError, match=r'action_space must have shape \(5,\).*move_by_speed \(2,\), move_to_point \(3,\)'):
        VectorEnv(config([nav_task()]), controller=['move_by_speed', 'move_to_point'],
                  action_space=gym.spaces.Box(-1, 1, (2,), np.float32))
    with pytest.raises(TypeError, match='action_space must be a gymnasium Box'):
        VectorEnv(config([nav_task()]), action_space=gym.spaces.Discrete(3))
    # One of the right shape is the action space, and bounds the actions.
    box = gym.spaces.Box(np.float32([-0.1, -0.2]), np.float32([0.1, 0.2]))
    envs = VectorEnv(config([nav_task()]), action_space=box)
    try:
        assert envs.single_action_space == box
        envs.reset(seed=0)
        assert envs.step(np.ones((2, 2)))[0] in envs.observation_space
    finally:
        envs.close()


def test_action_space_override_stands_for_a_controller_whose_space_is_unknown():
    """The error for a controller of an unknown type says to pass ``action_space=``; passed, it is used."""
    controller = Namespace(name='arm', config=Namespace(type='SomeUnknownController'))
    robot = Namespace(name='bot', controllers={'arm': controller})
    with pytest.raises(ValueError, match='no action space is known.*pass action_space='):
        ActionLayout('bot', robot, 'arm', env=None)
    box = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    layout = ActionLayout('bot', robot, 'arm', env=None, action_space=box)
    assert layout.space is box and layout.slices == [('arm', slice(0, 4), (4,))]


@pytest.mark.parametrize('batch', [
    [[0.1, 0.0], [None, 0.0]],
    np.array([[0.1, 0.0], [0.0, None]], dtype=object),
    [np.array([0.1, 0.0]), np.array([0.2, None], dtype=object)],
], ids=['list', 'object-array', 'rows'])
def test_none_in_an_action_batch_names_the_env_and_changes_nothing(batch):
    envs = VectorEnv(config([nav_task()]))
    try:
        envs.reset(seed=0)
        envs.step(np.array([[0.3, 0.0], [0.3, 0.5]]))
        steps = np.array(envs.vec_env.runner.steps).copy()
        before = envs.vec_env.get_observations()
        with pytest.raises(ValueError, match=r'actions of env\(s\) \[1\] hold None, which is not a number') as error:
            envs.step(batch)
        assert 'NaN' not in str(error.value)
        np.testing.assert_array_equal(envs.vec_env.runner.steps, steps)
        after = envs.vec_env.get_observations()
        for slot in range(2):
            np.testing.assert_array_equal(after[slot]['jetbot']['position'], before[slot]['jetbot']['position'])
        # (a NaN is still reported as not finite)
        with pytest.raises(ValueError, match=r'env\(s\) \[0\] are not finite'):
            envs.step(np.array([[math.nan, 0.0], [0.0, 0.0]]))
        assert envs.step(np.zeros((2, 2)))[0] in envs.observation_space
    finally:
        envs.close()


# ------------------------------------------------------------------------------------------------
# the dict env
def test_dict_env_goes_through_flatten_observation_and_reports_its_rate():
    pytest.importorskip('gymnasium.utils.env_checker')
    from gymnasium.utils.env_checker import check_env

    env = Env(config([FiniteStepTaskCfg(max_steps=20, robots=[JetbotRobotCfg()])], env_num=1, dt=1 / 50), endless=True)
    try:
        assert env.metadata['render_fps'] == pytest.approx(50.0)
        assert env.observation_space['sensors'] == EmptyDict()
        flat = gym.wrappers.FlattenObservation(env)
        dims = gym.spaces.flatdim(env.observation_space)
        assert flat.observation_space.shape == (dims,) and gym.spaces.flatdim(EmptyDict()) == 0
        obs, _ = flat.reset(seed=0)
        raw = env.get_observations()
        assert obs.shape == (dims,) and obs in flat.observation_space
        # The flat vector is the dict's numbers in the space's order; it unflattens to the dict.
        def numbers(space, value):
            if isinstance(space, gym.spaces.Dict):
                return [n for key, sub in space.spaces.items() for n in numbers(sub, value[key])]
            return [] if isinstance(space, EmptyDict) else list(np.ravel(value))

        np.testing.assert_array_equal(obs, np.array(numbers(env.observation_space, raw), dtype=obs.dtype))
        back = gym.spaces.unflatten(env.observation_space, obs)
        assert back['sensors'] == {} and back.keys() == raw.keys()
        np.testing.assert_array_equal(back['position'], raw['position'])
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            check_env(flat, skip_render_check=True)
    finally:
        env.close()


def test_reset_options_that_are_not_a_dict_are_refused_naming_options():
    env = Env(config([FiniteStepTaskCfg(max_steps=5, robots=[JetbotRobotCfg()])], env_num=1))
    try:
        with pytest.raises(TypeError, match=r'options must be a dict or None; got list \[1\]'):
            env.reset(options=[1])
        obs, info = env.reset(options={})  # the first episode is still the one handed out
        assert info['episode_index'] == 0 and obs in env.observation_space
    finally:
        env.close()
    flat = FlatEnv(config([nav_task()], env_num=1))
    try:
        with pytest.raises(TypeError, match=r'options must be a dict.*got list \[1\]'):
            flat.reset(options=[1])
        assert flat.reset(seed=0)[0] in flat.observation_space
    finally:
        flat.close()
