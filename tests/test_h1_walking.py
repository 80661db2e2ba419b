"""H1 walking on its own legs: the free model, the walker's tick, the locomotion task and training."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia.macros import gm
from internutopia_extension.configs.controllers.h1_leg_action import H1LegActionControllerCfg
from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_by_speed_cfg
from internutopia_extension.configs.tasks import LocomotionTaskCfg
from internutopia_extension.robots.h1_locomotion import gait
from internutopia_extension.robots.h1_locomotion.walker import OnnxPolicy

SCENE = gm.ASSET_PATH + '/scenes/empty.usd'
#: H1's mass as Menagerie models it (kg), and gravity.
H1_MASS = 51.4
GRAVITY = 9.81


def walking_env(env_num=2, max_steps=400, commands=((0.0, 0.0, 0.0, 0.0),), task_fields=None, **robot):
    robot.setdefault('walking_policy', 'controller')
    robot.setdefault('controllers', [H1LegActionControllerCfg()])
    cfg = H1RobotCfg(locomotion='walking', position=(0.0, 0.0, 1.0), **robot)
    task = LocomotionTaskCfg(scene_asset_path=SCENE, robots=[cfg], max_steps=max_steps, commands=list(commands),
                             **(task_fields or {}))
    config = Config(simulator=SimConfig(physics_dt=0.005, rendering_dt=0.005), env_num=env_num, env_offset_size=3.0,
                    metrics_save_path='none', task_configs=[task] * env_num)
    env = Env(config)
    env.reset()
    return env


def h1_group(env):
    return env.runner.slot_robots[0]['h1']


def step(env, action, n):
    out = None
    for _ in range(n):
        out = env.step_arrays({'h1': {'leg_action': np.tile(action, (env.env_num, 1))}})
    return out


def test_walking_model_holds_nothing_but_the_joints():
    """No weld, no mocap, no gravity compensation, torque-limited servos (the motors' limits)."""
    env = walking_env(env_num=1)
    model = h1_group(env).bound_world.model
    assert model.neq == 0 and model.nmocap == 0
    assert float(np.abs(model.body_gravcomp).max()) == 0.0
    names = [model.actuator(i).name.split('/')[-1] for i in range(model.nu)]
    limits = dict(zip(names, model.actuator_forcerange[:, 1], strict=True))
    assert limits['left_knee_joint'] == 300 and limits['right_hip_pitch_joint'] == 200 and limits['left_ankle_joint'] == 40
    assert bool(np.all(model.actuator_forcelimited[:19]))
    # Nothing applies forces on the pelvis either.
    out = step(env, np.zeros(10), 20)
    data = h1_group(env).bound_world.data
    assert float(np.abs(data.xfrc_applied).max()) == 0.0 and float(np.abs(data.qfrc_applied).max()) == 0.0
    assert out.active.all()
    env.close()


def test_standing_pose_stands_on_its_soles():
    """At zero action H1 stands on its own for a second, its soles carry its weight."""
    env = walking_env(env_num=2)
    out = step(env, np.zeros(10), 200)  # 1 s
    position = out.obs['h1']['position']
    assert np.all(np.abs(position[:, 2] - 0.98) < 0.06), position
    state = h1_group(env).walker.state(np.array([0, 1]))
    weight = H1_MASS * GRAVITY
    assert np.all(np.abs(state.touch.sum(axis=1) - weight) < 0.15 * weight), state.touch
    assert not out.terminated.any()
    env.close()


def test_leg_actions_become_servo_targets_at_the_50_hz_tick():
    env = walking_env(env_num=2)
    group = h1_group(env)
    action = np.linspace(-1.5, 1.5, 10)  # beyond [-1, 1] on both ends: clipped
    step(env, action, 4)
    data = group.bound_world.data
    legs = group.ids(np.array([0]), 'actuator', list(gait.LEG_JOINTS))[0]
    expected = gait.LEG_STANDING + gait.ACTION_SCALE * np.clip(action, -1, 1)
    np.testing.assert_allclose(data.ctrl[0, legs], expected)
    np.testing.assert_allclose(group.walker.action[1], np.clip(action, -1, 1))
    # The observation the policy gets reports that action as the last one.
    obs = group.walker.observe(np.array([0]))
    np.testing.assert_allclose(obs[0, 29:39], np.clip(action, -1, 1), atol=1e-6)
    env.close()


def test_falling_ends_the_episode_with_a_record():
    env = walking_env(env_num=1, max_steps=2000, commands=[(0.0, 0.5, 0.0, 0.0)])
    fell_at = None
    for i in range(600):
        out = env.step_arrays({'h1': {'leg_action': np.array([[1.0, 1.0, -1.0, -1.0, 1.0] * 2])}})
        if out.terminated[0]:
            fell_at = i
            break
    assert fell_at is not None, 'H1 should fall with its legs thrown out'
    record = out.metrics[0]
    assert record['fell'] is True and 0 < record['seconds'] < 3.0
    assert record['mean_velocity_error'] > 0
    env.close()


def test_standing_episode_is_truncated_not_fallen():
    env = walking_env(env_num=1, max_steps=100)
    out = None
    for _ in range(100):
        out = env.step_arrays({'h1': {'leg_action': np.zeros((1, 10))}})
    assert out.truncated[0] and not out.terminated[0]
    assert out.metrics[0]['fell'] is False and out.metrics[0]['steps'] == 100
    env.close()


def test_command_schedule_reaches_the_walker():
    env = walking_env(env_num=1, max_steps=1000, commands=[(0.0, 0.5, 0.0, 0.0), (0.25, 0.0, 0.0, 0.8), (0.5, 5.0, 0.0, 0.0)])
    walker = h1_group(env).walker
    np.testing.assert_allclose(walker.command[0], [0.5, 0.0, 0.0])
    step(env, np.zeros(10), 50)
    np.testing.assert_allclose(walker.command[0], [0.0, 0.0, 0.8])
    step(env, np.zeros(10), 50)
    np.testing.assert_allclose(walker.command[0], [gait.COMMAND_HIGH[0], 0.0, 0.0])  # clipped to the trained range
    env.close()


def test_pushes_come_at_their_interval_and_only_to_their_slot():
    env = walking_env(env_num=2, task_fields={'push_interval': (0.1, 0.1), 'push_speed': 2.0})
    group = h1_group(env)
    data = group.bound_world.data
    dof = int(group.root_dofadr[0])
    step(env, np.zeros(10), 19)
    before = data.qvel[:, dof:dof + 2].copy()
    step(env, np.zeros(10), 2)  # the push lands at 0.1 s (step 20)
    jump = np.linalg.norm(data.qvel[:, dof:dof + 2] - before, axis=1)
    assert np.all(jump > 0.05), jump  # both slots pushed (each its own push)
    assert not np.allclose(data.qvel[0, dof:dof + 2], data.qvel[1, dof:dof + 2])
    env.close()
    # Without push_interval, nothing pushes.
    quiet = walking_env(env_num=1)
    group = h1_group(quiet)
    step(quiet, np.zeros(10), 40)
    assert float(np.abs(group.bound_world.data.qvel[0, int(group.root_dofadr[0]):][:2]).max()) < 0.2
    quiet.close()


def test_leg_action_needs_a_walking_h1_trained_from_outside():
    task = LocomotionTaskCfg(scene_asset_path=SCENE, robots=[H1RobotCfg(controllers=[H1LegActionControllerCfg()])])
    with pytest.raises(ValueError, match="walking_policy is 'controller'.*locomotion='carried'"):
        with Env(Config(env_num=1, metrics_save_path='none', task_configs=[task])) as env:
            env.reset()


@pytest.mark.parametrize(('field', 'value', 'message'), [
    ('commands', [(1.0, 0.5, 0.0, 0.0)], 'start times must begin at 0'),
    ('commands', [(0.0, float('nan'), 0.0, 0.0)], 'finite'),
    ('reward_scales', {'trackk': 1.0}, "unknown reward terms \\['trackk'\\]; valid terms"),
    ('push_interval', (2.0, 1.0), 'push_interval must be'),
    ('push_speed', float('inf'), 'push_speed'),
    ('push_speed', 9.0, r'push_speed must be a speed in \[0, 5\]'),
])
def test_locomotion_task_config_errors(field, value, message):
    with pytest.raises(ValueError, match=message):
        LocomotionTaskCfg(**{field: value})


def test_locomotion_must_be_a_known_mode():
    with pytest.raises(ValueError, match='locomotion'):
        H1RobotCfg(locomotion='flying')


def test_missing_policy_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match='policy.train'):
        OnnxPolicy(tmp_path / 'absent.onnx')


@pytest.mark.slow
def test_training_script_checkpoints_resumes_and_the_policy_runs_deployed(tmp_path):
    """A short PPO run saves a checkpoint, ONNX and progress; resuming carries the step count on;
    the exported ONNX drives a walking H1 through ``move_by_speed`` exactly as in training."""
    from internutopia_extension.robots.h1_locomotion.policy import train

    out = tmp_path / 'run'
    train.main(['--out', str(out), '--steps', '1024', '--num-envs', '2', '--checkpoint-every', '512'])
    train.main(['--out', str(out), '--steps', '2048', '--num-envs', '2', '--checkpoint-every', '512', '--resume'])
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
