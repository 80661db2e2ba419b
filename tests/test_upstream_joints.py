"""Joint names and order are InternUtopia's for every robot it ships (H1, G1, Jetbot, Franka).

InternUtopia's robots come from Isaac Sim, which numbers an articulation's joints level by level
down the body tree; the MJCF files here list them depth first and, for H1, without the ``_joint``
suffix. A ``joint_controller`` vector and ``joint_positions`` follow InternUtopia's order.
"""

from __future__ import annotations

import mujoco
import numpy as np

from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia_extension.configs.controllers import JointControllerCfg
from internutopia_extension.configs.robots import h1 as h1_configs
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.robots.assets import breadth_first_joints, suffix_joint_names

#: InternUtopia 2.2.1's H1 ``joint_controller`` joint list (its ``configs/robots/h1.py``).
UPSTREAM_H1 = [f'{name}_joint' for name in (
    'left_hip_yaw', 'right_hip_yaw', 'torso', 'left_hip_roll', 'right_hip_roll', 'left_shoulder_pitch',
    'right_shoulder_pitch', 'left_hip_pitch', 'right_hip_pitch', 'left_shoulder_roll', 'right_shoulder_roll',
    'left_knee', 'right_knee', 'left_shoulder_yaw', 'right_shoulder_yaw', 'left_ankle', 'right_ankle',
    'left_elbow', 'right_elbow')]

#: InternUtopia 2.2.1's G1 ``move_by_speed`` joint list (its 29-dof G1 without the two locked waist joints).
UPSTREAM_G1_POLICY = [f'{name}_joint' for name in (
    'left_hip_pitch', 'right_hip_pitch', 'waist_yaw', 'left_hip_roll', 'right_hip_roll', 'left_hip_yaw',
    'right_hip_yaw', 'left_knee', 'right_knee', 'left_shoulder_pitch', 'right_shoulder_pitch',
    'left_ankle_pitch', 'right_ankle_pitch', 'left_shoulder_roll', 'right_shoulder_roll', 'left_ankle_roll',
    'right_ankle_roll', 'left_shoulder_yaw', 'right_shoulder_yaw', 'left_elbow', 'right_elbow',
    'left_wrist_roll', 'right_wrist_roll', 'left_wrist_pitch', 'right_wrist_pitch', 'left_wrist_yaw',
    'right_wrist_yaw')]


def one_robot(robot, steps=1000):
    task = FiniteStepTaskCfg(max_steps=steps, robots=[robot])
    return Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, env_offset_size=10, task_configs=[task])


def test_breadth_first_order_of_a_small_tree():
    spec = mujoco.MjSpec.from_string("""<mujoco><worldbody><body name='base'><freejoint/><geom size='.1'/>
      <body name='a'><joint name='a1'/><geom size='.1'/><body name='aa'><joint name='a2'/><geom size='.1'/></body></body>
      <body name='b'><joint name='b1'/><geom size='.1'/></body></body></worldbody>
      <actuator><position name='a2' joint='a2'/><position name='kick' joint='b1'/></actuator></mujoco>""")
    assert breadth_first_joints(spec) == ['a1', 'b1', 'a2']  # depth first (the file's order) is a1, a2, b1
    suffix_joint_names(spec, '_joint')
    assert breadth_first_joints(spec) == ['a1_joint', 'b1_joint', 'a2_joint']
    # An actuator named after its joint is renamed with it; one with a name of its own keeps it.
    assert [(a.name, a.target) for a in spec.actuators] == [('a2_joint', 'a2_joint'), ('kick', 'b1_joint')]
    spec.compile()


def test_h1_joint_names_and_order_are_internutopias():
    assert h1_configs.H1_JOINT_NAMES == UPSTREAM_H1
    from internutopia_extension.robots.h1 import H1Robot

    robot = H1Robot(h1_configs.H1RobotCfg(), 1, SimConfig())
    assert breadth_first_joints(robot.build_spec()) == UPSTREAM_H1


def test_an_h1_joint_vector_in_internutopias_order_moves_the_joint_it_names():
    # Carried: its pelvis is held, so one bent knee does not topple it (a walking H1's policy owns its legs).
    h1 = h1_configs.H1RobotCfg(locomotion='carried', position=(0.0, 0.0, 1.05), controllers=[h1_configs.joint_controller])
    knee = UPSTREAM_H1.index('left_knee_joint')
    assert knee == 11  # index 11 is the left knee in InternUtopia (it was the left shoulder in Menagerie's order)
    with Env(one_robot(h1)) as env:
        obs, _ = env.reset()
        standing = np.array(obs[0]['h1']['joint_positions'])
        target = standing.copy()
        target[knee] = 1.0
        for _ in range(120):
            obs, *_ = env.step([{'h1': {'joint_controller': [target]}}])
        q = np.array(obs[0]['h1']['joint_positions'])
        assert abs(q[knee] - 1.0) < 0.1
        others = np.delete(np.arange(len(q)), knee)
        assert np.max(np.abs(q[others] - standing[others])) < 0.15
        # The state itself: the MuJoCo joint named left_knee_joint is the one that bent.
        world = env.runner.world
        pack = world.pack(0)
        address = int(pack.lookup.joints(['h1/left_knee_joint']).qposadr[0])
        assert abs(pack.data.qpos[0, address] - 1.0) < 0.1


def test_h1_joint_controller_with_a_subset_of_joints_in_any_order():
    arms = JointControllerCfg(name='arms', joint_names=['right_elbow_joint', 'left_elbow_joint'])
    h1 = h1_configs.H1RobotCfg(position=(0.0, 0.0, 1.05), controllers=[arms])
    with Env(one_robot(h1)) as env:
        env.reset()
        for _ in range(120):
            obs, *_ = env.step([{'h1': {'arms': [[0.8, -0.2]]}}])
        q = np.array(obs[0]['h1']['joint_positions'])
        assert abs(q[UPSTREAM_H1.index('right_elbow_joint')] - 0.8) < 0.1
        assert abs(q[UPSTREAM_H1.index('left_elbow_joint')] + 0.2) < 0.1


def test_g1_joint_names_and_order_are_internutopias():
    from internutopia_extension.configs.robots.g1 import G1RobotCfg, move_by_speed_cfg

    with Env(one_robot(G1RobotCfg(controllers=[move_by_speed_cfg]))) as env:
        obs, _ = env.reset()
        (robot,) = (group for group in env.runner.robot_groups.values() if group.name == 'g1')
        names = list(robot.joint_names)
        obs, *_ = env.step([{'g1': {'move_by_speed': [0.0, 0.0, 0.0]}}])
    assert len(names) == 29
    # Upstream's list is the articulation's order less the two waist joints its G1 locks.
    assert [n for n in names if n not in ('waist_roll_joint', 'waist_pitch_joint')] == UPSTREAM_G1_POLICY
    assert len(obs[0]['g1']['joint_positions']) == 29


def test_jetbot_joint_names_are_internutopias():
    from internutopia_extension.robots.jetbot import JetbotRobot

    assert JetbotRobot.joint_names == ['left_wheel_joint', 'right_wheel_joint']
