"""Commands applied between env steps through a slot's robot object (InternUtopia's per-slot API:
``env.runner.current_tasks[...].robots[name].articulation``), as a script or a task's hook gives them.

In InternUtopia (Isaac Sim) ``articulation.apply_action(...)``, the Franka's
``articulation.gripper.open()/close()`` and ``set_joint_efforts`` set drive targets and torques
that stay until something changes them. Here they do too: the joint reaches the target given
between steps and stays there with no further command, a later controller command replaces it,
a new episode forgets it, and other slots never notice. The exceptions are joints a robot's own
loop drives on its ticks (a walking policy's legs; every joint of G1), documented in
``docs/robots.md``. The Jetbot's wheels are ``tests/test_jetbot_wheels.py``'s.
"""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.robot.articulation_action import ArticulationAction
from internutopia.core.vec_env import Env
from internutopia.macros import gm
from internutopia_extension import import_extensions
from internutopia_extension.configs.robots import gr1, h1
from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg, joint_controller_cfg
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg
from internutopia_extension.robots.franka_model import FINGER_OPEN, HOME

import_extensions()

SCENE = gm.ASSET_PATH + '/scenes/empty.usd'
DT = 1 / 240
#: Steps of a second and of half of one.
SECOND, HALF = round(1 / DT), round(0.5 / DT)


def make_env(robot, env_num: int = 2, episodes: int = 4) -> Env:
    task = SingleInferenceTaskCfg(scene_asset_path=SCENE, scene_scale=(0.01, 0.01, 0.01), robots=[robot])
    env = Env(Config(simulator=SimConfig(physics_dt=DT), env_num=env_num, env_offset_size=4.0,
                     metrics_save_path='none', task_configs=[task] * episodes))
    env.reset()
    return env


def robot_of(env: Env, slot: int, name: str):
    """A slot's robot object, as a script reaches it (docs/compatibility.md)."""
    return env.runner.current_tasks[env.runner.env_id_to_task_name_map[slot]].robots[name]


def run(env: Env, steps: int, action: dict | None = None) -> list:
    obs = None
    for _ in range(steps):
        obs = env.step([action or {} for _ in range(env.env_num)])[0]
    return obs


# -- Franka: arm targets and the gripper ---------------------------------------------------------
@pytest.fixture(scope='module')
def franka_env():
    env = make_env(FrankaRobotCfg(controllers=[arm_ik_cfg, gripper_cfg, joint_controller_cfg]), episodes=16)
    yield env
    env.close()


def test_franka_arm_targets_applied_between_steps_are_reached_and_held(franka_env):
    env = franka_env
    env.reset()
    articulation = robot_of(env, 0, 'franka').articulation
    goal = np.array(HOME) + [0.5, -0.3, 0.0, 0.4, 0.0, 0.0, 0.0]
    articulation.apply_action(ArticulationAction(joint_positions=[*goal, None, None]))
    obs = run(env, SECOND)  # no command in any step: the targets stay in force
    np.testing.assert_allclose(articulation.get_joint_positions()[:7], goal, atol=0.01)
    np.testing.assert_allclose(obs[0]['franka']['joint_positions'][:7], goal, atol=0.01)
    np.testing.assert_allclose(obs[0]['franka']['joint_action'][:7], goal, atol=1e-9)
    np.testing.assert_allclose(obs[0]['franka']['joint_positions'][7:], FINGER_OPEN, atol=2e-3)  # (fingers: None, kept)
    np.testing.assert_allclose(obs[1]['franka']['joint_positions'][:7], HOME, atol=2e-3)  # the other slot never moved
    # One joint through a subset of indices, the others keep their targets.
    articulation.apply_action(ArticulationAction(joint_positions=[goal[2] + 0.3], joint_indices=[2]))
    obs = run(env, SECOND)
    np.testing.assert_allclose(obs[0]['franka']['joint_positions'][:7], goal + [0, 0, 0.3, 0, 0, 0, 0], atol=0.01)
    # A controller's command on a later step replaces them (and then stays, as before).
    replaced = np.array(HOME) + [-0.2, 0.2, 0.0, 0.0, 0.0, 0.0, 0.3]
    env.step([{'franka': {'joint_controller': [replaced]}}, {}])
    obs = run(env, SECOND)
    np.testing.assert_allclose(obs[0]['franka']['joint_positions'][:7], replaced, atol=0.01)


def test_franka_applied_action_reads_the_goals_so_a_read_change_apply_leaves_the_others_going(franka_env):
    """Isaac's drive targets are the goals: ``get_applied_action()`` while the arm is on its way
    reports them, not the rate-limited targets, so changing one joint and applying the action back
    does not stop the others mid-way (it froze them where they were)."""
    env = franka_env
    env.reset()
    articulation = robot_of(env, 0, 'franka').articulation
    goal = np.array(HOME) + [0.8, -0.4, 0.0, 0.6, 0.0, 0.0, 0.0]
    env.step([{'franka': {'joint_controller': [goal]}}, {}])
    run(env, 3)  # (on the way: the targets move at the joints' speed limits)
    assert np.abs(articulation.get_joint_positions()[:7] - goal).max() > 0.3
    applied = articulation.get_applied_action()
    np.testing.assert_allclose(applied.joint_positions[:7], goal, atol=1e-12)
    changed = list(applied.joint_positions)
    changed[2] += 0.3
    articulation.apply_action(ArticulationAction(joint_positions=changed))
    obs = run(env, 2 * SECOND)
    np.testing.assert_allclose(obs[0]['franka']['joint_positions'][:7], goal + [0, 0, 0.3, 0, 0, 0, 0], atol=0.01)


def test_a_repeated_ik_command_replaces_franka_arm_targets_applied_between_steps(franka_env):
    """A policy holding a pose sends the same IK target every step: after arm targets applied
    between steps, the next one solves it again and takes the tool back, as InternUtopia's IK does."""
    env = franka_env
    env.reset()
    target = [np.array([0.5, 0.0, 0.3]), np.array([0.0, 1.0, 0.0, 0.0])]  # (the tool pointing down)
    hold = {'franka': {'arm_ik_controller': target}}
    obs = run(env, SECOND, hold)
    assert obs[0]['franka']['controllers']['arm_ik_controller']['finished']
    articulation = robot_of(env, 0, 'franka').articulation
    moved = articulation.get_joint_positions()[:7] + [0.4, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    articulation.apply_action(ArticulationAction(joint_positions=[*moved, None, None]))
    left = run(env, HALF)[0]['franka']['controllers']['arm_ik_controller']  # (no command: the arm leaves)
    assert not left['finished'] and np.linalg.norm(left['eef_position'] - target[0]) > 0.05
    obs = run(env, SECOND, hold)
    ik = obs[0]['franka']['controllers']['arm_ik_controller']
    assert ik['finished'] and np.linalg.norm(ik['eef_position'] - target[0]) < 0.01
    assert obs[1]['franka']['controllers']['arm_ik_controller']['finished']  # (the other slot held its pose throughout)


def test_an_ik_command_repeated_after_a_joint_command_is_solved_again(franka_env):
    """The IK skips a command that repeats its last one only while its solution is still the
    goals in force: after a joint_controller command moved the arm, the same IK target takes the
    tool back (it used to do nothing: the arm stayed at the joint goals)."""
    env = franka_env
    env.reset()
    target = [np.array([0.5, 0.0, 0.3]), np.array([0.0, 1.0, 0.0, 0.0])]
    hold = {'franka': {'arm_ik_controller': target}}
    obs = run(env, SECOND, hold)
    joints = obs[0]['franka']['joint_positions'][:7] + [0.0, 0.3, 0.0, 0.0, 0.0, 0.0, 0.0]
    away = run(env, SECOND, {'franka': {'joint_controller': [joints]}})[0]['franka']['controllers']['arm_ik_controller']
    assert not away['finished'] and np.linalg.norm(away['eef_position'] - target[0]) > 0.05
    back = run(env, SECOND, hold)[0]['franka']['controllers']['arm_ik_controller']
    assert back['finished'] and np.linalg.norm(back['eef_position'] - target[0]) < 0.01


def test_the_franka_gripper_opens_and_closes_between_steps(franka_env):
    env = franka_env
    env.reset()
    gripper = robot_of(env, 0, 'franka').articulation.gripper
    gripper.close()
    obs = run(env, SECOND)  # (0.05 m/s per finger: 0.8 s to close)
    assert np.all(gripper.get_joint_positions() < 2e-3)
    assert np.all(obs[0]['franka']['joint_positions'][7:] < 2e-3)
    assert not env.get_observations()[0]['franka']['controllers']['gripper_controller']['gripper_pos'].sum() > 4e-3
    np.testing.assert_allclose(obs[1]['franka']['joint_positions'][7:], FINGER_OPEN, atol=1e-3)  # the other hand: open
    gripper.open()
    run(env, SECOND)
    np.testing.assert_allclose(gripper.get_joint_positions(), FINGER_OPEN, atol=2e-3)
    # apply_action(forward(...)) is the same; the gripper controller's command replaces it.
    gripper.articulation.apply_action(gripper.forward('close'))
    run(env, SECOND)
    assert np.all(gripper.get_joint_positions() < 2e-3)
    env.step([{'franka': {'gripper_controller': ['open']}}, {}])
    run(env, SECOND)
    np.testing.assert_allclose(gripper.get_joint_positions(), FINGER_OPEN, atol=2e-3)


def test_a_new_franka_episode_forgets_targets_applied_between_steps(franka_env):
    env = franka_env
    env.reset()
    goal = np.array(HOME) + [0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    for slot in (0, 1):
        articulation = robot_of(env, slot, 'franka').articulation
        articulation.apply_action(ArticulationAction(joint_positions=[*goal, 0.0, 0.0]))  # arm and a closed hand
    run(env, 24)
    env.reset([0])
    obs = run(env, SECOND)
    np.testing.assert_allclose(obs[0]['franka']['joint_positions'][:7], HOME, atol=2e-3)  # the new episode: home, open
    np.testing.assert_allclose(obs[0]['franka']['joint_positions'][7:], FINGER_OPEN, atol=2e-3)
    np.testing.assert_allclose(obs[1]['franka']['joint_positions'][:7], goal, atol=0.01)  # the other slot's episode goes on
    assert np.all(obs[1]['franka']['joint_positions'][7:] < 2e-3)


# -- humanoids: arms, hands, torques ---------------------------------------------------------------
def test_carried_h1_arm_targets_and_torques_applied_between_steps_hold_until_a_new_episode():
    with make_env(h1.H1RobotCfg(position=(0.0, 0.0, 1.05), locomotion='carried', controllers=[h1.move_by_speed_cfg])) as env:
        articulation = robot_of(env, 0, 'h1').articulation
        arm = [articulation.get_dof_index(name) for name in ('left_shoulder_pitch_joint', 'left_elbow_joint')]
        elbow = articulation.get_dof_index('right_elbow_joint')
        articulation.apply_action(ArticulationAction(joint_positions=[-0.4, 0.6], joint_indices=arm))
        efforts = np.zeros(articulation.num_dof)
        efforts[elbow] = 8.0  # (against the elbow servo's kp = 40 N m/rad: about 0.2 rad)
        articulation.set_joint_efforts(efforts)
        run(env, SECOND, {'h1': {'move_by_speed': [0.2, 0.0, 0.0]}})  # a base command leaves the arms alone
        np.testing.assert_allclose(articulation.get_joint_positions(arm), [-0.4, 0.6], atol=0.02)
        assert 0.15 < articulation.get_joint_positions([elbow])[0] < 0.25
        assert articulation.get_applied_action().joint_efforts[elbow] == 8.0
        other = robot_of(env, 1, 'h1').articulation
        np.testing.assert_allclose(other.get_joint_positions(arm + [elbow]), 0.0, atol=0.01)
        env.reset([0])
        run(env, HALF)
        articulation = robot_of(env, 0, 'h1').articulation
        np.testing.assert_allclose(articulation.get_joint_positions(arm + [elbow]), 0.0, atol=0.01)
        assert not np.any(articulation.get_applied_action().joint_efforts)


def test_walking_h1_arm_targets_applied_between_steps_hold_while_it_walks():
    """The walker drives the legs on its ticks (a leg target given between steps lasts until the
    next one); the arms are the user's."""
    with make_env(h1.H1RobotCfg(position=(0.0, 0.0, 1.05), controllers=[h1.move_by_speed_cfg]), episodes=2) as env:
        articulation = robot_of(env, 0, 'h1').articulation
        arm = [articulation.get_dof_index(name) for name in ('right_shoulder_pitch_joint', 'right_elbow_joint')]
        articulation.apply_action(ArticulationAction(joint_positions=[-0.4, 0.6], joint_indices=arm))
        obs = run(env, SECOND, {'h1': {'move_by_speed': [0.3, 0.0, 0.0]}})
        np.testing.assert_allclose(articulation.get_joint_positions(arm), [-0.4, 0.6], atol=0.05)
        assert obs[0]['h1']['position'][0] > 0.05 and obs[0]['h1']['position'][2] > 0.9  # walking, upright


def test_carried_gr1_arm_and_finger_targets_applied_between_steps_hold():
    with make_env(gr1.GR1RobotCfg(position=(0.0, 0.0, 0.95), locomotion='carried', controllers=[gr1.move_by_speed_cfg]),
                  episodes=2) as env:
        articulation = robot_of(env, 0, 'gr1').articulation
        joints = [articulation.get_dof_index(name) for name in ('left_shoulder_pitch_joint', 'L_index_proximal_joint')]
        articulation.apply_action(ArticulationAction(joint_positions=[-0.4, 0.8], joint_indices=joints))
        run(env, SECOND)
        np.testing.assert_allclose(articulation.get_joint_positions(joints), [-0.4, 0.8], atol=0.02)
        np.testing.assert_allclose(robot_of(env, 1, 'gr1').articulation.get_joint_positions(joints), 0.0, atol=0.01)
