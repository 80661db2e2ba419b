"""rsl-rl on the walking env: the bridge reports what the vector env does, the trainer's rsl-rl path
checkpoints, resumes and exports the graph the walking robots load, its mirror loss makes a policy
symmetric, and the training benchmark compares the trainers side by side."""

from __future__ import annotations

import csv
import os
import tempfile

import numpy as np
import pytest

pytest.importorskip('rsl_rl', reason="needs the 'train' extra (rsl-rl-lib)")
torch = pytest.importorskip('torch')
gymnasium = pytest.importorskip('gymnasium')

import internutopia.envs  # noqa: E402,F401  (registers the ids)
from internutopia.core.gym_vector.rsl_rl_env import RslRlVecEnv  # noqa: E402
from internutopia_extension.robots.h1_locomotion import gait  # noqa: E402

WALK = 'internutopia/H1Walk-v0'


def walk_vec(num_envs=3, **kwargs):
    return gymnasium.make_vec(WALK, num_envs=num_envs, autoreset_mode='SameStep', **kwargs)


def test_the_bridge_reports_what_the_vector_env_does():
    """Same seed, same actions: the bridge's obs, rewards, dones and time-outs are the vector env's
    (dones = terminated | truncated; time-outs = truncated and not terminated), its episode records
    are the episodes that ended, with their lengths in env steps."""
    rng = np.random.default_rng(3)
    # Short episodes (0.3 s) so that some end by time and some by falls.
    plain, bridged = walk_vec(seconds=0.3), RslRlVecEnv(walk_vec(seconds=0.3), seed=5)
    try:
        obs, _ = plain.reset(seed=5)
        np.testing.assert_array_equal(bridged.get_observations()['policy'].numpy(), obs)
        ended = timeouts = 0
        for _ in range(40):
            actions = rng.uniform(-1, 1, (3, gait.ACTION_SIZE)).astype(np.float32)
            obs, rewards, terminated, truncated, info = plain.step(actions)
            got_obs, got_rewards, dones, extras = bridged.step(torch.as_tensor(actions))
            np.testing.assert_array_equal(got_obs['policy'].numpy(), obs)
            np.testing.assert_array_equal(got_rewards.numpy(), rewards.astype(np.float32))
            np.testing.assert_array_equal(dones.numpy(), terminated | truncated)
            np.testing.assert_array_equal(extras['time_outs'].numpy(), truncated & ~terminated)
            ended += int((terminated | truncated).sum())
            timeouts += int((truncated & ~terminated).sum())
        assert ended >= 3 and timeouts >= 1
        episodes = bridged.take_episodes()
        assert len(episodes['reward']) == ended and bridged.take_episodes() == {}
        # Lengths in env steps: the physics steps the episode's record counts, over the action repeat.
        np.testing.assert_array_equal(episodes['length'] * plain.unwrapped.action_repeat, episodes['steps'])
        assert set(np.unique(episodes['fell'])) <= {0.0, 1.0} and np.all(np.isfinite(episodes['reward']))
    finally:
        plain.close()
        bridged.close()


@pytest.mark.parametrize('make, error, match', [
    (lambda: gymnasium.make_vec(WALK, num_envs=2), ValueError, "autoreset_mode='SameStep'"),
    (lambda: gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make('CartPole-v1')]), TypeError, 'internutopia VectorEnv'),
])
def test_the_bridge_refuses_an_env_it_cannot_serve(make, error, match):
    env = make()
    try:
        with pytest.raises(error, match=match):
            RslRlVecEnv(env)
    finally:
        env.close()


def test_the_mirror_function_is_the_gaits_mirror_maps():
    from tensordict import TensorDict

    from internutopia_extension.robots.h1_locomotion.policy.mirror import rsl_rl_mirror

    rng = np.random.default_rng(0)
    obs = rng.normal(size=(5, gait.OBS_SIZE)).astype(np.float32)
    obs[0, gait.CLOCK_COLUMN:] = (0.0, 1.0)  # a standing clock mirrors to itself
    actions = rng.normal(size=(5, gait.ACTION_SIZE)).astype(np.float32)
    mirrored_obs, mirrored_actions = rsl_rl_mirror(gait)(obs=TensorDict({'policy': torch.as_tensor(obs)}, batch_size=[5]),
                                                         actions=torch.as_tensor(actions))
    np.testing.assert_array_equal(mirrored_obs['policy'][:5].numpy(), obs)
    np.testing.assert_array_equal(mirrored_obs['policy'][5:].numpy(), gait.mirror_observation(obs))
    np.testing.assert_array_equal(mirrored_actions[5:].numpy(), gait.mirror_action(actions))
    assert rsl_rl_mirror(gait)(obs=None, actions=torch.as_tensor(actions))[0] is None


@pytest.mark.slow
def test_rsl_rl_mirror_loss_makes_the_policy_symmetric():
    """rsl-rl's PPO with the mirror loss at a high weight: after a few updates on real rollouts, the
    gap between the policy and its mirror image is a fraction of the untrained policy's."""
    from internutopia_extension.robots.h1_locomotion.policy.rsl_rl_trainer import make_runner

    envs = RslRlVecEnv(walk_vec(4), seed=0)
    try:
        runner = make_runner(envs, rollout=16, learning_rate=1e-3, mirror_weight=50.0, gait_module=gait)
        actor = runner.alg.get_policy()
        obs = envs.get_observations()['policy'].numpy()

        def gap():
            with torch.no_grad():
                action = actor({'policy': torch.as_tensor(obs)}).numpy()
                mirrored = actor({'policy': torch.as_tensor(gait.mirror_observation(obs))}).numpy()
            return float(np.mean((action - gait.mirror_action(mirrored)) ** 2))

        before = gap()
        runner.learn(num_learning_iterations=4)
        assert gap() < 0.3 * before, (before, gap())
    finally:
        envs.close()


def test_the_rsl_rl_trainer_checkpoints_resumes_and_exports_the_walking_graph(tmp_path, capsys):
    """``train --trainer rsl_rl`` writes progress, ``checkpoint.pt`` and ``h1_walk.onnx``; ``--resume``
    carries the steps on; the ONNX graph is the actor's deterministic action, reads back as its
    weights, and drives a walking H1; an sb3 checkpoint is not resumed by it."""
    from internutopia.core.config import Config, SimConfig
    from internutopia.core.vec_env import Env
    from internutopia.macros import gm
    from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_by_speed_cfg
    from internutopia_extension.configs.tasks import LocomotionTaskCfg
    from internutopia_extension.robots.h1_locomotion.policy import train
    from internutopia_extension.robots.h1_locomotion.policy.onnx_io import rsl_rl_actor_from_onnx
    from internutopia_extension.robots.h1_locomotion.policy.rsl_rl_trainer import make_runner
    from internutopia_extension.robots.h1_locomotion.walker import OnnxPolicy

    out = tmp_path / 'run'
    args = ['--trainer', 'rsl_rl', '--out', str(out), '--num-envs', '2', '--rollout', '16', '--checkpoint-every', '32',
            '--mirror-loss', '1.0', '--update-threads', '2']
    train.main([*args, '--steps', '64'])
    capsys.readouterr()
    train.main([*args, '--steps', '96', '--resume'])
    assert 'resumed from' in capsys.readouterr().out
    with open(out / 'progress.csv', encoding='utf-8') as stream:
        steps = [int(row['steps']) for row in csv.DictReader(stream)]
    assert steps == [32, 64, 96]
    saved = torch.load(out / 'checkpoint.pt', weights_only=False)
    assert saved['infos']['steps'] == 96

    envs = RslRlVecEnv(walk_vec(2), seed=0)
    try:
        runner = make_runner(envs, 16, 3e-4)
        runner.load(str(out / 'checkpoint.pt'))
        actor = runner.alg.get_policy()
    finally:
        envs.close()
    obs = np.random.default_rng(1).normal(size=(6, gait.OBS_SIZE)).astype(np.float32)
    with torch.no_grad():
        expected = torch.clamp(actor({'policy': torch.as_tensor(obs)}), -1, 1).numpy()
    np.testing.assert_allclose(OnnxPolicy(out / 'h1_walk.onnx', symmetric=False)(obs), expected, atol=1e-5)
    weights = rsl_rl_actor_from_onnx(out / 'h1_walk.onnx')
    for name, value in weights.items():
        np.testing.assert_array_equal(value.numpy(), actor.state_dict()[name].numpy())

    # The walking H1 loads it (its action scale matches) and walks on it.
    robot = H1RobotCfg(locomotion='walking', walking_policy=str(out / 'h1_walk.onnx'), position=(0.0, 0.0, 1.0),
                       controllers=[move_by_speed_cfg])
    task = LocomotionTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', robots=[robot], max_steps=50, end_on_fall=False)
    config = Config(simulator=SimConfig(physics_dt=0.005, rendering_dt=0.005), env_num=1, metrics_save_path='none',
                    task_configs=[task])
    with Env(config) as env:
        env.reset()
        for _ in range(8):
            obs_out, *_ = env.step([{'h1': {'move_by_speed': [0.5, 0.0, 0.0]}}])
        assert np.all(np.isfinite(obs_out[0]['h1']['position']))

    # The sb3 trainer's run is not resumed by rsl_rl (nor the other way round, silently).
    (tmp_path / 'sb3').mkdir()
    (tmp_path / 'sb3' / 'checkpoint.zip').write_bytes(b'')
    with pytest.raises(SystemExit):
        train.main(['--trainer', 'rsl_rl', '--out', str(tmp_path / 'sb3'), '--resume', '--num-envs', '2'])
    assert "holds the sb3 trainer's checkpoint.zip" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train.main(['--trainer', 'rsl_rl', '--out', str(tmp_path / 'x'), '--init-from', 'run/checkpoint.zip'])
    assert 'starts from an exported .onnx policy only' in capsys.readouterr().err


@pytest.mark.slow
def test_the_training_benchmark_compares_trainers_and_leaves_no_logger_folders(tmp_path, monkeypatch, capsys):
    """One run, both trainers, two update-thread counts: a row each with positive figures; SB3's
    logger no longer leaves a ``SB3-<date>`` folder in the temporary directory."""
    from internutopia.bench import training

    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
    rows = training.main(['--trainer', 'sb3,rsl_rl', '--update-threads', '1,2', '--num-envs', '2', '--rollout', '8',
                          '--iterations', '1', '--mirror-loss', '1'])
    assert [(r['trainer'], r['update_threads']) for r in rows] == [('sb3', 1), ('sb3', 2), ('rsl_rl', 1), ('rsl_rl', 2)]
    for row in rows:
        assert row['env_steps'] == 16 and row['collection_env_steps_per_s'] > 0 and row['update_s'] > 0
        assert 0 < row['env_share_of_collection'] <= 1 and row['loop_env_steps_per_s'] < row['collection_env_steps_per_s']
        assert row['update_cpu_s_per_iteration'] > 0
    assert not list(tmp_path.glob('SB3-*'))
    capsys.readouterr()
    with pytest.raises(SystemExit):
        training.main(['--trainer', 'sb3,cleanrl'])
    assert "unknown 'cleanrl'; valid: ['sb3', 'rsl_rl']" in capsys.readouterr().err


@pytest.mark.parametrize('preset, passive', [(None, True), ('ACTIVE', False), ('passive', True)])
def test_openmp_waits_passively_unless_the_environment_chose_otherwise(preset, passive):
    """Before torch loads, ``sleeping_openmp`` sets ``OMP_WAIT_POLICY=PASSIVE`` (spinning waits made
    a 2-thread update many times slower on a busy machine) and leaves a policy the user chose."""
    import os
    import subprocess
    import sys

    code = ('import sys; from internutopia_extension.robots.h1_locomotion.policy.torch_threads import sleeping_openmp; '
            "assert 'torch' not in sys.modules; print(sleeping_openmp()); import os; print(os.environ['OMP_WAIT_POLICY'])")
    env = {k: v for k, v in os.environ.items() if k != 'OMP_WAIT_POLICY'}
    if preset is not None:
        env['OMP_WAIT_POLICY'] = preset
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env=env, timeout=120, check=True)
    assert done.stdout.split() == [str(passive), preset or 'PASSIVE']


def test_the_public_api_ppo_loop_times_the_tree_it_imports(tmp_path) -> None:
    """``bench/ppo_public.py`` (the loop that compares trees of the project) runs as a script,
    on the tree its ``PYTHONPATH`` names, and reports positive throughputs of that tree; it leaves
    no ``SB3-<date>`` folder in the temporary directory (SB3's default logger makes one per learn)."""
    import json
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parents[1]
    script = root / 'internutopia' / 'bench' / 'ppo_public.py'
    done = subprocess.run([sys.executable, str(script), '--num-envs', '2', '--rollout', '16', '--iterations', '1',
                           '--update-threads', '1', '--openmp-wait', 'active'],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, 'PYTHONPATH': str(root), 'TMPDIR': str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert not list(tmp_path.glob('SB3-*'))
    row = json.loads(done.stdout.strip().splitlines()[-1])
    assert pathlib.Path(row['tree']) == root
    assert row['collect_steps_per_s'] > 0 and row['loop_steps_per_s'] > 0 and row['update_s_per_iteration'] > 0
    assert row['loop_steps_per_s'] < row['collect_steps_per_s']  # the loop adds the update to the collection
    assert (row['update_threads'], row['openmp_wait']) == (1, 'active')
