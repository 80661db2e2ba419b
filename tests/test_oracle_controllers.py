"""InternUtopia's oracle controllers: the base jumps towards its goal, a bounded step per env step."""

from __future__ import annotations

import numpy as np

from internutopia.core.config import Config, SimConfig
from internutopia.core.util.math import quat_to_yaw, yaw_to_quat
from internutopia.core.vec_env import Env
from internutopia_extension.configs.controllers import MoveToPointBySpeedControllerCfg, RotateControllerCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

ORACLE_MOVE = MoveToPointBySpeedControllerCfg(name='jump_to', type='MoveToPointOracleController', forward_speed=0.1, threshold=0.02)
ORACLE_TURN = RotateControllerCfg(name='turn_to', type='RotateOracleController', rotation_speed=0.25, threshold=0.01)


def test_oracle_move_and_rotate_put_the_base_on_its_way_in_bounded_jumps():
    robot = JetbotRobotCfg(position=(0.0, 0.0, 0.0), controllers=[ORACLE_MOVE, ORACLE_TURN])
    task = FiniteStepTaskCfg(max_steps=1000, robots=[robot])
    config = Config(simulator=SimConfig(physics_dt=1 / 240), env_num=2, env_offset_size=10, task_configs=[task, task])
    with Env(config) as env:
        obs, _ = env.reset()
        start_z = obs[0]['jetbot']['position'][2]
        goal = (1.0, 0.5, 0.0)
        positions = []
        for _ in range(8):
            obs, *_ = env.step([{'jetbot': {'jump_to': [goal]}}, None])
            positions.append(np.array(obs[0]['jetbot']['position']))
        jumps = np.linalg.norm(np.diff(positions, axis=0)[:, :2], axis=1)
        assert np.all(jumps <= 0.1 + 1e-6) and jumps[0] > 0.09  # at most forward_speed a step
        assert not obs[0]['jetbot']['controllers']['jump_to']['finished']
        for _ in range(10):
            obs, *_ = env.step([{'jetbot': {'jump_to': [goal]}}, None])
        robot_obs = obs[0]['jetbot']
        assert robot_obs['controllers']['jump_to']['finished']
        np.testing.assert_allclose(robot_obs['position'][:2], goal[:2], atol=0.03)
        assert abs(robot_obs['position'][2] - start_z) < 0.02  # its height kept
        assert abs(quat_to_yaw(np.array(robot_obs['orientation'])) - np.arctan2(0.5, 1.0)) < 0.05  # faced the goal
        np.testing.assert_allclose(obs[1]['jetbot']['position'][:2], (0.0, 0.0), atol=1e-3)  # the other slot stayed

        target = yaw_to_quat(np.array([np.pi / 2 + np.arctan2(0.5, 1.0)]))[0]
        yaws = []
        for _ in range(12):
            obs, *_ = env.step([{'jetbot': {'turn_to': [target]}}, None])
            yaws.append(quat_to_yaw(np.array(obs[0]['jetbot']['orientation'])))
        assert np.all(np.abs(np.diff(yaws)) <= 0.25 + 1e-6)
        assert obs[0]['jetbot']['controllers']['turn_to']['finished']
        assert abs(yaws[-1] - (np.pi / 2 + np.arctan2(0.5, 1.0))) < 0.02
