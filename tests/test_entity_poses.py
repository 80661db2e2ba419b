"""A robot's configured or teleported orientation need not be a unit quaternion; the state holds one.

Before, a robot configured with ``orientation=(2, 0, 0, 0)`` reported ``(2, 0, 0, 0)`` until its
first step, its root offset was turned by the unnormalized quaternion (a base 4x as high as
configured, for a quaternion of length 2), and a teleport to a zero quaternion was accepted and
read back as zeros (objects had been mended alone; the rule now lives in their shared base).
"""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


def _env(orientation) -> Env:
    robot = JetbotRobotCfg(position=(0.5, 0.0, 0.0), orientation=orientation)
    config = Config(simulator=SimConfig(physics_dt=1 / 60), env_num=2, env_offset_size=5.0, metrics_save_path='none',
                    task_configs=[FiniteStepTaskCfg(max_steps=100, robots=[robot])] * 2)
    return Env(config)


def test_a_robot_configured_with_a_long_quaternion_starts_with_the_unit_one_at_its_height():
    turned = (0.0, 0.0, 0.0, 2.0)  # (half a turn about z, length 2)
    env, plain = _env(turned), _env((0.0, 0.0, 0.0, 1.0))
    try:
        obs, _ = env.reset()
        expected, _ = plain.reset()
        for slot in range(2):
            np.testing.assert_allclose(obs[slot]['jetbot']['orientation'], [0.0, 0.0, 0.0, 1.0], atol=1e-12)
            # the chassis 3.5 cm above the floor, as with the unit quaternion (it was 14 cm)
            np.testing.assert_allclose(obs[slot]['jetbot']['position'], expected[slot]['jetbot']['position'], atol=1e-12)
    finally:
        env.close()
        plain.close()


def test_a_teleported_robot_reads_back_a_unit_quaternion_and_a_zero_one_is_refused():
    env = _env(None)
    try:
        env.reset()
        robot = env.runner.current_tasks[next(iter(env.runner.current_tasks))].robots['jetbot']
        robot.articulation.set_world_pose(orientation=np.array([3.0, 0.0, 0.0, 0.0]))
        np.testing.assert_allclose(robot.articulation.get_world_pose()[1], [1.0, 0.0, 0.0, 0.0], atol=1e-12)
        before = robot.articulation.get_world_pose()
        with pytest.raises(ValueError, match=r"'jetbot' in env 0: orientation must be a non-zero wxyz quaternion"):
            robot.articulation.set_world_pose(orientation=np.array([0.0, 0.0, 0.0, 0.0]))
        for bad in ([np.nan, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0]):
            with pytest.raises(ValueError, match=r"'jetbot' in env 0: orientation must be 4 finite numbers"):
                robot.articulation.set_world_pose(orientation=np.array(bad))
        after = robot.articulation.get_world_pose()  # (nothing written)
        np.testing.assert_array_equal(after[0], before[0])
        np.testing.assert_array_equal(after[1], before[1])
    finally:
        env.close()
