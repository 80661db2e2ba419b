"""Subclasses of built-in tasks, metrics and controllers written InternUtopia's way see what
InternUtopia's built-in classes give them.

- a task or metric subclass reads the attributes InternUtopia's built-in sets (``max_steps``,
  ``stop_count``; ``robot_name``, ``distance``): config values from the start, live values read
  from the built-in behind (until the instance sets its own);
- a controller subclass overriding only ``forward()`` decides what an action does: the default
  ``action_to_control`` hands it upstream's ``forward`` arguments;
- a metric subclass overriding only ``update(obs)`` gets the slot's observation dict.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.robot.controller import BaseController
from internutopia.core.task import BaseMetric, BaseTask
from internutopia.core.vec_env import Env
from internutopia.per_slot.metric import UPSTREAM_METRIC_ATTRIBUTES
from internutopia.per_slot.task import UPSTREAM_TASK_ATTRIBUTES
from internutopia.per_slot.upstream_forward import UPSTREAM_ACTION_TO_FORWARD, forward_call
from internutopia_extension.configs.controllers import DifferentialDriveControllerCfg
from internutopia_extension.configs.metrics.recording_metric import RecordingMetricCfg
from internutopia_extension.configs.metrics.traveled_distance_metric import TraveledDistanceMetricCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.controllers.dd_controller import DifferentialDriveController
from internutopia_extension.metrics.recording_metric import RecordingMetric
from internutopia_extension.metrics.traveled_distance_metric import TraveledDistanceMetric
from internutopia_extension.tasks.finite_step_task import FiniteStepTask

WHEELS = DifferentialDriveControllerCfg(name='move_by_speed', wheel_base=0.1125, wheel_radius=0.03)
DRIVE = {'jetbot': {'move_by_speed': [0.3, 0.0]}}
UPSTREAM = pathlib.Path('/tmp/up/internutopia_extension')


def make_env(tasks: list, env_num: int = 1) -> Env:
    return Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=env_num, metrics_save_path='none', task_configs=tasks))


# -- tasks and metrics ------------------------------------------------------------------------------
class BaHalfCfg(TraveledDistanceMetricCfg):
    type: str = 'BaHalfDistance'


@BaseMetric.register('BaHalfDistance')
class BaHalfDistance(TraveledDistanceMetric):
    def calc(self):
        return {'robot': self.robot_name, 'distance': self.distance, 'super': super().calc()}


class BaOwnCfg(TraveledDistanceMetricCfg):
    type: str = 'BaOwnDistance'


@BaseMetric.register('BaOwnDistance')
class BaOwnDistance(TraveledDistanceMetric):
    """Counts its own distance, as a subclass of upstream's may: ``self.distance`` is then its own."""

    def calc(self):
        self.distance = 42.0
        return self.distance


class BaRecordCfg(RecordingMetricCfg):
    type: str = 'BaRecording'


@BaseMetric.register('BaRecording')
class BaRecording(RecordingMetric):
    def calc(self):
        return {'robot': self.robot_name, 'fields': self.fields, 'step': self.step, 'param': self.param is self.config}


class BaMaxCfg(FiniteStepTaskCfg):
    type: str = 'BaMaxTask'


@BaseTask.register('BaMaxTask')
class BaMaxTask(FiniteStepTask):
    def __init__(self, config, scene):
        super().__init__(config, scene)
        self.seen_in_init = (self.max_steps, self.stop_count)

    def get_observations(self):
        obs = super().get_observations()
        obs['upstream'] = (self.max_steps, self.stop_count, self.seen_in_init)
        return obs


def test_subclasses_of_built_in_tasks_and_metrics_read_upstreams_attributes():
    metrics = [BaHalfCfg(name='half', robot_name='jetbot'), BaOwnCfg(name='own', robot_name='jetbot'),
               BaRecordCfg(name='rec', robot_name='jetbot', fields=['position'])]
    with make_env([BaMaxCfg(max_steps=5, robots=[JetbotRobotCfg(controllers=[WHEELS])], metrics=metrics)]) as env:
        obs, _ = env.reset()
        assert obs[0]['upstream'] == (5, 1, (5, 1))  # upstream's stop_count: 1, then one more per is_done
        for step in range(5):
            obs, _, _, truncated, info = env.step([DRIVE])
            if step < 4:
                assert obs[0]['upstream'] == (5, step + 2, (5, 1))
    assert truncated[0]
    half = info[0]['metrics']['half']
    assert half['robot'] == 'jetbot' and half['distance'] == half['super'] > 0.0
    assert info[0]['metrics']['own'] == 42.0
    assert info[0]['metrics']['rec'] == {'robot': 'jetbot', 'fields': ['position'], 'step': 5, 'param': True}


def test_the_tables_cover_every_built_in_task_and_metric_upstream_has_that_exists_here():
    """Upstream's built-in tasks and metrics (``internutopia_extension/tasks``, ``metrics``) that
    have a twin here each have an entry (upstream's ``SimpleInferenceTask`` is ``SingleInferenceTask``)."""
    assert set(UPSTREAM_TASK_ATTRIBUTES) == {'FiniteStepTask', 'ManipulationTask', 'SingleInferenceTask'}
    assert set(UPSTREAM_METRIC_ATTRIBUTES) == {'TraveledDistanceMetric', 'RecordingMetric'}
    if UPSTREAM.is_dir():
        import re
        found = {re.search(r'class (\w+)\(Base(Task|Metric)\)', path.read_text()).group(1)
                 for path in [*UPSTREAM.glob('tasks/*_task.py'), *UPSTREAM.glob('metrics/*_metric.py')]}
        assert found == {'FiniteStepTask', 'ManipulationTask', 'SimpleInferenceTask', 'TraveledDistanceMetric',
                         'RecordingMetric'}


# -- a metric overriding only update(obs) -----------------------------------------------------------
SEEN: list = []


class BaLoggedCfg(TraveledDistanceMetricCfg):
    type: str = 'BaLoggedDistance'


@BaseMetric.register('BaLoggedDistance')
class BaLoggedDistance(TraveledDistanceMetric):
    def update(self, obs):
        super().update(obs)
        SEEN.append(float(obs['jetbot']['position'][0]))


def test_a_built_in_metric_subclass_overriding_only_update_gets_the_slots_observation():
    SEEN.clear()
    tasks = [FiniteStepTaskCfg(max_steps=3, robots=[JetbotRobotCfg(controllers=[WHEELS])],
                               metrics=[BaLoggedCfg(name='d', robot_name='jetbot')])]
    with make_env(tasks) as env:
        env.reset()
        xs = []
        for _ in range(3):
            obs, _, _, _, info = env.step([DRIVE])
            xs.append(float(obs[0]['jetbot']['position'][0]))
    assert 'failed' not in info[0] and info[0]['metrics']['d'] > 0.0
    assert SEEN == xs[:-1]  # (no update(obs) on the step the task ends the episode on, as upstream)


# -- a controller overriding only forward() ---------------------------------------------------------
CALLS: list = []


class BaReverseCfg(DifferentialDriveControllerCfg):
    type: str = 'BaReverseDD'


@BaseController.register('BaReverseDD')
class BaReverseDD(DifferentialDriveController):
    """Drives backwards whatever it is told."""

    def forward(self, forward_speed=0, rotation_speed=0):
        CALLS.append((forward_speed, rotation_speed))
        return super().forward(-abs(forward_speed), rotation_speed)


def test_a_built_in_controller_subclass_overriding_only_forward_decides_what_an_action_does():
    CALLS.clear()
    reverse = BaReverseCfg(name='move_by_speed', wheel_base=0.1125, wheel_radius=0.03)
    with make_env([FiniteStepTaskCfg(max_steps=500, robots=[JetbotRobotCfg(controllers=[reverse])])]) as env:
        env.reset()
        for _ in range(120):
            obs, *_ = env.step([{'jetbot': {'move_by_speed': [0.3, 0.1]}}])
    assert obs[0]['jetbot']['position'][0] < -0.05
    assert len(CALLS) == 120 and CALLS[0] == (0.3, 0.1)


class _Fake:
    """A per-slot controller object for :func:`forward_call` alone: records its ``forward`` call."""

    name = 'c'
    forward_speed, rotation_speed, threshold = 1.0, 8.0, 0.02

    class robot:  # noqa: N801
        @staticmethod
        def get_pose():
            return np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])

        @staticmethod
        def get_robot_scale():
            return np.array([2.0, 2.0, 2.0])

    def forward(self, *args, **kwargs):
        self.call = (args, kwargs)
        return 'result', True


def _runner(name: str) -> object:
    return type(name, (), {})()


@pytest.mark.parametrize(('builtin', 'action', 'expected'), [
    ('DifferentialDriveController', [0.3, 0.1], ((), {'forward_speed': 0.3, 'rotation_speed': 0.1})),
    ('H1MoveBySpeedController', [0.3, 0.2, 0.1], ((), {'forward_speed': 0.3, 'lateral_speed': 0.2, 'rotation_speed': 0.1})),
    ('G1MoveBySpeedController', [0.3, 0.2, 0.1],
     ((), {'forward_speed': 0.3, 'lateral_speed': 0.2, 'rotation_speed': 0.1, 'height': 0.74, 'target_upper_joint_pos': None})),
    ('GripperController', ['open'], (('open',), {})),
    ('RecoverController', [[0.0, 0.0, 1.0]], (([0.0, 0.0, 1.0],), {})),
    ('RotateController', [[1.0, 0.0, 0.0, 0.0]],
     ((), {'start_orientation': [1.0, 0.0, 0.0, 0.0], 'goal_orientation': [1.0, 0.0, 0.0, 0.0], 'rotation_speed': 8.0,
           'threshold': 0.02})),
    ('MoveToPointOracleController', [[1.0, 2.0, 0.0]],
     ((), {'start_position': [0.0, 0.0, 0.0], 'start_orientation': [1.0, 0.0, 0.0, 0.0], 'goal_position': [1.0, 2.0, 0.0],
           'forward_speed': 1.0, 'rotation_speed': 8.0, 'threshold': 0.04})),
])
def test_the_default_action_to_control_passes_upstreams_forward_arguments(builtin, action, expected):
    fake = _Fake()
    result = forward_call(fake, _runner(builtin), action)
    args, kwargs = fake.call
    assert args == expected[0]
    assert {key: np.asarray(value).tolist() if isinstance(value, np.ndarray) else value for key, value in kwargs.items()} \
        == expected[1]
    assert result == ('result', True)  # (upstream's action_to_control returns forward's result)


def test_an_ik_forward_returns_action_and_success_as_upstream():
    fake = _Fake()
    assert forward_call(fake, _runner('InverseKinematicsController'), [[0.1, 0.2, 0.3], None]) == 'result'
    assert fake.success is True and fake.call[1]['eef_target_orientation'] is None


def test_a_built_in_controller_without_an_upstream_forward_says_so():
    with pytest.raises(TypeError, match=r'_Fake overrides forward\(\), but HolonomicBaseController'):
        forward_call(_Fake(), _runner('HolonomicBaseController'), [0.0])


def test_the_forward_table_covers_every_upstream_controller_whose_action_to_control_calls_forward():
    if not UPSTREAM.is_dir():
        pytest.skip('upstream InternUtopia is not unpacked at /tmp/up')
    import re
    here = {'DifferentialDriveController', 'H1MoveBySpeedController', 'AliengoMoveBySpeedController', 'G1MoveBySpeedController',
            'GR1MoveBySpeedController', 'MoveToPointBySpeedController', 'MoveToPointOracleController',
            'MoveAlongPathPointsController', 'RotateController', 'RotateOracleController', 'JointController',
            'GripperController', 'InverseKinematicsController', 'RMPFlowController', 'RecoverController',
            'FrankaMocapTeleopController', 'GR1TeleOpController', 'LayoutEditMocapController'}
    calls_forward = set()
    for path in UPSTREAM.glob('controllers/*.py'):
        text = path.read_text()
        for match in re.finditer(r'class (\w+)\(BaseController\)', text):
            if 'self.forward(' in text.split('def action_to_control', 1)[-1]:
                calls_forward.add(match.group(1))
    # (RotateOracle is a RotateController here and RMPFlow the IK controller: their base's entry serves
    # them, upstream passing the same arguments; upstream's layout-edit controller has no twin here)
    covered = set(UPSTREAM_ACTION_TO_FORWARD) | {'RotateOracleController', 'RMPFlowController', 'LayoutEditMocapController'}
    assert calls_forward <= here and calls_forward <= covered, calls_forward - covered


class BaMixedCfg(TraveledDistanceMetricCfg):
    type: str = 'BaMixedDistance'


@BaseMetric.register('BaMixedDistance')
class BaMixedDistance(TraveledDistanceMetric):
    """InternUtopia's update(obs) with this package's calc(slot): neither way can run it."""

    def update(self, obs):
        super().update(obs)

    def calc(self, slot):
        return 0.0


def test_a_metric_mixing_update_obs_with_calc_slot_is_refused_naming_the_class(tmp_path):
    path = tmp_path / 'records.jsonl'
    task = FiniteStepTaskCfg(max_steps=3, robots=[JetbotRobotCfg(controllers=[WHEELS])], metrics=[BaMixedCfg(name='d', robot_name='jetbot')])
    with Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, task_configs=[task], metrics_save_path=str(path))) as env:
        obs, _ = env.reset()
    assert obs == [None]
    record = path.read_text()
    assert "metric class BaMixedDistance ('BaMixedDistance') is written per slot" in record and "calc takes ['slot']" in record
