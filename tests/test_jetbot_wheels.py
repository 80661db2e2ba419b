"""The Jetbot's wheeled-robot API (InternUtopia's ``WheeledRobot``, Isaac Sim's), through a real env.

A slot's Jetbot (``env.runner.current_tasks[...].robots['jetbot']``, or ``self`` of an
upstream-style subclass) has an ``articulation`` with ``wheel_dof_indices``,
``get/set_wheel_positions``, ``get/set_wheel_velocities``, ``apply_wheel_actions`` and
``get_articulation_controller_properties`` (:mod:`internutopia.per_slot.wheeled`). Wheel targets
applied between env steps drive the robot and hold until a later command replaces them, as Isaac
Sim's drive targets do; a step's own command (a controller's, an upstream-style robot's
``apply_action``) lasts its step, and a step with no command stops the wheels, as before.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.robot.articulation_action import ArticulationAction
from internutopia.core.robot.robot import BaseRobot
from internutopia.core.util.math import quat_to_yaw
from internutopia.core.vec_env import Env
from internutopia.per_slot.wheeled import WheeledArticulation
from internutopia_extension import import_extensions
from internutopia_extension.configs.controllers import DifferentialDriveControllerCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.robots.jetbot import JetbotRobot

import_extensions()

WHEELS = ['left_wheel_joint', 'right_wheel_joint']
MOVE = DifferentialDriveControllerCfg(name='move_by_speed', wheel_base=0.1125, wheel_radius=0.03)
RADIUS, BASE = 0.03, 0.1125
#: Physics step (at 1/60 s a stopped Jetbot's wheel servo chatters, about 0.6 rad/s either way).
DT = 1 / 240
#: Steps of a second, a tenth of one.
SECOND, TENTH = round(1 / DT), round(0.1 / DT)


def make_env(env_num: int, robot: JetbotRobotCfg | None = None, episodes: int | None = None, **sim) -> Env:
    robot = robot or JetbotRobotCfg(controllers=[MOVE])
    tasks = [FiniteStepTaskCfg(max_steps=10_000, robots=[robot])] * (episodes or env_num)
    return Env(Config(simulator=SimConfig(physics_dt=DT, rendering_dt=DT, **sim), env_num=env_num, env_offset_size=4,
                      metrics_save_path='none', task_configs=tasks))


def robot_of(env: Env, slot: int, name: str = 'jetbot'):
    return env.runner.current_tasks[env.runner.env_id_to_task_name_map[slot]].robots[name]


def yaw(obs: dict, name: str = 'jetbot') -> float:
    return float(quat_to_yaw(np.array([obs[name]['orientation']]))[0])


def run(env: Env, steps: int, action=None):
    obs = None
    for _ in range(steps):
        obs = env.step([action or {} for _ in range(env.env_num)])[0]
    return obs


def wheel_state(env: Env, slot: int, name: str = 'jetbot') -> tuple[np.ndarray, np.ndarray]:
    """The wheel joints' qpos and qvel of ``slot``, read from the simulation's state."""
    group = env.runner.view.robots(slot)[name]
    data = group.bound_world.data
    return data.qpos[slot, group.joint_qposadr[slot]].copy(), data.qvel[slot, group.joint_dofadr[slot]].copy()


def test_a_slots_jetbot_articulation_has_upstreams_wheeled_robot_api():
    with make_env(2, JetbotRobotCfg(controllers=[MOVE], scale=(2.0, 2.0, 2.0), position=(0.3, -0.2, 0.0))) as env:
        env.reset()
        run(env, TENTH, {'jetbot': {'move_by_speed': [0.2, 0.5]}})
        for slot in range(2):
            robot = robot_of(env, slot)
            articulation = robot.articulation
            assert isinstance(articulation, WheeledArticulation) and articulation.slot == slot
            assert articulation.wheel_dof_indices == [0, 1] and articulation.dof_names == WHEELS
            assert articulation.get_articulation_controller_properties() == (WHEELS, [0, 1])
            assert articulation._num_wheel_dof == 2  # (upstream's attribute, which its subclasses read)
            positions, velocities = articulation.get_wheel_positions(), articulation.get_wheel_velocities()
            assert isinstance(positions, list) and isinstance(velocities, list) and len(positions) == len(velocities) == 2
            qpos, qvel = wheel_state(env, slot)
            assert positions == qpos.tolist() and velocities == qvel.tolist()  # the joints' state itself
            assert velocities[1] > velocities[0] > 0  # (turning left while driving forward)
            articulation.initialize()  # (Isaac's calls: accepted, nothing changes)
            articulation.post_reset()
            assert articulation.wheel_dof_indices == [0, 1]
            # the robot's upstream methods beside it
            np.testing.assert_array_equal(robot.get_robot_scale(), [2.0, 2.0, 2.0])
            obs = env.get_observations()[slot]['jetbot']
            position, orientation = robot.get_pose()
            np.testing.assert_allclose(position, obs['position'], atol=1e-12)
            np.testing.assert_allclose(orientation, obs['orientation'], atol=1e-12)
            assert np.linalg.norm(position[:2] - [0.3, -0.2]) < 0.05  # env-local, as upstream's get_pose


def test_wheel_actions_between_steps_drive_each_slots_jetbot_on_its_own_and_hold():
    with make_env(3) as env:
        obs, _ = env.reset()
        start = [o['jetbot']['position'].copy() for o in obs]
        robot_of(env, 0).articulation.apply_wheel_actions(ArticulationAction(joint_velocities=[10.0, 10.0]))
        robot_of(env, 1).articulation.apply_wheel_actions(ArticulationAction(joint_velocities=np.array([-5.0, 5.0])))
        obs = run(env, SECOND)  # 1 s of steps with no command: the applied targets hold, as Isaac's drive targets
        # slot 0: straight ahead at about 10 rad/s * 3 cm
        moved = obs[0]['jetbot']['position'] - start[0]
        assert 0.25 < moved[0] < 0.31 and abs(moved[1]) < 0.005 and abs(yaw(obs[0])) < 0.02
        # slot 1: turns in place to the left at about 2 * 5 rad/s * 3 cm / 11.25 cm = 2.7 rad/s
        spun = obs[1]['jetbot']['position'] - start[1]
        turned = (yaw(obs[1]) - yaw({'jetbot': {'orientation': np.array([1.0, 0, 0, 0])}})) % (2 * np.pi)
        assert np.linalg.norm(spun[:2]) < 0.01 and 2.2 < turned < 2.8, (spun, turned)
        # slot 2: untouched
        assert np.linalg.norm(obs[2]['jetbot']['position'][:2] - start[2][:2]) < 1e-3  # (settling on its wheels only)
        # the getters are the wheels' real state, in every slot
        for slot, expected in ((0, [10.0, 10.0]), (1, [-5.0, 5.0]), (2, [0.0, 0.0])):
            articulation = robot_of(env, slot).articulation
            qpos, qvel = wheel_state(env, slot)
            assert articulation.get_wheel_positions() == qpos.tolist()
            assert articulation.get_wheel_velocities() == qvel.tolist() == obs[slot]['jetbot']['joint_velocities'].tolist()
            np.testing.assert_allclose(articulation.get_wheel_velocities(), expected, rtol=0.03, atol=0.05)
        # the wheels rolled (angle * radius) the distance driven: the angles are the wheels' own
        rolled = np.array(robot_of(env, 0).articulation.get_wheel_positions()) * RADIUS
        np.testing.assert_allclose(rolled, moved[0], rtol=0.03)


def test_wheel_actions_drive_the_jetbot_to_a_position_and_stop_there():
    with make_env(1) as env:
        env.reset()
        articulation = robot_of(env, 0).articulation
        articulation.apply_wheel_actions(ArticulationAction(joint_velocities=[10.0, 10.0]))
        steps, x = 0, 0.0
        while x < 0.5 and steps < 3 * SECOND:
            x = run(env, 1)[0]['jetbot']['position'][0]
            steps += 1
        assert x >= 0.5 and steps < 2 * SECOND  # (about 0.3 m/s)
        articulation.apply_wheel_actions(ArticulationAction(joint_velocities=[0.0, 0.0]))
        obs = run(env, SECOND // 2)
        here = obs[0]['jetbot']['position']
        assert 0.5 <= here[0] < 0.53 and abs(here[1]) < 0.01  # (braking from 0.3 m/s takes a couple of centimetres)
        assert np.all(np.abs(articulation.get_wheel_velocities()) < 1e-3)
        assert run(env, SECOND // 2)[0]['jetbot']['position'][0] == pytest.approx(here[0], abs=1e-4)  # and stays


def test_a_steps_command_replaces_held_wheel_targets_and_a_step_without_one_stops_the_wheels():
    with make_env(2) as env:
        env.reset()
        articulation = robot_of(env, 0).articulation
        articulation.apply_wheel_actions(ArticulationAction(joint_velocities=[10.0, 10.0]))
        run(env, SECOND // 2)
        np.testing.assert_allclose(articulation.get_wheel_velocities(), [10.0, 10.0], rtol=0.03)
        # a controller's command replaces them (turning in place) ...
        obs = run(env, SECOND // 2, {'jetbot': {'move_by_speed': [0.0, 1.0]}})
        speed = 1.0 * BASE / 2 / RADIUS
        np.testing.assert_allclose(articulation.get_wheel_velocities(), [-speed, speed], rtol=0.05)
        # ... and a step with no command stops them: the held targets are gone
        before = obs[0]['jetbot']['position'].copy()
        run(env, SECOND // 2)
        assert np.all(np.abs(articulation.get_wheel_velocities()) < 1e-3)
        obs = run(env, SECOND // 2)
        assert np.linalg.norm(obs[0]['jetbot']['position'][:2] - before[:2]) < 0.02
        assert np.linalg.norm(obs[1]['jetbot']['position'][:2]) < 1e-3  # (the other slot never moved)


def test_a_new_episode_forgets_the_held_wheel_targets():
    with make_env(2, episodes=3) as env:
        obs, _ = env.reset()
        start = obs[0]['jetbot']['position'].copy()
        robot_of(env, 0).articulation.apply_wheel_actions(ArticulationAction(joint_velocities=[10.0, 10.0]))
        robot_of(env, 1).articulation.apply_wheel_actions(ArticulationAction(joint_velocities=[10.0, 10.0]))
        run(env, TENTH)
        env.reset([0])
        obs = run(env, SECOND // 2)
        assert np.linalg.norm(obs[0]['jetbot']['position'][:2] - start[:2]) < 1e-3  # the new episode stands
        assert obs[1]['jetbot']['position'][0] > 0.1  # the other slot's episode drives on


def test_wheel_targets_in_an_action_repeat_give_the_step_by_step_motion():
    """A held wheel target and a controller command replacing it, stepped with an action repeat:
    the repeat's fused physics calls move the robots as stepping one physics step at a time does."""
    positions = []
    for fuse in (True, False):
        with make_env(2) as env:
            env.reset()
            env.runner.fuse_steps = fuse
            robot_of(env, 0).articulation.apply_wheel_actions(ArticulationAction(joint_velocities=[10.0, 10.0]))
            turn = {'jetbot': {'move_by_speed': np.array([[0.0, 1.0], [0.0, 1.0]])}}
            for k in range(10):
                done = env.runner.step_arrays_repeated(turn if k == 5 else {}, repeat=12)
            positions.append(np.array(done.obs['jetbot']['position']))
    np.testing.assert_array_equal(positions[0], positions[1])
    assert positions[0][0, 0] > 0.05  # (slot 0 drove on its held targets before the turn replaced them)


def test_set_wheel_state_is_the_joints_state_not_their_targets():
    with make_env(2) as env:
        obs, _ = env.reset()
        start = obs[0]['jetbot']['position'].copy()
        articulation = robot_of(env, 0).articulation
        articulation.set_wheel_positions([1.25, -0.5])
        articulation.set_wheel_velocities(np.array([20.0, 20.0]))
        assert articulation.get_wheel_positions() == [1.25, -0.5]
        assert articulation.get_wheel_velocities() == [20.0, 20.0]
        now = env.get_observations()
        assert now[0]['jetbot']['joint_positions'].tolist() == [1.25, -0.5]  # the observation reads them again
        assert now[0]['jetbot']['joint_velocities'].tolist() == [20.0, 20.0]
        assert now[1]['jetbot']['joint_velocities'].tolist() == [0.0, 0.0]  # the other slot's are its own
        assert robot_of(env, 0).articulation.get_applied_action().joint_velocities == [0.0, 0.0]  # no target set
        obs = run(env, SECOND)
        # the spinning wheels pushed the robot ahead, and the stopped wheel servos braked them
        assert 0.01 < obs[0]['jetbot']['position'][0] - start[0] < 0.1
        assert np.all(np.abs(articulation.get_wheel_velocities()) < 1e-3)


def test_wheel_efforts_and_kept_targets():
    with make_env(1) as env:
        env.reset()
        articulation = robot_of(env, 0).articulation
        articulation.apply_wheel_actions(ArticulationAction(joint_velocities=[5.0, 6.0]))
        articulation.apply_wheel_actions(ArticulationAction(joint_velocities=[None, 7.0]))  # None: keep that wheel's
        assert articulation.get_applied_action().joint_velocities == [5.0, 7.0]
        articulation.apply_wheel_actions(ArticulationAction(joint_velocities=np.array([np.nan, np.nan])))  # NaN: keep
        assert articulation.get_applied_action().joint_velocities == [5.0, 7.0]
        # entry i is wheel i: the action's joint_indices is ignored, as Isaac's WheeledRobot ignores it
        articulation.apply_wheel_actions(ArticulationAction(joint_velocities=[1.0, 2.0], joint_indices=[1, 0]))
        assert articulation.get_applied_action().joint_velocities == [1.0, 2.0]
        articulation.apply_wheel_actions(ArticulationAction(joint_velocities=[0.0, 0.0]))
        articulation.apply_wheel_actions(ArticulationAction(joint_efforts=[0.02, 0.02]))  # a torque on each wheel
        assert articulation.get_applied_action().joint_efforts == [0.02, 0.02]
        run(env, SECOND // 2)
        # (the stopped wheel servo, kv 0.1 N m s/rad, and the joint damping, 0.001, hold 0.02 N m at 0.02 / 0.101 rad/s)
        np.testing.assert_allclose(articulation.get_wheel_velocities(), 0.02 / 0.101, rtol=0.02)
        articulation.apply_wheel_actions(ArticulationAction(joint_efforts=[0.0, 0.0]))
        run(env, SECOND // 2)
        assert np.all(np.abs(articulation.get_wheel_velocities()) < 1e-3)


def test_bad_wheel_input_is_an_error_naming_the_wheels_and_changes_nothing():
    with make_env(2) as env:
        env.reset()
        run(env, 2)
        articulation = robot_of(env, 1).articulation
        articulation.apply_wheel_actions(ArticulationAction(joint_velocities=[3.0, 4.0]))
        state = wheel_state(env, 1)
        names = r"\['left_wheel_joint', 'right_wheel_joint'\]"
        for call, values, message in (
                ('set_wheel_velocities', [1.0], rf"set_wheel_velocities for robot 'jetbot' in env 1 takes 2 values, one per "
                                                rf"wheel {names}; got 1 values"),
                ('set_wheel_velocities', [1.0, 2.0, 3.0], rf"takes 2 values, one per wheel {names}; got 3 values"),
                ('set_wheel_positions', 0.5, rf"set_wheel_positions for robot 'jetbot' in env 1 takes 2 values, one per "
                                             rf"wheel {names}; got no sequence"),
                ('set_wheel_positions', [np.nan, 0.0], rf"takes finite numbers, one per wheel {names}; got "
                                                       r"'left_wheel_joint': nan"),
                ('set_wheel_velocities', [1.0, np.inf], r"got 'right_wheel_joint': inf"),
                ('set_wheel_velocities', [None, 1.0], r"got 'left_wheel_joint': nan"),
                ('set_wheel_velocities', ['fast', 1.0], rf"takes numbers, one per wheel {names}")):
            with pytest.raises(ValueError, match=message):
                getattr(articulation, call)(values)
        for action, message in (
                (ArticulationAction(joint_velocities=[1.0, 2.0, 3.0]),
                 rf"apply_wheel_actions for robot 'jetbot' in env 1: joint_velocities has 3 entries for the 2 wheels {names}"),
                (ArticulationAction(joint_velocities=[1.0, 2.0], joint_efforts=[0.1]),
                 rf"joint_efforts has 1 entries for the 2 wheels {names}"),
                (ArticulationAction(joint_velocities=5.0), rf"joint_velocities is not a sequence \(5.0\) for the 2 wheels {names}"),
                (ArticulationAction(joint_velocities=[np.inf, 1.0]), r"joint 'left_wheel_joint' has target inf"),
                (ArticulationAction(joint_velocities=[1.0, 2.0], joint_efforts=[0.0, -np.inf]),
                 r"joint 'right_wheel_joint' has target -inf"),
                (ArticulationAction(joint_positions=[0.1, 0.1]), r"joint 'left_wheel_joint' of robot 'jetbot' has no position servo"),
                ([1.0, 2.0], r"apply_wheel_actions for robot 'jetbot' in env 1 takes an ArticulationAction; got list"),
                (None, r"takes an ArticulationAction; got None")):
            with pytest.raises(ValueError, match=message):
                articulation.apply_wheel_actions(action)
        # nothing was written: the state, the targets and the torques are as they were
        after = wheel_state(env, 1)
        np.testing.assert_array_equal(after[0], state[0])
        np.testing.assert_array_equal(after[1], state[1])
        applied = articulation.get_applied_action()
        assert applied.joint_velocities == [3.0, 4.0] and applied.joint_efforts == [0.0, 0.0]


class WheelDrivenJetbotCfg(JetbotRobotCfg):
    name: str = 'rover'
    type: str = 'WheelDrivenJetbot'


@BaseRobot.register('WheelDrivenJetbot')
class WheelDrivenJetbot(JetbotRobot):
    """Written InternUtopia's way: its action is the wheels' velocity targets."""

    def __init__(self, config, scene):
        super().__init__(config, scene)
        assert isinstance(self.articulation, WheeledArticulation)

    def apply_action(self, action):
        self.articulation.apply_wheel_actions(ArticulationAction(joint_velocities=action))


def test_an_upstream_style_jetbot_applies_its_wheel_actions_each_step():
    with make_env(2, WheelDrivenJetbotCfg()) as env:
        obs, _ = env.reset()
        start = obs[0]['rover']['position'].copy()
        for _ in range(SECOND // 2):
            obs = env.step([{'rover': [8.0, 8.0]}, {'rover': [-4.0, 4.0]}])[0]
        assert obs[0]['rover']['position'][0] - start[0] > 0.08
        assert robot_of(env, 1, 'rover').articulation.get_wheel_velocities()[1] > 3.5
        # an action in a step is that step's command: a step without one stops the wheels (as a controller's)
        run(env, SECOND // 2)
        for slot in range(2):
            assert np.all(np.abs(robot_of(env, slot, 'rover').articulation.get_wheel_velocities()) < 1e-3)


def _drive_with_the_controller(read_wheels: bool) -> list[np.ndarray]:
    with make_env(2) as env:
        env.reset()
        seen = []
        for step in range(2 * SECOND):
            action = {'jetbot': {'move_by_speed': [0.3, 0.5]}} if step < SECOND else {}
            obs = env.step([action, {}])[0]
            if read_wheels:  # reading the wheel API changes nothing
                for slot in range(2):
                    articulation = robot_of(env, slot).articulation
                    articulation.get_wheel_positions(), articulation.get_wheel_velocities()
            seen.append(np.concatenate([obs[0]['jetbot']['position'], obs[0]['jetbot']['joint_velocities']]))
        return seen


def test_the_controller_path_is_unchanged_where_no_wheel_action_is_applied():
    plain, read = _drive_with_the_controller(False), _drive_with_the_controller(True)
    np.testing.assert_array_equal(np.array(plain), np.array(read))
    driving, stopped = plain[SECOND - 1], plain[-1]
    speed = np.array([0.3 - 0.5 * BASE / 2, 0.3 + 0.5 * BASE / 2]) / RADIUS
    np.testing.assert_allclose(driving[3:], speed, rtol=0.03)  # move_by_speed's wheel speeds
    assert np.linalg.norm(driving[:2]) > 0.2
    assert np.all(np.abs(stopped[3:]) < 1e-3)  # a step with no command stops the wheels
    assert np.linalg.norm(plain[-1][:2] - plain[-TENTH][:2]) < 1e-5


def _held_then_replaced(**sim) -> list[np.ndarray]:
    """Slot 0 driven by held wheel targets, then turned by move_by_speed, then stopped; slot 1 idle."""
    with make_env(2, **sim) as env:
        env.reset()
        robot_of(env, 0).articulation.apply_wheel_actions(ArticulationAction(joint_velocities=[10.0, 10.0]))
        seen = [run(env, SECOND // 2)[0]['jetbot']['position'].copy()]
        seen.append(run(env, SECOND // 4, {'jetbot': {'move_by_speed': [0.0, 1.0]}})[0]['jetbot']['position'].copy())
        run(env, SECOND // 4)
        seen.append(np.array(robot_of(env, 0).articulation.get_wheel_velocities()))
        return seen


@pytest.mark.slow
def test_held_wheel_targets_on_the_warp_backend():
    """The Warp backend moves the ``ctrl`` the group holds to the device before each step: held wheel
    targets drive there as on MuJoCo (Warp's CPU device here; ``INTERNUTOPIA_TEST_WARP_DEVICE=cuda:0``
    on a GPU), a command replaces them and a step without one stops the wheels."""
    pytest.importorskip('mujoco_warp', reason="the warp extra is not installed (pip install 'internutopia[warp]')")
    device = os.environ.get('INTERNUTOPIA_TEST_WARP_DEVICE', 'cpu')
    warp, mujoco = _held_then_replaced(backend='warp', device=device), _held_then_replaced()
    assert warp[0][0] > 0.1  # it drove on the held targets
    for got, expected in zip(warp, mujoco, strict=True):
        np.testing.assert_allclose(got, expected, atol=1e-3)
    assert np.all(np.abs(warp[2]) < 1e-3)
