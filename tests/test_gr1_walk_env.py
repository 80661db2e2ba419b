"""GR1's training env ``internutopia/GR1Walk-v0`` (what ``train --robot gr1`` learns on): real GR1
physics on its walking model, GR1's 12 leg actions, 50-number observation and rewards."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip('fourier_robot_descriptions', reason='the GR1 model: pip install --no-deps fourier-robot-descriptions')


def test_a_standing_gr1_earns_its_reward_upright_and_the_env_resets():
    import gymnasium

    from internutopia_extension.robots.gr1_locomotion import gait

    envs = gymnasium.make_vec('internutopia:internutopia/GR1Walk-v0', num_envs=2, autoreset_mode='SameStep', pushes=False)
    try:
        obs, _ = envs.reset(seed=1)
        assert obs.shape == (2, gait.OBS_SIZE) and envs.single_action_space.shape == (gait.ACTION_SIZE,)
        rewards, ended = [], False
        for _ in range(25):  # 0.5 s in the standing pose (zero actions): no balance is needed yet
            obs, reward, terminated, truncated, _ = envs.step(np.zeros((2, gait.ACTION_SIZE), dtype=np.float32))
            rewards.append(reward)
            ended |= bool(np.any(terminated | truncated))
        assert not ended  # nobody fell
        assert np.all(np.isfinite(obs)) and np.all(obs[:, 8] < -0.95)  # projected gravity: the pelvis upright
        earned = np.array(rewards)
        assert np.all(np.isfinite(earned)) and np.all(earned.sum(axis=0) > 0.0)  # alive and tracking pay
        again, _ = envs.reset(seed=2)
        assert again.shape == (2, gait.OBS_SIZE) and np.all(np.isfinite(again)) and np.all(again[:, 8] < -0.95)
    finally:
        envs.close()


def test_train_robot_gr1_checkpoints_resumes_and_exports_a_policy_a_gr1_walks_with(tmp_path):
    """``train --robot gr1``: a short PPO run on GR1Walk-v0 saves a checkpoint and ``gr1_walk.onnx``
    (GR1's 50 inputs, 12 actions, its action scale recorded); a resumed run carries the step
    count on; a GR1 on its walking model runs the exported policy."""
    import csv
    import json

    import onnx

    from internutopia.core.config import Config, SimConfig
    from internutopia.core.vec_env import Env
    from internutopia_extension.configs.robots.gr1 import GR1RobotCfg, move_by_speed_cfg
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg
    from internutopia_extension.robots.gr1_locomotion import episodes, gait
    from internutopia_extension.robots.h1_locomotion.policy import train

    out = tmp_path / 'run'
    args = ['--robot', 'gr1', '--out', str(out), '--num-envs', '2', '--rollout', '16', '--checkpoint-every', '32']
    train.main([*args, '--steps', '64'])
    train.main([*args, '--steps', '96', '--resume'])
    with open(out / 'progress.csv', encoding='utf-8') as stream:
        steps = [int(row['steps']) for row in csv.DictReader(stream)]
    assert steps == sorted(steps) and steps[-1] >= 96 and len(steps) >= 3
    graph = onnx.load(str(out / 'gr1_walk.onnx'))
    assert [d.dim_value for d in graph.graph.input[0].type.tensor_type.shape.dim][1:] == [gait.OBS_SIZE]
    assert [d.dim_value for d in graph.graph.output[0].type.tensor_type.shape.dim][1:] == [gait.ACTION_SIZE]
    recorded = {p.key: p.value for p in graph.metadata_props}[gait.ACTION_SCALE_METADATA]
    np.testing.assert_allclose(json.loads(recorded), gait.ACTION_SCALE)

    robot = GR1RobotCfg(locomotion='walking', walking_policy=str(out / 'gr1_walk.onnx'), position=(0.0, 0.0, episodes.START_HEIGHT),
                        controllers=[move_by_speed_cfg])
    config = Config(simulator=SimConfig(physics_dt=episodes.PHYSICS_DT, rendering_dt=episodes.PHYSICS_DT), env_num=1,
                    metrics_save_path='none', task_configs=[SingleInferenceTaskCfg(robots=[robot])])
    with Env(config) as env:
        env.reset()
        for _ in range(20):  # 0.1 s: five policy ticks
            obs, *_ = env.step([{'gr1': {'move_by_speed': [0.3, 0.0, 0.0]}}])
        walker = next(iter(env.runner.robot_groups.values())).walker
    assert walker is not None and walker.policy is not None
    assert np.all(np.isfinite(obs[0]['gr1']['position']))


def test_the_trainers_welded_hands_gr1_moves_as_the_full_one_with_22_fewer_joints():
    """``hands='welded'`` (the walking trainer's GR1): the same bodies and masses without the 22
    finger joints, and under the same leg actions the same motion as GR1 with servo-held hands:
    the pelvis within a millimetre after a second, the policy's observations alike."""
    import gymnasium
    import mujoco

    from internutopia_extension.configs.robots.gr1 import GR1_BODY_JOINT_NAMES, GR1_JOINT_NAMES, GR1WeldedHandsRobotCfg
    from internutopia_extension.robots.gr1_locomotion import gait
    from internutopia_extension.robots.gr1_locomotion.episodes import gr1_walk_sampler
    from internutopia_extension.robots.gr1_model import walking_spec

    full, welded = walking_spec().compile(), walking_spec(hands='welded').compile()
    assert (full.nv, welded.nv, welded.neq) == (60, 38, 0)
    assert full.nbody == welded.nbody and np.isclose(full.body_subtreemass[1], welded.body_subtreemass[1])
    assert len(GR1_BODY_JOINT_NAMES) == 32 and set(GR1_BODY_JOINT_NAMES) < set(GR1_JOINT_NAMES)
    assert {welded.joint(j).name for j in range(1, welded.njnt)} == set(GR1_BODY_JOINT_NAMES)
    assert mujoco.mj_name2id(welded, mujoco.mjtObj.mjOBJ_JOINT, 'L_index_proximal_joint') == -1

    runs = {}
    for hands in ('servo', 'welded'):
        envs = gymnasium.make_vec('internutopia:internutopia/GR1Walk-v0', num_envs=3, hands=hands, pushes=False)
        try:
            envs.reset(seed=7)
            runner = envs.unwrapped.vec_env.runner
            assert type(runner.slot_robots[0]['gr1']).__name__ == ('GR1WeldedHandsRobot' if hands == 'welded' else 'GR1Robot')
            rng = np.random.default_rng(0)
            for _ in range(50):  # one second of 50 Hz leg actions
                obs, *_ = envs.step(0.3 * rng.uniform(-1, 1, (3, gait.ACTION_SIZE)).astype(np.float32))
            pelvis = runner.observe_arrays(np.arange(3))['gr1']['position']
            runs[hands] = (pelvis, obs)
        finally:
            envs.close()
    (pelvis, obs), (welded_pelvis, welded_obs) = runs['servo'], runs['welded']
    assert np.all(pelvis[:, 2] > 0.8)  # upright, walking in place under random leg actions
    np.testing.assert_allclose(welded_pelvis, pelvis, atol=1e-3)
    np.testing.assert_allclose(welded_obs, obs, atol=1e-2)

    with pytest.raises(ValueError, match=r"hands='gloves': valid values are \['servo', 'welded'\]"):
        gr1_walk_sampler(hands='gloves')
    with pytest.raises(ValueError, match=r"hands='gloves'"):
        walking_spec(hands='gloves')
    from internutopia.core.config import Config
    from internutopia.core.vec_env import Env
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    carried = GR1WeldedHandsRobotCfg(locomotion='carried')
    env = Env(Config(metrics_save_path='none', task_configs=[SingleInferenceTaskCfg(robots=[carried])]))
    try:
        with pytest.raises(ValueError, match='walking model only'):
            env.reset()
    finally:
        env.close()


def test_the_benchmarks_gr1_case_walks_the_shipped_policy_against_the_physics_limit():
    """``python -m internutopia.bench --robots gr1``: GR1 on its legs with its shipped walking
    policy, stepped through both APIs, its controls replayed by the physics limit."""
    from internutopia.bench.cases import get_case
    from internutopia.bench.paired import summarize, time_pairs
    from internutopia.core.vec_env import Env
    from internutopia.limit import PhysicsLimit

    case = get_case('gr1')
    env = Env(case.config(2, 'off'))
    try:
        env.reset()
        start = env.runner.observe_arrays(np.arange(2))['gr1']['position'].copy()
        out = None
        for _ in range(100):  # 0.5 s of the example path
            out = env.step_arrays(case.array_action(2))
        env.step(case.dict_actions(2))
        assert out is not None and env.runner.slot_robots[0]['gr1'].walker is not None  # on its legs
        moved = np.linalg.norm(out.obs['gr1']['position'][:, :2] - start[:, :2], axis=1)
        assert np.all(np.isfinite(moved)) and np.all(moved > 0.0)
        ours, limit, clean = time_pairs(lambda: env.step_arrays(case.array_action(2)), PhysicsLimit(env.runner.world), 2, 5)
        summary = summarize(ours, limit, clean)
        assert 0.0 < summary['ratio'] < 1.5 and summary['limit_step_s'] > 0.0
    finally:
        env.close()


def test_the_walking_evaluation_measures_a_gr1_policy_on_gr1_as_users_drive_it():
    """``evaluate --robot gr1``: the shipped policy on ``GR1Robot`` with its hands on their servos,
    not the trainer's welded model: falls and the weight on the soles over random commands, and the
    velocity each tracked command reaches."""
    from internutopia_extension.robots.h1_locomotion.policy import evaluate

    policy = 'default'
    falls = evaluate.falls_and_weight(policy, num_envs=2, seconds=1.0, seed=0, robot='gr1')
    assert falls['episodes'] == 2 and 0.0 <= falls['fall_rate'] <= 1.0
    assert 0.5 < falls['weight_on_soles'] < 1.5  # standing or stepping on its soles in its first second
    rows = evaluate.tracking(policy, seconds=1.0, seed=0, robot='gr1')
    assert [tuple(row['command']) for row in rows] == [tuple(c) for c in evaluate.ROBOTS['gr1'].tracked_commands]
    assert all(np.all(np.isfinite(row['reached'])) for row in rows)
