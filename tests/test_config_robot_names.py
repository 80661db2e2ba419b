"""Robot names a task config gives (its metrics', a locomotion task's ``robot``) are checked when the
config is built; a start that still fails with ``episode_errors='record'`` warns; the point-goal
reward on a task without a goal fails the start, naming both; its settings take numpy numbers."""

from __future__ import annotations

import math
import warnings
from typing import ClassVar

import numpy as np
import pytest
from pydantic import ValidationError

from internutopia.core.config import Config, MetricCfg, SimConfig, TaskCfg
from internutopia.core.vec_env import Env
from internutopia_extension.configs.metrics import RecordingMetricCfg, SPLMetricCfg, TraveledDistanceMetricCfg
from internutopia_extension.configs.robots.h1 import H1RobotCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import (
    FiniteStepTaskCfg,
    LocomotionTaskCfg,
    ManipulationTaskCfg,
    PointNavProgressRewardCfg,
    PointNavTaskCfg,
    SingleInferenceTaskCfg,
)

JETBOT = JetbotRobotCfg()
TWO = [JetbotRobotCfg(name='a'), JetbotRobotCfg(name='b')]


def _env(task, **config) -> Env:
    config = {'metrics_save_path': 'none', 'episode_attempts': 1, **config}
    return Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, task_configs=[task], **config))


# -- config time ---------------------------------------------------------------------------------
def test_a_locomotion_task_robot_must_be_one_of_its_robots():
    with pytest.raises(ValidationError, match=r"robot 'h1' is not one of the robots \['walker'\]"):
        LocomotionTaskCfg(max_steps=5, robots=[H1RobotCfg(name='walker')])  # robot defaults to 'h1'
    task = LocomotionTaskCfg(max_steps=5, robot='walker', robots=[H1RobotCfg(name='walker')])
    assert task.robot == 'walker'
    template = LocomotionTaskCfg(max_steps=5)  # no robots yet: nothing to check against
    assert template.update(robots=[H1RobotCfg()]).robots[0].name == 'h1'
    with pytest.raises(ValidationError, match=r"robot 'h1' is not one of the robots \['walker'\]"):
        template.update(robots=[H1RobotCfg(name='walker')])


@pytest.mark.parametrize('make', [
    lambda **kw: FiniteStepTaskCfg(max_steps=2, **kw),
    lambda **kw: SingleInferenceTaskCfg(**kw),
    lambda **kw: ManipulationTaskCfg(max_steps=2, target='t', episode_idx=0, **kw),
    lambda **kw: PointNavTaskCfg(goal=(1, 0, 0), **kw),
    lambda **kw: LocomotionTaskCfg(max_steps=2, robot=kw['robots'][0].name, **kw),
], ids=['finite_step', 'single_inference', 'manipulation', 'point_nav', 'locomotion'])
def test_a_metric_robot_name_must_be_one_of_the_task_robots(make):
    with pytest.raises(ValidationError, match=r"metrics\[0\]\.robot_name 'h1' is not one of the robots \['jetbot'\] "
                                              r"\(metric 'traveled_distance_metric' \(TraveledDistanceMetric\)\)"):
        make(robots=[JETBOT], metrics=[TraveledDistanceMetricCfg(robot_name='h1')])
    with pytest.raises(ValidationError, match=r"metrics\[1\]\.metric_config robot_name 'nope' is not one of the robots "
                                              r"\['jetbot'\] \(metric TraveledDistanceMetric\)"):
        make(robots=[JETBOT], metrics=[SPLMetricCfg(), MetricCfg(type='TraveledDistanceMetric',
                                                                 metric_config={'robot_name': 'nope'})])
    with pytest.raises(ValidationError, match=r"metrics\[0\]\.metric_config robot_name 'nope'"):
        make(robots=[JETBOT], metrics=[TraveledDistanceMetricCfg(metric_config={'robot_name': 'nope'})])
    with pytest.raises(ValidationError, match=r"metrics\[0\]\.robot_name 'c' is not one of the robots \['a', 'b'\]"):
        make(robots=TWO, metrics=[RecordingMetricCfg(robot_name='c')])
    task = make(robots=[JETBOT], metrics=[TraveledDistanceMetricCfg(robot_name='jetbot'),
                                          MetricCfg(type='TraveledDistanceMetric', name='d', metric_config={'robot_name': 'jetbot'})])
    assert [m.type for m in task.metrics] == ['TraveledDistanceMetric'] * 2


def test_a_recording_metric_of_a_one_robot_task_may_name_another_robot_as_upstream():
    # InternUtopia's mocap demo records robot_name='franka' of a robot named 'mocap_controlled_franka':
    # its metric records the one robot whatever the name (with a warning at the reset).
    task = FiniteStepTaskCfg(max_steps=2, robots=[JETBOT], metrics=[RecordingMetricCfg(robot_name='franka')])
    assert task.metrics[0].robot_name == 'franka'


def test_an_extension_task_config_and_a_plain_one_check_metric_robot_names_too():
    # The check is TaskCfg's own: an extension's task config (InternNav's way: a subclass of
    # TaskCfg with its own fields) and a plain TaskCfg reject a metric naming a robot they lack.
    class NavEvalTaskCfg(TaskCfg):
        type: str = 'NavEvalTask'
        max_steps: int = 100

    with pytest.raises(ValidationError, match=r"metrics\[0\]\.robot_name 'h1' is not one of the robots \['jetbot'\]"):
        NavEvalTaskCfg(robots=[JETBOT], metrics=[TraveledDistanceMetricCfg(robot_name='h1')])
    with pytest.raises(ValidationError, match=r"metrics\[0\]\.metric_config robot_name 'h2' is not one of the robots "
                                              r"\['jetbot'\] \(metric 'm' \(MyMetric\)\)"):
        TaskCfg(type='MyTask', robots=[JETBOT], metrics=[MetricCfg(type='MyMetric', name='m', metric_config={'robot_name': 'h2'})])
    assert NavEvalTaskCfg(robots=[JETBOT], metrics=[TraveledDistanceMetricCfg(robot_name='jetbot')]).max_steps == 100

    # An extension's metric that measures a one-robot task's robot whatever its name says it so.
    class CameraLogMetricCfg(MetricCfg):
        type: str = 'CameraLogMetric'
        robot_name: str = 'robot'
        any_robot_when_alone: ClassVar[bool] = True

    assert NavEvalTaskCfg(robots=[JETBOT], metrics=[CameraLogMetricCfg()]).metrics[0].robot_name == 'robot'
    with pytest.raises(ValidationError, match=r"metrics\[0\]\.robot_name 'robot' is not one of the robots \['a', 'b'\]"):
        NavEvalTaskCfg(robots=TWO, metrics=[CameraLogMetricCfg()])


def test_a_task_without_robots_checks_no_names_and_yaml_round_trips(tmp_path):
    task = SingleInferenceTaskCfg(robots=[], metrics=[TraveledDistanceMetricCfg(robot_name='h1')])
    assert task.metrics[0].robot_name == 'h1'  # (a robot-less episode, or a template given robots later)
    with pytest.raises(ValidationError, match=r"metrics\[0\]\.robot_name 'h1' is not one of the robots \['jetbot'\]"):
        task.update(robots=[JETBOT])
    good = FiniteStepTaskCfg(max_steps=2, robots=[JETBOT], metrics=[TraveledDistanceMetricCfg(robot_name='jetbot')])
    path = tmp_path / 'run.yaml'
    Config(metrics_save_path='none', task_configs=[good]).to_yaml(path)
    loaded = Config.from_yaml(path).task_configs[0]
    assert isinstance(loaded, FiniteStepTaskCfg) and loaded.metrics[0].robot_name == 'jetbot'
    path.write_text(path.read_text().replace('robot_name: jetbot', 'robot_name: nope'))
    with pytest.raises(ValueError, match=r"metrics\[0\]\.robot_name 'nope' is not one of the robots \['jetbot'\]"):
        Config.from_yaml(path)
    copied = good.model_copy(update={'max_steps': 3})  # (model_copy does not validate: nothing changes)
    assert copied.max_steps == 3


# -- a start that fails at runtime ---------------------------------------------------------------
def test_a_failed_start_warns_with_its_episode_slot_and_error_once_after_its_last_attempt():
    task = FiniteStepTaskCfg(max_steps=2, robots=[JETBOT],
                             metrics=[RecordingMetricCfg(robot_name='jetbot', fields=['joint_action_typo'])])
    env = _env(task, episode_attempts=2)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            obs, info = env.reset()
    finally:
        env.close()
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert messages == [
        "episode 0 failed to start in slot 0 (2 attempt(s), Config.episode_attempts) and is recorded as failed: "
        "ValueError: recording_metric: robot 'jetbot' has no observation field(s) ['joint_action_typo']; its fields: "
        "['controllers', 'joint_positions', 'joint_velocities', 'orientation', 'position', 'render', 'sensors']"]
    assert [w.filename for w in caught if issubclass(w.category, RuntimeWarning)] == [__file__]  # the caller's reset
    assert obs == [None] and info == [None]


def test_an_episode_that_fails_to_load_for_a_refilled_slot_warns_without_a_slot():
    bad_field = FiniteStepTaskCfg(max_steps=2, robots=[JETBOT], metrics=[RecordingMetricCfg(robot_name='jetbot', fields=['nope'])])
    misspelt = FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg()])
    misspelt.robots[0].type = 'NoSuchRobot'
    good = FiniteStepTaskCfg(max_steps=2, robots=[JETBOT])
    env = Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, metrics_save_path='none', episode_attempts=1,
                     task_configs=[good]), episodes=iter([bad_field, misspelt, good]))  # (not checked ahead)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            obs, _ = env.reset()  # episode 0 fails to start, episode 1 to load; slot 0 takes episode 2
    finally:
        env.close()
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 2 and obs[0] is not None
    assert messages[0].startswith('episode 0 failed to start in slot 0 (1 attempt(s), Config.episode_attempts) and is '
                                  "recorded as failed: ValueError: recording_metric: robot 'jetbot' has no observation "
                                  "field(s) ['nope']")
    assert messages[1].startswith('episode 1 failed to load (it had no slot yet) (1 attempt(s), Config.episode_attempts) '
                                  "and is recorded as failed: ValueError: unknown robot type 'NoSuchRobot'")


def test_with_episode_errors_raise_a_failed_start_raises_and_does_not_warn():
    task = FiniteStepTaskCfg(max_steps=2, robots=[JETBOT],
                             metrics=[RecordingMetricCfg(robot_name='jetbot', fields=['joint_action_typo'])])
    env = _env(task, episode_errors='raise')
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('error', RuntimeWarning)
            with pytest.raises(ValueError, match=r"no observation field\(s\) \['joint_action_typo'\]"):
                env.reset()
    finally:
        env.close()


def test_the_point_nav_reward_on_a_task_without_a_goal_fails_its_start_naming_both():
    task = FiniteStepTaskCfg(max_steps=2, robots=[JETBOT], reward=PointNavProgressRewardCfg())
    env = _env(task)
    try:
        with pytest.warns(RuntimeWarning, match=r"episode 0 failed to start in slot 0 .*ValueError: PointNavProgressReward "
                                                r"\(the reward\) needs a task with a goal .*task FiniteStepTask "
                                                r"\(FiniteStepTask\) has no prev_distance, distance, success"):
            assert env.reset()[0] == [None]
    finally:
        env.close()


# -- reward settings -----------------------------------------------------------------------------
def test_reward_settings_take_any_real_number_as_a_python_float():
    settings = PointNavProgressRewardCfg(reward_settings={'scale': np.float32(0.5), 'success_bonus': np.int64(2),
                                                          'step_penalty': 0}).reward_settings
    assert settings == {'scale': 0.5, 'success_bonus': 2.0, 'step_penalty': 0.0}
    assert all(type(value) is float for value in settings.values())
    for bad in (True, np.float32('nan'), math.inf, 'big', None):
        with pytest.raises(ValidationError, match=r"reward_settings\['scale'\] must be a finite number"):
            PointNavProgressRewardCfg(reward_settings={'scale': bad})
