"""H1 and G1: every base-motion controller, G1's walking policy in every slot, and the user's example."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from internutopia.core.util.math import quat_to_yaw
from internutopia.core.vec_env import Env
from internutopia.macros import gm
from internutopia_extension.configs.robots import g1, h1
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = {
    'h1': (h1.H1RobotCfg, h1, (0.0, 0.0, 1.05), 0.2, 0.1),
    'g1': (g1.G1RobotCfg, g1, (0.0, 0.0, 0.757), 0.3, 0.2),
}


def make_env(make_config, robot, env_num=1, steps_scene=True, **fields):
    cfg_class, module, position, _, _ = ROBOTS[robot]
    robot_cfg = cfg_class(position=position, controllers=[module.move_by_speed_cfg, module.move_to_point_cfg,
                                                          module.move_along_path_cfg, module.rotate_cfg], **fields)
    task = SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', scene_scale=(0.01, 0.01, 0.01),
                                  robots=[robot_cfg])
    env = Env(make_config([task] * env_num, env_num=env_num, offset=10.0))
    env.reset()
    return env


def run(env, robot, command, steps, until=None):
    obs = None
    for _ in range(steps):
        obs, *_ = env.step([{robot: command}] * env.env_num)
        if until is not None and all(until(o[robot]) for o in obs):
            break
    return obs


@pytest.mark.parametrize('robot', ['h1', 'g1'])
def test_move_to_point_reaches_goal(make_config, robot):
    env = make_env(make_config, robot)
    goal = np.array([2.0, -1.0, 0.0])
    obs = run(env, robot, {'move_to_point': [goal.tolist()]}, 6000,
              until=lambda o: o['controllers']['move_to_point']['finished'])
    state = obs[0][robot]
    assert state['controllers']['move_to_point']['finished']
    assert np.linalg.norm(state['position'][:2] - goal[:2]) < ROBOTS[robot][4]
    env.close()


@pytest.mark.parametrize('robot', ['h1', 'g1'])
def test_rotate_reaches_heading(make_config, robot):
    env = make_env(make_config, robot)
    yaw = 2.0
    goal = [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
    obs = run(env, robot, {'rotate': [goal]}, 3000, until=lambda o: o['controllers']['rotate']['finished'])
    state = obs[0][robot]
    assert state['controllers']['rotate']['finished']
    error = abs((quat_to_yaw(state['orientation']) - yaw + math.pi) % (2 * math.pi) - math.pi)
    assert error < (0.05 if robot == 'h1' else 0.15)
    assert np.linalg.norm(state['position'][:2]) < 0.3  # turned in place
    env.close()


@pytest.mark.parametrize('robot', ['h1', 'g1'])
def test_move_by_speed_moves_forward_in_heading_direction(make_config, robot):
    env = make_env(make_config, robot)
    command = [0.5, 0.0, 0.0]
    obs = run(env, robot, {'move_by_speed': command}, 240 * 4)
    x, y = obs[0][robot]['position'][:2]
    # Both walk short of the command: G1 at about 0.4 m/s, H1 at about 0.35 (after its half-second ramp).
    expected = 0.35 * 4 if robot == 'h1' else 0.4 * 4
    assert x == pytest.approx(expected, rel=0.3) and abs(y) < 0.4
    env.close()


@pytest.mark.parametrize('robot, env_num', [('h1', 4), ('g1', 4)])
def test_path_following_in_every_slot(make_config, robot, env_num):
    env = make_env(make_config, robot, env_num=env_num)
    path = [(1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (3.0, 4.0, 0.0)]
    obs = run(env, robot, {'move_along_path': [path]}, 8000,
              until=lambda o: o['controllers']['move_along_path']['finished'])
    for slot in range(env_num):
        state = obs[slot][robot]
        assert state['controllers']['move_along_path']['finished']
        assert state['controllers']['move_along_path']['current_index'] == 2
        assert np.linalg.norm(state['position'][:2] - [3.0, 4.0]) < ROBOTS[robot][3]
    env.close()


def test_g1_stays_upright_for_20_seconds_in_every_slot(make_config):
    env = make_env(make_config, 'g1', env_num=4)
    commands = [[0.5, 0.0, 0.0], [0.0, 0.0, 0.8], [0.3, 0.2, -0.4], [0.0, 0.0, 0.0]]
    lowest = np.full(4, np.inf)
    for _ in range(240 * 20):
        obs, *_ = env.step([{'g1': {'move_by_speed': c}} for c in commands])
        lowest = np.minimum(lowest, [o['g1']['position'][2] for o in obs])
    assert np.all(lowest > 0.6), lowest
    assert obs[0]['g1']['position'][0] > 5.0  # walked forward at about 0.4 m/s
    assert np.linalg.norm(obs[3]['g1']['position'][:2]) < 0.1  # stood still
    env.close()


def test_g1_slots_are_independent(make_config):
    env = make_env(make_config, 'g1', env_num=2)
    for _ in range(480):
        obs, *_ = env.step([{'g1': {'move_by_speed': [0.5, 0.0, 0.0]}}, None])
    assert obs[0]['g1']['position'][0] > 0.3
    assert np.linalg.norm(obs[1]['g1']['position'][:2]) < 0.05
    env.close()


def test_carried_h1_joints_hold_standing_pose(make_config):
    env = make_env(make_config, 'h1', locomotion='carried')
    obs = run(env, 'h1', None, 240)
    joints = obs[0]['h1']['joint_positions']
    assert joints.shape == (19,) and np.abs(joints).max() < 1e-3
    obs = run(env, 'h1', {'move_by_speed': [1.0, 0.0, 0.5]}, 480)
    assert np.abs(obs[0]['h1']['joint_positions']).max() < 0.3  # the legs trail a little while gliding
    assert abs(obs[0]['h1']['position'][2] - 1.05) < 0.02
    env.close()


def test_bounded_example_runs_and_robots_arrive():
    env = dict(os.environ, MUJOCO_GL='egl')
    result = subprocess.run([sys.executable, str(ROOT / 'examples' / 'h1_vec_env.py')], capture_output=True, text=True,
                            timeout=300, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'every robot arrived' in result.stdout


def test_user_example_runs_unchanged():
    seed = ROOT.parent / 'shared' / 'seeds' / 'vec_env_example.py'
    if not seed.exists():
        seed = ROOT / 'tests' / 'data' / 'vec_env_example.py'
    script = seed.read_text()
    # The example loops until interrupted; run it as is and stop it after 300 printed steps.
    process = subprocess.Popen([sys.executable, '-c', script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=dict(os.environ, MUJOCO_GL='egl', PYTHONUNBUFFERED='1'))
    lines = []
    try:
        for line in process.stdout:
            lines.append(line)
            if line.strip() == '300':
                break
    finally:
        process.kill()
        process.wait()
    text = ''.join(lines)
    assert '"env_num": 2' in text and '========INIT OBS' in text, text[-3000:]
    after_init = text.split('=============', 1)[1].split()
    assert after_init[:3] == ['100', '200', '300'], text[-2000:]


def test_h1_keeps_its_commanded_speed_when_its_slot_takes_substeps(make_config):
    """H1 beside G1 at physics_dt 1/60: the slot runs substeps (G1 needs <= 1/200 s), and H1's
    carried base still moves at the commanded speed per second of simulated time."""
    h1_cfg = h1.H1RobotCfg(locomotion='carried', position=(0.0, 0.0, 1.05), controllers=[h1.move_by_speed_cfg])
    g1_cfg = g1.G1RobotCfg(name='g1', position=(0.0, 3.0, 0.757), controllers=[g1.move_by_speed_cfg])
    task = SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', scene_scale=(0.01, 0.01, 0.01),
                                  robots=[h1_cfg, g1_cfg])
    config = make_config([task], env_num=1, offset=10.0)
    config = config.model_copy(update={'simulator': config.simulator.model_copy(update={'physics_dt': 1 / 60})})
    with Env(config) as env:
        env.reset()
        assert env.runner.world.pack(0).substeps > 1
        obs = None
        for _ in range(120):  # two seconds
            obs, *_ = env.step([{'h1': {'move_by_speed': [0.5, 0.0, 0.0]}}])
        assert obs[0]['h1']['position'][0] == pytest.approx(1.0, rel=0.25)
