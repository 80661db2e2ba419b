"""Upstream-style subclasses of built-in sensors and controllers keep the built-in's behaviour.

InternUtopia extensions subclass the built-ins they extend: a camera post-processing
``super().get_data()`` (``class GrayCam(RepCamera)``), a discrete controller calling
``self.forward(...)`` of the differential drive, a controller wrapping ``super().action_to_control``.
The built-in runs behind the per-slot class for the robot's slots, and what the subclass does not
override is the built-in's, slot by slot. Also here: a per-slot sensor that fails at an episode's
start is built anew for the retry, and a failure is reported with its own error.
"""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.config import Config
from internutopia.core.config.robot import SensorCfg
from internutopia.core.robot.controller import BaseController
from internutopia.core.sensor.camera import ICamera
from internutopia.core.sensor.sensor import BaseSensor
from internutopia.core.vec_env import Env
from internutopia_extension import import_extensions
from internutopia_extension.configs.controllers import DifferentialDriveControllerCfg, MoveToPointBySpeedControllerCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, move_by_speed_cfg
from internutopia_extension.configs.sensors import RepCameraCfg
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg
from internutopia_extension.controllers.dd_controller import DifferentialDriveController
from internutopia_extension.controllers.move_to_point_by_speed_controller import MoveToPointBySpeedController
from internutopia_extension.sensors.rep_camera import RepCamera

import_extensions()

CAMERA_PATH = 'chassis/rgb_camera/jetbot_camera'


# -- sensors -------------------------------------------------------------------------------------
class GrayCamCfg(RepCameraCfg):
    type: str | None = 'SensorsTestGrayCam'


@BaseSensor.register('SensorsTestGrayCam')
class GrayCam(RepCamera):
    """Adds a grey image to the built-in camera's reading, and checks its ``ICamera`` side."""

    def get_data(self):
        data = super().get_data()
        data['gray'] = data['rgba'][..., :3].mean(-1)
        data['icamera'] = isinstance(self, ICamera)
        data['get_rgba_same'] = np.array_equal(self.get_rgba(), data['rgba'])
        data['camera_rgba_same'] = np.array_equal(self._camera.get_rgba(), data['rgba'])  # (upstream's self._camera)
        data['pose'] = self.get_world_pose()[0]
        return data


class BrokenGrayCfg(RepCameraCfg):
    type: str | None = 'SensorsTestBrokenGray'


@BaseSensor.register('SensorsTestBrokenGray')
class BrokenGray(RepCamera):
    """Breaks in env 0 only."""

    def get_data(self):
        if self._scene.slot == 0:
            raise RuntimeError('the camera of env 0 broke')
        data = super().get_data()
        data['gray'] = data['rgba'][..., :3].mean(-1)
        return data


CALLS = {'flaky': 0, 'post_reset': 0}


class FlakyCfg(SensorCfg):
    type: str | None = 'SensorsTestFlaky'


@BaseSensor.register('SensorsTestFlaky')
class Flaky(BaseSensor):
    """Fails on its first reading of the run."""

    def __init__(self, config, robot, scene=None):
        super().__init__(config, robot, scene)

    def post_reset(self):
        CALLS['post_reset'] += 1

    def get_data(self):
        CALLS['flaky'] += 1
        if CALLS['flaky'] == 1:
            raise RuntimeError('first read fails')
        return {'n': CALLS['flaky']}


class AlwaysFailsCfg(SensorCfg):
    type: str | None = 'SensorsTestAlwaysFails'


@BaseSensor.register('SensorsTestAlwaysFails')
class AlwaysFails(BaseSensor):
    def __init__(self, config, robot, scene=None):
        super().__init__(config, robot, scene)

    def get_data(self):
        raise RuntimeError('this sensor always fails')


# -- controllers ---------------------------------------------------------------------------------
SPEEDS = {0: (0.0, 0.0), 1: (0.5, 0.0), 2: (0.0, 1.0)}


class DiscreteCfg(DifferentialDriveControllerCfg):
    type: str | None = 'SensorsTestDiscreteDD'


@BaseController.register('SensorsTestDiscreteDD')
class DiscreteDD(DifferentialDriveController):
    """InternNav's pattern: a discrete command through upstream's ``forward``."""

    def action_to_control(self, action):
        forward_speed, rotation_speed = SPEEDS[int(action[0])]
        return self.forward(forward_speed=forward_speed, rotation_speed=rotation_speed)


class CountingCfg(DifferentialDriveControllerCfg):
    type: str | None = 'SensorsTestCountingDD'


@BaseController.register('SensorsTestCountingDD')
class CountingDD(DifferentialDriveController):
    """Wraps the built-in's ``action_to_control`` and ``get_obs``."""

    def __init__(self, config, robot, scene):
        super().__init__(config, robot, scene)
        self.calls = 0

    def action_to_control(self, action):
        self.calls += 1
        return super().action_to_control(action)

    def get_obs(self):
        obs = super().get_obs()
        obs['calls'] = self.calls
        obs['wheel_base'] = self._wheel_base  # (set by upstream's __init__ from the config)
        return obs


class PointCfg(MoveToPointBySpeedControllerCfg):
    type: str | None = 'SensorsTestPoint'


@BaseController.register('SensorsTestPoint')
class Point(MoveToPointBySpeedController):
    """Upstream's own ``action_to_control`` of move_to_point, written out: ``forward`` from the robot's pose."""

    def action_to_control(self, action):
        start_position, start_orientation = self.robot.get_pose()
        return self.forward(start_position=start_position, start_orientation=start_orientation,
                            goal_position=np.array(action[0]), forward_speed=self.forward_speed,
                            rotation_speed=self.rotation_speed, threshold=self.threshold)


def _env(robots, env_num=1, episodes=None, **config):
    tasks = [SingleInferenceTaskCfg(robots=robots)] * (episodes or env_num)
    env = Env(Config(env_num=env_num, metrics_save_path='none', task_configs=tasks, **config))
    env.runner.results.keep_records = True
    return env


def _drive(robot, actions, steps, env_num=2):
    """Final observations of ``env_num`` slots after ``steps`` steps of ``actions[slot]``."""
    env = _env([robot], env_num=env_num)
    try:
        env.reset()
        for _ in range(steps):
            obs, *_ = env.step([{'jetbot': actions[slot]} for slot in range(env_num)])
        return obs
    finally:
        env.close()


def _records(env):
    return [r for r in env.runner.results.records if r.get('outcome') == 'failed']


# -- tests: sensors --------------------------------------------------------------------------------
def test_a_camera_subclass_extends_the_builtin_cameras_reading_in_every_slot():
    robot = JetbotRobotCfg(sensors=[GrayCamCfg(name='cam', prim_path=CAMERA_PATH, resolution=(32, 24)),
                                    RepCameraCfg(name='ref', prim_path=CAMERA_PATH, resolution=(32, 24))])
    env = _env([robot], env_num=2)
    try:
        env.reset()
        for _ in range(3):
            obs, *_ = env.step([{'jetbot': {'move_by_speed': [0.3, 0.5 * slot]}} for slot in range(2)])
        for slot in range(2):
            sensors = obs[slot]['jetbot']['sensors']
            cam, ref = sensors['cam'], sensors['ref']
            assert ref['rgba'].shape == (24, 32, 4) and ref['rgba'][..., :3].std() > 1  # (a picture, not blank)
            np.testing.assert_array_equal(cam['rgba'], ref['rgba'])  # the built-in's image, this slot's
            np.testing.assert_allclose(cam['gray'], ref['rgba'][..., :3].mean(-1))
            assert cam['icamera'] and cam['get_rgba_same'] and cam['camera_rgba_same']
            assert np.all(np.isfinite(cam['pose']))
    finally:
        env.close()


def test_a_camera_subclass_failing_in_one_slot_leaves_the_other_slot_running():
    robot = JetbotRobotCfg(sensors=[BrokenGrayCfg(name='cam', prim_path=CAMERA_PATH, resolution=(32, 24)),
                                    RepCameraCfg(name='ref', prim_path=CAMERA_PATH, resolution=(32, 24))])
    env = _env([robot], env_num=2)
    try:
        obs, _ = env.reset()
        assert obs[0] is None  # its episode failed to start, every try
        [record] = _records(env)
        assert (record['slot'], record['error_type'], record['error'], record['attempts']) == (
            0, 'RuntimeError', 'the camera of env 0 broke', 3)
        for _ in range(2):
            obs, *_ = env.step([None, {'jetbot': {'move_by_speed': [0.3, 0.0]}}])
        sensors = obs[1]['jetbot']['sensors']
        np.testing.assert_allclose(sensors['cam']['gray'], sensors['ref']['rgba'][..., :3].mean(-1))
        assert sensors['ref']['rgba'][..., :3].std() > 1
    finally:
        env.close()


def test_a_sensor_failing_once_at_the_start_is_built_again_and_the_retry_starts():
    CALLS.update(flaky=0, post_reset=0)
    env = _env([JetbotRobotCfg(sensors=[FlakyCfg(name='flaky')])])
    try:
        obs, _ = env.reset()
        assert obs[0] is not None and obs[0]['jetbot']['sensors']['flaky'] == {'n': 2}
        assert _records(env) == []
        assert CALLS['post_reset'] == 2  # (the new instance of the retry started too)
        obs, *_ = env.step([{}])
        assert obs[0]['jetbot']['sensors']['flaky'] == {'n': 3}
    finally:
        env.close()


def test_a_sensor_failing_every_try_is_recorded_with_its_own_error():
    env = _env([JetbotRobotCfg(sensors=[AlwaysFailsCfg(name='bad')])])
    try:
        obs, _ = env.reset()
        assert obs[0] is None
        [record] = _records(env)
        assert (record['error_type'], record['error'], record['attempts']) == ('RuntimeError', 'this sensor always fails', 3)
    finally:
        env.close()


def test_the_gym_env_names_the_error_its_first_episode_failed_with():
    from internutopia.core.gym_env import Env as GymEnv

    config = Config(metrics_save_path='none',
                    task_configs=[SingleInferenceTaskCfg(robots=[JetbotRobotCfg(sensors=[AlwaysFailsCfg(name='bad')])])])
    with pytest.raises(RuntimeError, match=r'no episode started.*after 3 attempt\(s\): RuntimeError: this sensor always fails'):
        GymEnv(config)


# -- tests: controllers ---------------------------------------------------------------------------
def test_a_controller_subclass_calling_forward_drives_as_the_builtin_does():
    wheels = {'wheel_base': 0.1125, 'wheel_radius': 0.03}
    ours = _drive(JetbotRobotCfg(controllers=[DiscreteCfg(name='drive', **wheels)]),
                  [{'drive': [1]}, {'drive': [2]}], steps=120)
    builtin = _drive(JetbotRobotCfg(controllers=[DifferentialDriveControllerCfg(name='drive', **wheels)]),
                     [{'drive': [0.5, 0.0]}, {'drive': [0.0, 1.0]}], steps=120)
    for slot in range(2):
        np.testing.assert_allclose(ours[slot]['jetbot']['position'], builtin[slot]['jetbot']['position'], atol=1e-9)
        np.testing.assert_allclose(ours[slot]['jetbot']['orientation'], builtin[slot]['jetbot']['orientation'], atol=1e-9)
    assert ours[0]['jetbot']['position'][0] > 0.15  # drove forward
    assert abs(ours[1]['jetbot']['position'][0]) < 0.02 and abs(ours[1]['jetbot']['orientation'][3]) > 0.2  # turned in place


def test_super_action_to_control_of_a_controller_subclass_commands_its_slot_as_the_builtin():
    wheels = {'wheel_base': 0.1125, 'wheel_radius': 0.03}
    actions = [{'drive': [0.4, 0.0]}, {'drive': [0.2, -0.8]}]
    ours = _drive(JetbotRobotCfg(controllers=[CountingCfg(name='drive', **wheels)]), actions, steps=60)
    builtin = _drive(JetbotRobotCfg(controllers=[DifferentialDriveControllerCfg(name='drive', **wheels)]), actions, steps=60)
    for slot in range(2):
        np.testing.assert_allclose(ours[slot]['jetbot']['position'], builtin[slot]['jetbot']['position'], atol=1e-9)
        assert ours[slot]['jetbot']['controllers']['drive'] == {'calls': 60, 'wheel_base': 0.1125}
    assert ours[0]['jetbot']['position'][0] > 0.05


def test_a_controller_subclass_of_a_scaled_jetbot_sees_its_wheels_scaled_as_upstream():
    # Upstream's __init__ multiplies wheel_base and wheel_radius by the robot's scale; and the
    # scaled robot drives the commanded speed, as the built-in does.
    wheels = {'wheel_base': 0.1125, 'wheel_radius': 0.03}
    actions = [{'drive': [0.2, 0.0]}] * 2
    ours = _drive(JetbotRobotCfg(scale=(5.0, 5.0, 5.0), controllers=[CountingCfg(name='drive', **wheels)]), actions, steps=60)
    builtin = _drive(JetbotRobotCfg(scale=(5.0, 5.0, 5.0), controllers=[DifferentialDriveControllerCfg(name='drive', **wheels)]),
                     actions, steps=60)
    for slot in range(2):
        np.testing.assert_allclose(ours[slot]['jetbot']['position'], builtin[slot]['jetbot']['position'], atol=1e-9)
        assert ours[slot]['jetbot']['controllers']['drive']['wheel_base'] == pytest.approx(5 * 0.1125)
    assert 0.15 < ours[0]['jetbot']['position'][0] < 0.22  # 1 s at 0.2 m/s, from rest (not five times that)


def test_a_move_to_point_subclass_calling_forward_reaches_the_goal_as_the_builtin():
    goal = [0.3, 0.1, 0.0]
    point = {'forward_speed': 0.5, 'rotation_speed': 3.0, 'threshold': 0.05, 'sub_controllers': [move_by_speed_cfg]}
    ours = _drive(JetbotRobotCfg(controllers=[move_by_speed_cfg, PointCfg(name='point', **point)]),
                  [{'point': [goal]}] * 2, steps=400, env_num=2)
    builtin = _drive(JetbotRobotCfg(controllers=[move_by_speed_cfg, MoveToPointBySpeedControllerCfg(name='point', **point)]),
                     [{'point': [goal]}] * 2, steps=400, env_num=2)
    for slot in range(2):
        position = ours[slot]['jetbot']['position']
        np.testing.assert_allclose(position, builtin[slot]['jetbot']['position'], atol=1e-9)
        assert np.hypot(position[0] - goal[0], position[1] - goal[1]) < 0.06  # (arrived)
        assert bool(ours[slot]['jetbot']['controllers']['point']['finished'])  # (the built-in's observation, this slot's)


def test_a_builtin_cameras_params_seen_from_a_slot_are_that_slots_row():
    """``ICamera.get_camera_params()`` of a built-in camera gives one slot's row of every entry,
    the pose (a dict of rows) included."""
    from internutopia.core.config import Config
    from internutopia.core.vec_env import Env
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, jetbot_camera_cfg
    from internutopia_extension.configs.tasks import FiniteStepTaskCfg

    camera = jetbot_camera_cfg.update(resolution=(32, 24), enable=True, camera_params=True)
    task = FiniteStepTaskCfg(max_steps=50, robots=[JetbotRobotCfg(sensors=[camera])])
    with Env(Config(env_num=2, metrics_save_path='none', task_configs=[task] * 2)) as env:
        env.reset()
        env.step([None, None])
        params = [task.robots['jetbot'].sensors[camera.name].get_camera_params()
                  for task in env.runner.current_tasks.values()]
    assert len(params) == 2
    for one in params:
        assert np.asarray(one['intrinsics']).shape == (3, 3) and one['intrinsics'][0][0] > 0
        assert np.asarray(one['pose']['position']).shape == (3,) and np.asarray(one['pose']['orientation']).shape == (4,)
        assert 0.05 < one['pose']['position'][2] < 0.2  # (the camera on the jetbot, env-local)
