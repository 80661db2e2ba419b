"""H1 walking policy training: starting from an exported policy, action scales, the mirror loss,
reward terms, and the training script end to end (helpers in ``h1_walking_helpers.py``)."""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_by_speed_cfg
from internutopia_extension.configs.tasks import LocomotionTaskCfg
from internutopia_extension.robots.h1_locomotion import gait
from internutopia_extension.robots.h1_locomotion.walker import POLICY_PATH, OnnxPolicy, WalkState
from tests.h1_walking_helpers import SCENE, h1_group


def test_widened_policy_acts_as_the_old_one():
    """``--init-from`` adds inputs with zero weights: whatever they read, the policy is unchanged."""
    import torch

    from internutopia_extension.robots.h1_locomotion.policy.train import widen_inputs

    torch.manual_seed(0)
    old = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ELU(), torch.nn.Linear(8, 2))
    new = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ELU(), torch.nn.Linear(8, 2))
    state = {f'mlp_extractor.{net}.{k}': v for net in ('policy_net', 'value_net') for k, v in old.state_dict().items()}
    widened = widen_inputs(state, [0, 1, 2])
    new.load_state_dict({k.split('.', 2)[2]: v for k, v in widened.items() if k.startswith('mlp_extractor.policy_net')})
    x = torch.randn(4, 5)
    with torch.no_grad():
        np.testing.assert_allclose(new(torch.cat([torch.randn(4, 3) * 10, x], 1)).numpy(), old(x).numpy(), atol=1e-6)
    assert widened['mlp_extractor.value_net.0.weight'].shape == (8, 8)


def test_a_run_starts_from_an_exported_policy_and_warms_its_critic_up_first(tmp_path, capsys):
    """``--init-from h1_walk.onnx``: the shipped actor starts the run, and the critic's warm-up
    updates leave it exactly as it was (its exported policy acts as the shipped one)."""
    import io
    import zipfile

    import onnxruntime
    import torch

    from internutopia_extension.robots.h1_locomotion.policy import train
    from internutopia_extension.robots.h1_locomotion.walker import POLICY_PATH as shipped

    # Three rollouts of 2 x 16 steps, a save after each; every update trains the critic alone.
    train.main(['--out', str(tmp_path), '--num-envs', '2', '--rollout', '16', '--steps', '96', '--checkpoint-every', '32',
                '--init-from', str(shipped), '--max-std', '0.3', '--critic-warmup', '3', '--sidestep-share', '0.5'])
    assert 'started the actor from' in capsys.readouterr().out
    obs = np.random.default_rng(0).normal(size=(16, gait.OBS_SIZE)).astype(np.float32)
    actions = [onnxruntime.InferenceSession(str(path)).run(None, {'obs': obs})[0] for path in (shipped, tmp_path / 'h1_walk.onnx')]
    np.testing.assert_allclose(actions[1], actions[0], atol=1e-5)
    with zipfile.ZipFile(tmp_path / 'checkpoint.zip') as archive:
        state = torch.load(io.BytesIO(archive.read('policy.pth')), map_location='cpu')
    np.testing.assert_allclose(state['log_std'].numpy(), np.log(0.3), atol=1e-6)
    with pytest.raises(ValueError, match='is not one of an exported walking policy'):
        train.actor_from_onnx(_foreign_onnx(tmp_path))


def test_a_policy_carries_its_action_scale_and_a_start_from_other_scales_keeps_its_targets(tmp_path):
    """An exported policy records the action scale it was trained with; the walker refuses one made
    for other scales, and a run started from it rescales its action head to keep its servo targets."""
    import onnx
    import torch

    from internutopia_extension.robots.h1_locomotion.policy import train

    graph = onnx.load(str(POLICY_PATH))
    other = gait.ACTION_SCALE.copy()
    other[[1, 6]] = 0.45  # hip roll over the joint's whole range
    onnx.helper.set_model_props(graph, {gait.ACTION_SCALE_METADATA: json.dumps(other.tolist())})
    onnx.save(graph, str(tmp_path / 'other.onnx'))
    with pytest.raises(ValueError, match=r'was trained with leg action scales \[0.3, 0.45, 0.8.*retrain it'):
        OnnxPolicy(tmp_path / 'other.onnx')
    OnnxPolicy(POLICY_PATH)  # the shipped policy records the walker's scales
    # Started from it, the actor gives the servo targets the file gave, wherever neither is at its limit.
    actor = train.actor_from_onnx(tmp_path / 'other.onnx')
    head = torch.nn.Linear(64, 10)
    head.load_state_dict({'weight': actor['action_net.weight'], 'bias': actor['action_net.bias']})
    old_head = torch.nn.Linear(64, 10)
    old_head.load_state_dict({'weight': torch.from_numpy(onnx.numpy_helper.to_array(
        next(t for t in graph.graph.initializer if t.name == 'head.weight')).copy()), 'bias': torch.from_numpy(
        onnx.numpy_helper.to_array(next(t for t in graph.graph.initializer if t.name == 'head.bias')).copy())})
    features = torch.randn(256, 64) * 0.3
    with torch.no_grad():
        old_action, new_action = old_head(features).numpy(), head(features).numpy()
    free = (np.abs(old_action) < 1.0) & (np.abs(new_action) < 1.0)
    assert free.mean() > 0.5
    np.testing.assert_allclose((other * old_action)[free], (gait.ACTION_SCALE * new_action)[free], atol=1e-5)
    # A file without the record: the scale it was trained with is given (--init-action-scale).
    del graph.metadata_props[:]
    onnx.save(graph, str(tmp_path / 'bare.onnx'))
    np.testing.assert_array_equal(train.actor_from_onnx(tmp_path / 'bare.onnx', other)['action_net.weight'].numpy(),
                                  actor['action_net.weight'].numpy())


def _foreign_onnx(tmp_path):
    """An ONNX file that is not an exported walking policy (its weight has another name)."""
    import onnx
    from onnx import helper, numpy_helper

    weight = numpy_helper.from_array(np.ones((2, 2), dtype=np.float32), 'encoder.weight')
    graph = helper.make_graph([helper.make_node('MatMul', ['x', 'encoder.weight'], ['y'])], 'foreign',
                              [helper.make_tensor_value_info('x', onnx.TensorProto.FLOAT, [1, 2])],
                              [helper.make_tensor_value_info('y', onnx.TensorProto.FLOAT, [1, 2])], [weight])
    path = tmp_path / 'foreign.onnx'
    onnx.save(helper.make_model(graph), str(path))
    return path


def test_the_mirrored_observation_is_what_the_mirror_image_robot_observes():
    """Reflecting a robot's state across its sagittal plane by hand and observing it gives
    ``gait.mirror_observation`` of its observation (a standing clock stays a standing clock)."""
    rng = np.random.default_rng(0)
    quat = rng.normal(size=(6, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    lin_vel, ang_vel, command = rng.normal(size=(3, 6, 3))
    leg_q = gait.LEG_STANDING + 0.2 * rng.normal(size=(6, 10))
    leg_dq, last_action = rng.normal(size=(6, 10)), rng.uniform(-1, 1, (6, 10))
    phase = rng.uniform(0.0, 1.0, 6)
    phase[0] = 0.0  # standing

    def legs(values):
        return values[:, gait.LEG_MIRROR_INDEX] * gait.LEG_MIRROR_SIGN

    obs = gait.observe(quat, lin_vel, ang_vel, leg_q, leg_dq, last_action, command, phase)
    # The reflection S = diag(1, -1, 1): vectors flip y, rotations (axial vectors) flip x and z.
    reflected = gait.observe(quat * [1, -1, 1, -1], lin_vel * [1, -1, 1], ang_vel * [-1, 1, -1],
                             legs(leg_q - gait.LEG_STANDING) + gait.LEG_STANDING, legs(leg_dq), legs(last_action),
                             command * [1, -1, -1], np.where(phase > 0.0, (phase + 0.5) % 1.0, 0.0))
    np.testing.assert_allclose(gait.mirror_observation(obs), reflected, atol=1e-6)
    np.testing.assert_allclose(gait.mirror_observation(gait.mirror_observation(obs)), obs, atol=1e-6)
    np.testing.assert_allclose(gait.mirror_action(gait.mirror_action(last_action)), last_action)
    # Left hip roll out (+) mirrors to right hip roll out (-).
    assert gait.mirror_action(np.eye(10)[[1]])[0, 6] == -1.0


def test_mirror_loss_is_the_gap_to_the_mirror_image_and_its_steps_make_a_policy_symmetric():
    import gymnasium
    import torch
    from stable_baselines3.common.policies import ActorCriticPolicy

    from internutopia_extension.robots.h1_locomotion.policy.train import mirror_loss

    torch.manual_seed(0)
    unit = np.ones(gait.ACTION_SIZE, dtype=np.float32)
    policy = ActorCriticPolicy(gymnasium.spaces.Box(-np.inf, np.inf, (gait.OBS_SIZE,), np.float32),
                               gymnasium.spaces.Box(-unit, unit), lambda _: 1e-3)
    obs = np.random.default_rng(1).normal(size=(256, gait.OBS_SIZE)).astype(np.float32)
    obs[:32, gait.CLOCK_COLUMN:] = (0.0, 1.0)  # standing robots among them

    def mean(x):
        with torch.no_grad():
            return policy.get_distribution(torch.as_tensor(x)).distribution.mean.numpy()

    gap = np.mean((mean(obs) - gait.mirror_action(mean(gait.mirror_observation(obs)))) ** 2)
    with torch.no_grad():
        assert float(mirror_loss(policy, obs)) == pytest.approx(gap, rel=1e-5)
    for _ in range(300):
        loss = mirror_loss(policy, obs)
        policy.optimizer.zero_grad()
        loss.backward()
        policy.optimizer.step()
    with torch.no_grad():
        assert float(mirror_loss(policy, obs)) < 0.05 * gap


def upright_walk_state(k: int, **fields):
    """A :class:`WalkState` of ``k`` H1s upright at rest, feet in stance and the clock running,
    with ``fields`` replaced (the reward terms' inputs, without a simulation)."""
    zeros = np.zeros((k, 10))
    state = {'height': np.full(k, 1.0), 'gravity': np.tile([0.0, 0.0, -1.0], (k, 1)), 'lin_vel': np.zeros((k, 3)),
             'ang_vel': np.zeros((k, 3)), 'leg_q': zeros, 'leg_dq': zeros, 'action': zeros, 'last_action': zeros,
             'command': np.zeros((k, 3)), 'stance': np.ones((k, 2), bool), 'moving': np.ones(k, bool),
             'touch': np.zeros((k, 2)), 'foot_height': np.zeros((k, 2)), 'foot_speed': np.zeros((k, 2)),
             'foot_lateral': np.zeros((k, 2))}
    return WalkState(**{**state, **fields})


def test_foot_placement_rewards_a_swinging_sole_where_a_side_step_lands():
    """Told to side-step left at 0.5 m/s, a swinging left sole is rewarded 0.11 m outside its
    standing offset (half a stance of travel), the right one 0.11 m inside; soles in stance and
    robots standing get nothing."""
    from internutopia_extension.robots.h1_locomotion import rewards

    k = 3
    state = upright_walk_state(k, command=np.tile([0.0, 0.5, 0.0], (k, 1)),
                               stance=np.array([[False, True], [True, False], [False, False]]),
                               moving=np.array([True, True, False]), foot_lateral=np.tile([0.2 + 0.11, -0.2 + 0.11], (k, 1)))
    np.testing.assert_allclose(rewards.TERMS['foot_placement'](state), [1.0, 1.0, 0.0])
    state.foot_lateral = np.tile([0.2, -0.2], (k, 1))  # standing width: 0.11 m off, exp(-0.0121 / 0.01)
    np.testing.assert_allclose(rewards.TERMS['foot_placement'](state), [np.exp(-1.21)] * 2 + [0.0])
    assert rewards.REWARD_SCALES['foot_placement'] == 0.0  # a run turns it on (--reward-scale foot_placement=0.4)


def test_the_narrow_tracking_kernel_sees_a_side_step_twenty_percent_short():
    """Side-stepping at 0.4 of a 0.5 m/s command: the wide kernel still pays 0.96 of a perfect
    step, the narrow one 0.82; both pay 1 on the command and fall off with the error."""
    from internutopia_extension.robots.h1_locomotion import rewards

    state = upright_walk_state(3, command=np.tile([0.0, 0.5, 0.0], (3, 1)),
                               lin_vel=np.array([[0.0, 0.5, 0.0], [0.0, 0.4, 0.0], [0.0, 0.3, 0.0]]))
    np.testing.assert_allclose(rewards.TERMS['track_lin_vel'](state), np.exp(-np.array([0.0, 0.01, 0.04]) / 0.25))
    np.testing.assert_allclose(rewards.TERMS['track_lin_vel_fine'](state), np.exp(-np.array([0.0, 0.01, 0.04]) / 0.05))
    assert rewards.TERMS['track_lin_vel_fine'](state)[1] == pytest.approx(0.82, abs=0.01)
    assert rewards.REWARD_SCALES['track_lin_vel_fine'] == 0.0  # a run turns it on (--reward-scale track_lin_vel_fine=2.0)


@pytest.mark.slow
def test_training_script_checkpoints_resumes_and_the_policy_runs_deployed(tmp_path, capsys):
    """A short PPO run saves a checkpoint, ONNX and progress; resuming carries the step count on;
    the exported ONNX drives a walking H1 through ``move_by_speed`` exactly as in training."""
    from internutopia_extension.robots.h1_locomotion.policy import train

    out = tmp_path / 'run'
    train.main(['--out', str(out), '--steps', '1024', '--num-envs', '2', '--checkpoint-every', '512'])
    # Resumed with another emphasis (every moving command side-steps; a lighter hip penalty; the mirror loss).
    capsys.readouterr()
    train.main(['--out', str(out), '--steps', '2048', '--num-envs', '2', '--checkpoint-every', '512', '--resume',
                '--lateral-share', '1.0', '--reward-scale', 'hip_pos=-0.3', '--mirror-loss', '1.0'])
    printed = capsys.readouterr().out
    assert 'mirror loss at weight 1.0' in printed
    assert [float(v) >= 0.0 for v in re.findall(r'mirror_loss ([0-9.e-]+)', printed)] == [True] * 2  # two saves, each after updates
    with open(out / 'progress.csv', encoding='utf-8') as stream:
        steps = [int(row['steps']) for row in csv.DictReader(stream)]
    assert steps == sorted(steps) and steps[-1] >= 2048 and len(steps) >= 3
    train.main(['--out', str(out), '--plot'])
    assert (out / 'training.png').stat().st_size > 10_000

    policy_path = out / 'h1_walk.onnx'
    cfg = H1RobotCfg(locomotion='walking', walking_policy=str(policy_path), position=(0.0, 0.0, 1.0), controllers=[move_by_speed_cfg])
    task = LocomotionTaskCfg(scene_asset_path=SCENE, robots=[cfg], max_steps=400, end_on_fall=False)
    config = Config(simulator=SimConfig(physics_dt=0.005, rendering_dt=0.005), env_num=2, env_offset_size=3.0,
                    metrics_save_path='none', task_configs=[task] * 2)
    with Env(config) as env:
        env.reset()
        group = h1_group(env)
        walker = group.walker
        policy = OnnxPolicy(policy_path)
        for _ in range(4):  # ticks at 0 s, then at 0.02 s: the fifth step's
            env.step([{'h1': {'move_by_speed': [0.5, 0.0, 0.2]}}] * 2)
        # Just before a tick, the observation the walker will feed its policy, and that policy's answer.
        obs = walker.observe(np.array([0, 1]))
        expected = gait.leg_targets(policy(obs))
        env.step([{'h1': {'move_by_speed': [0.5, 0.0, 0.2]}}] * 2)
        data = group.bound_world.data
        legs = group.ids(np.array([0]), 'actuator', list(gait.LEG_JOINTS))[0]
        np.testing.assert_allclose(data.ctrl[0, legs], expected[0], atol=1e-5)
        np.testing.assert_allclose(walker.command[0], [0.5, 0.0, 0.2])

    # The evaluation script measures that policy and writes its figures.
    from internutopia_extension.robots.h1_locomotion.policy import evaluate

    result = evaluate.main(['--policy', str(policy_path), '--num-envs', '2', '--seconds', '0.5', '--json', str(tmp_path / 'eval.json')])
    assert set(result) == {'paths', 'point_goals', 'random_commands', 'random_commands_pushed', 'tracking', 'standing'}
    assert len(result['tracking']) == len(evaluate.TRACKED_COMMANDS) and all(len(row['reached']) == 3 for row in result['tracking'])
    runs = [result[name] for name in ('paths', 'point_goals', 'random_commands', 'random_commands_pushed')]
    assert all(run['episodes'] == 2 and 0.0 <= run['fall_rate'] <= 1.0 for run in runs)
    # The falls under random commands are split between episodes with and without fast lateral commands.
    split = result['random_commands']
    assert split['fast_lateral']['episodes'] + split['no_fast_lateral']['episodes'] == 2
    assert 0 <= split['goal_points']['episodes'] <= split['no_fast_lateral']['episodes']
    assert result['paths']['success'] == 0.0  # (3, 4) is 5 m away: not reached in 0.5 s
    # Dropped 1 cm onto its soles, it stands on them: they carry its weight, not its pelvis or knees.
    assert result['random_commands']['weight_on_soles'] > 0.5  # (the landing's impact in these 0.5 s adds to it)
    # Standing: one slot from its spawn pose, one after walking; the drift of those still up.
    for case in ('from_spawn', 'after_walking'):
        assert result['standing'][case]['episodes'] == 1 and result['standing'][case]['fall_rate'] in (0.0, 1.0)
    assert (tmp_path / 'eval.json').stat().st_size > 100


def test_the_standing_measure_sees_the_shipped_h1_stand_still_from_its_spawn_pose():
    """``evaluate --measures standing`` on H1's shipped policy: from its spawn pose it stands (drift
    under 2 mm in 2 s); the slots told to stop after walking are measured the same way (the figures
    of docs/training.md: stopping from a fast turning walk is where H1's policy can fall)."""
    from internutopia_extension.robots.h1_locomotion.policy import evaluate

    result = evaluate.standing('default', num_envs=4, seconds=4.0, physics_dt=1 / 240, seed=0)
    spawn, walked = result['from_spawn'], result['after_walking']
    assert spawn['episodes'] == walked['episodes'] == 2
    assert spawn['fall_rate'] == 0.0 and spawn['drift_max_m'] < 0.002
    assert walked['fall_rate'] in (0.0, 0.5, 1.0)
    assert walked['fall_rate'] == 1.0 or 0.0 <= walked['drift_mean_m'] <= walked['drift_max_m']


def test_a_training_run_can_shift_its_emphasis_and_bad_settings_are_named(capsys):
    from internutopia_extension.robots.h1_locomotion.episodes import walk_sampler
    from internutopia_extension.robots.h1_locomotion.policy import train

    tasks = walk_sampler(batch=32, lateral_share=1.0, reward_scales={'hip_pos': -0.3})(np.random.default_rng(0))
    moving = [command for task in tasks if task.goals is None for command in task.commands if any(command[1:])]
    assert moving and all(command[2] != 0.0 for command in moving)  # every moving command side-steps
    assert all(task.reward_scales == {'hip_pos': -0.3} for task in tasks)
    with pytest.raises(ValueError, match='lateral_share must be between 0 and 1'):
        walk_sampler(lateral_share=1.5)
    # Pure side-steps: sideways at 0.2-0.5 m/s, hardly forward, not turning.
    tasks = walk_sampler(batch=32, sidestep_share=1.0)(np.random.default_rng(1))
    moving = [command[1:] for task in tasks if task.goals is None for command in task.commands if any(command[1:])]
    assert moving and all(abs(f) <= 0.1 and 0.2 <= abs(lateral) <= 0.5 and yaw == 0.0 for f, lateral, yaw in moving)
    assert {np.sign(lateral) for _, lateral, _ in moving} == {-1.0, 1.0}
    with pytest.raises(ValueError, match='sidestep_share must be between 0 and 1'):
        walk_sampler(sidestep_share=-0.1)
    # Standing: every random command zero at stand_share=1, none at 0; the stream of the other draws is kept.
    commands = [command[1:] for task in walk_sampler(batch=32, stand_share=1.0)(np.random.default_rng(2)) if task.goals is None
                for command in task.commands]
    assert commands and all(command == (0.0, 0.0, 0.0) for command in commands)
    assert all(any(command[1:]) for task in walk_sampler(batch=32, stand_share=0.0)(np.random.default_rng(2))
               if task.goals is None for command in task.commands)
    with pytest.raises(ValueError, match='stand_share must be between 0 and 1'):
        walk_sampler(stand_share=1.5)
    for argv, message in ((['--reward-scale', 'hips=-1'], "unknown term 'hips'; valid terms: ["),
                          (['--reward-scale', 'hip_pos=x'], 'the scale must be a number'),
                          (['--lateral-share', '2'], '--lateral-share must be between 0 and 1'),
                          (['--sidestep-share', '1.2'], '--sidestep-share must be between 0 and 1'),
                          (['--stand-share', '-0.5'], '--stand-share must be between 0 and 1'),
                          (['--mirror-loss', '-1'], '--mirror-loss takes a weight >= 0; got -1.0'),
                          (['--critic-warmup', '5'], '--critic-warmup takes a count of updates >= 0 and needs --init-from'),
                          (['--init-action-scale', 'hip=0.3'], "unknown joint kind 'hip'; valid kinds: ['ankle', 'hip_pitch'"),
                          (['--init-action-scale', 'knee=-1'], 'the scale must be positive')):
        with pytest.raises(SystemExit) as exit_info:
            train.main(['--out', 'unused', *argv])
        assert exit_info.value.code == 2 and message in capsys.readouterr().err, argv
