"""What a Gymnasium, Stable-Baselines3 or torch user sees at the adapters' edges: SB3's render and
reset infos through the bridge, ``bfloat16`` torch actions, the errors of a bad action given
to the one-env ``FlatEnv`` (``gymnasium.make``), and the training examples' plots."""

from __future__ import annotations

import importlib.util
import pathlib
import warnings

import gymnasium as gym
import numpy as np
import pytest

import internutopia  # noqa: F401  (registers the ids)
from internutopia.core.config import Config, SimConfig
from internutopia.core.gym_vector import VectorEnv, sb3_vec_env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import PointNavTaskCfg

POINT_NAV = 'internutopia/JetbotPointNav-v0'


def nav_config(env_num: int) -> Config:
    task = PointNavTaskCfg(goal=(1.5, 0.5, 0.0), max_steps=600, robots=[JetbotRobotCfg()])
    return Config(simulator=SimConfig(physics_dt=1 / 60), env_num=env_num, env_offset_size=5.0, metrics_save_path='none',
                  task_configs=[task])


def test_sb3_bridge_renders_the_overview_once_and_keeps_the_reset_infos():
    """SB3's ``VecEnv.render`` tiled ``get_images``' ``num_envs`` copies of the world's overview
    into one image ``num_envs`` times its size; and ``venv.reset_infos`` stayed ``[{}, ...]``."""
    pytest.importorskip('stable_baselines3')
    envs = VectorEnv(nav_config(4), autoreset_mode='SameStep', render_mode='rgb_array')
    venv = sb3_vec_env(envs)
    try:
        venv.reset()
        image = venv.render()
        assert image.shape == envs.render_overview().shape == (480, 640, 3) and image.dtype == np.uint8
        frames = venv.get_images()  # (a frame per env, as SB3's VecEnv gives)
        assert len(frames) == 4 and all(frame.shape == (480, 640, 3) for frame in frames)
        assert venv.render('rgb_array').shape == (480, 640, 3)
        assert [info['episode_index'] for info in venv.reset_infos] == [0, 1, 2, 3]
        assert all(info['task_config'].type == 'PointNavTask' for info in venv.reset_infos)
        assert isinstance(venv.reset_infos[0]['episode_index'], int)
        venv.set_options({'reset_mask': np.array([False, True, False, False])})
        venv.reset()  # (env 1 only: the others keep their reset infos)
        assert [info['episode_index'] for info in venv.reset_infos] == [0, 4, 2, 3]
    finally:
        venv.close()


def test_bfloat16_torch_actions_step_as_their_float32_values():
    """A mixed-precision policy's ``bfloat16`` actions raised torch's ``TypeError: Got unsupported
    ScalarType BFloat16``; they are the numbers they hold."""
    torch = pytest.importorskip('torch')
    values = [[0.25, -0.5], [0.5, 1.5]]  # (exact in bfloat16)
    observations = []
    for dtype in (torch.float32, torch.bfloat16):
        envs = VectorEnv(nav_config(2))
        try:
            envs.reset(seed=0)
            for _ in range(20):
                obs = envs.step(torch.tensor(values, dtype=dtype))[0]
            observations.append(obs)
        finally:
            envs.close()
    np.testing.assert_array_equal(observations[0], observations[1])
    assert not np.array_equal(observations[0][0], observations[0][1])  # (each env's action moved its robot)


@pytest.mark.parametrize(('action', 'message'), [
    (np.zeros(3), r'action must have shape \(2,\) \(action_space.shape\); got \(3,\)'),
    (np.zeros((1, 2)), r'action must have shape \(2,\) \(action_space.shape\); got \(1, 2\)'),
    (0.5, r'action must have shape \(2,\) \(action_space.shape\); got \(\)'),
    ([np.nan, 0.0], r'action \[nan, 0.0\] is not finite \(NaN or inf\)'),
    (['a', 0.0], r"actions must be numbers of shape \(2,\); got the text 'a'"),
    ([True, False], r'actions must be numbers of shape \(2,\); got the bool True'),
    (None, r'action holds None, which is not a number; actions must be numbers of shape \(2,\)'),
])
def test_flat_env_names_a_bad_action_as_one_action_and_steps_on(action, message):
    """``gym.make(id).step`` of a bad action spoke of a batch the caller never made (``actions must
    have shape (1, 2) (num_envs, ...); got (1, 3)`` for an action of shape ``(3,)``)."""
    env = gym.make(POINT_NAV, max_steps=30)
    try:
        obs, _ = env.reset(seed=0)
        with pytest.raises(ValueError, match=message) as raised:
            env.unwrapped.step(action)
        assert 'num_envs' not in str(raised.value)
        assert raised.value.__suppress_context__ or raised.value.__context__ is None  # (one error, not two chained)
        assert env.unwrapped.vector_env.get_attr('steps') == (0,)  # (nothing moved)
        obs, reward, terminated, truncated, _ = env.step(np.array([0.3, 0.0], dtype=np.float32))
        assert obs.shape == (17,) and not (terminated or truncated)
        assert env.unwrapped.vector_env.get_attr('steps') == (6,)
    finally:
        env.close()


@pytest.mark.parametrize('example', ['train_ppo', 'train_franka_reach'])
def test_training_plots_name_the_slots_the_run_had(example, tmp_path, monkeypatch):
    """The learning-curve plots said ``16 slots in one world`` whatever ``--num-envs`` was."""
    figure = pytest.importorskip('matplotlib.figure')
    path = pathlib.Path(__file__).resolve().parents[1] / 'examples' / f'{example}.py'
    spec = importlib.util.spec_from_file_location(example, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    labels: list[str] = []
    savefig = figure.Figure.savefig
    monkeypatch.setattr(figure.Figure, 'savefig',
                        lambda fig, *args, **kwargs: (labels.append(fig.axes[0].get_xlabel()), savefig(fig, *args, **kwargs)))
    curve = [{'steps': 0, 'eval_success': 0.0, 'eval_spl': 0.0, 'eval_steps': 10.0, 'train_success': float('nan'), 'minutes': 0.1}]
    summary = {'curve': curve, 'eval_episodes': 2, 'random_success': 0.0, 'trained_success': 0.0, 'steps': 256,
               'minutes': 0.1, 'num_envs': 2}
    module.plot(summary, str(tmp_path / 'curve.png'))
    assert labels == ['env steps (10 Hz actions, 2 slots in one world)'] and (tmp_path / 'curve.png').stat().st_size > 0


def test_config_id_takes_a_metrics_path_so_envs_built_side_by_side_can_run(tmp_path):
    """A config that names a metrics file could not be vectorized one world per env
    (``vectorization_mode='sync'``) nor go through Gymnasium's ``check_env`` (which builds a second
    env from the spec): each env locks the file, and ``Config-v0`` had no way to give it another."""
    from gymnasium.utils.env_checker import check_env

    task = PointNavTaskCfg(goal=(1.5, 0.5, 0.0), max_steps=30, robots=[JetbotRobotCfg()])
    config = Config(simulator=SimConfig(physics_dt=1 / 60), metrics_save_path=str(tmp_path / 'results.jsonl'),
                    task_configs=[task])
    with pytest.raises(ValueError, match='is being written by another env that is still open'):
        gym.make_vec('internutopia/Config-v0', config=config, num_envs=2, vectorization_mode='sync')
    envs = gym.make_vec('internutopia/Config-v0', config=config, num_envs=2, vectorization_mode='sync', metrics_save_path='none')
    try:
        envs.reset(seed=0)
        for _ in range(31):  # (past the 30-step limit of both envs)
            truncated = envs.step(np.zeros((2, 2)))[3]
            if truncated.any():
                break
        assert truncated.all()
    finally:
        envs.close()
    env = gym.make('internutopia/Config-v0', config=config, metrics_save_path='none')
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # (the unbounded observations' and physical actions' warnings)
            check_env(env.unwrapped)
    finally:
        env.close()
    vector = gym.make_vec('internutopia/Config-v0', config=config, num_envs=2, metrics_save_path='console')
    try:
        assert vector.unwrapped.config.metrics_save_path == 'console'
    finally:
        vector.close()
    assert config.metrics_save_path == str(tmp_path / 'results.jsonl')  # (the user's config is unchanged)


def test_the_gymnasium_adapters_refuse_a_distributed_config_by_name():
    # A DistributedConfig's worlds live in Ray runners: the adapters failed deep inside (a zip()
    # length error, NotInDistributedMode); now they refuse it before anything starts, Ray included.
    from internutopia.core.distribution import RayDistributionCfg
    from internutopia.core.gym_env import Env as GymEnv

    task = PointNavTaskCfg(robots=[JetbotRobotCfg(position=(0.0, 0.0, 0.05))], goal=(1.0, 0.0, 0.0))
    distributed = Config(env_num=1, metrics_save_path='none', task_configs=[task] * 2).distribute(RayDistributionCfg(proc_num=2))
    for build, name in ((lambda: VectorEnv(distributed), 'the Gymnasium VectorEnv'), (lambda: GymEnv(distributed), 'gym_env.Env')):
        with pytest.raises(ValueError, match=rf'^{name} runs its world in this process; a DistributedConfig \(Ray, '
                                             r'distribution_config.proc_num=2\) is not supported: pass config.base_config\(\)'):
            build()
    ray = pytest.importorskip('ray')
    assert not ray.is_initialized()
