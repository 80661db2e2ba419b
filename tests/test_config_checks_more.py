"""Config checks a user sees at construction or in ``internutopia validate``, not inside a step:
pose fields of every robot, controller numbers, step lengths, metric options, robot scales, camera
mounts, tuple lengths, YAML 1.2 floats, ``--set`` reporting, ``update`` copies, ``reward_type``."""

from __future__ import annotations

import textwrap
import warnings

import pytest
from pydantic import ValidationError

from internutopia import cli
from internutopia.core.config import Config, ControllerCfg, RewardCfg, RobotCfg, SimConfig, TaskCfg, strict_config
from internutopia.core.config.unknown_keys import UnknownConfigKeyWarning


def write(tmp_path, text, name='c.yaml'):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def validate(capsys, path, *args):
    status = cli.main(['validate', path, *args])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def one_error(excinfo) -> tuple[str, str]:
    errors = excinfo.value.errors()
    assert len(errors) == 1, errors
    return '.'.join(str(p) for p in errors[0]['loc']), errors[0]['msg']


# -- 1: every robot's position (and the other pose fields) is checked ---------------------------------
@pytest.mark.parametrize('module, name', [
    ('h1', 'H1RobotCfg'), ('g1', 'G1RobotCfg'), ('aliengo', 'AliengoRobotCfg'), ('gr1', 'GR1RobotCfg'),
    ('h1_with_hand', 'H1WithHandRobotCfg'), ('jetbot', 'JetbotRobotCfg'), ('franka', 'FrankaRobotCfg'),
])
def test_every_robot_config_checks_its_position(module, name):
    import importlib

    cls = getattr(importlib.import_module(f'internutopia_extension.configs.robots.{module}'), name)
    with pytest.raises(ValidationError) as excinfo:
        cls(position=(1e100, 0.0, 1.0))
    assert one_error(excinfo)[0] == 'position'
    assert 'within +-100000 m' in one_error(excinfo)[1]


def test_a_subclass_that_redeclares_a_pose_field_keeps_its_check():
    class MyRobotCfg(RobotCfg):
        name: str = 'mine'
        type: str = 'MyRobot'
        position: tuple[float, float, float] = (0.0, 0.0, 0.0)  # a plain type: the base's check still runs

    with pytest.raises(ValidationError, match='within \\+-100000 m'):
        MyRobotCfg(position=(1e9, 0.0, 0.0))


@pytest.mark.parametrize('make, field', [
    (lambda: __import__('internutopia_extension.configs.tasks', fromlist=['x']).PointNavTaskCfg(
        goal=(1e9, 0.0, 0.0), robots=[RobotCfg(name='r', type='X')]), 'goal'),
    (lambda: __import__('internutopia_extension.configs.tasks', fromlist=['x']).ManipulationTaskCfg(
        max_steps=10, target='cube', episode_idx=0, goal_position=(0.0, 1e9, 0.0)), 'goal_position'),
    (lambda: __import__('internutopia_extension.configs.sensors', fromlist=['x']).RepCameraCfg(
        name='c', position=(0.0, 0.0, 1e9)), 'position'),
    (lambda: __import__('internutopia_extension.configs.sensors', fromlist=['x']).RepCameraCfg(
        name='c', translation=(0.0, 0.0, 1e9)), 'translation'),
])
def test_goals_and_camera_offsets_are_checked_positions(make, field):
    with pytest.raises(ValidationError) as excinfo:
        make()
    loc, message = one_error(excinfo)
    assert loc == field and 'within +-100000 m' in message


def test_h1_far_away_fails_validate_naming_the_line(tmp_path, capsys):
    path = write(tmp_path, '''\
        task_configs:
          - type: SingleInferenceTask
            robots:
              - type: H1Robot
                position: [1.0e+100, 0.0, 1.05]
        ''')
    status, out = validate(capsys, path)
    assert status == cli.EXIT_ERROR
    assert f'{path}:5: task_configs[0].robots[0].position: every coordinate must be within +-100000 m' in out


# -- 2: update() returns an independent copy -------------------------------------------------------
def test_update_copies_deeply_and_leaves_the_original_as_it_was():
    with warnings.catch_warnings():  # (kept keys: deep-copied too)
        warnings.simplefilter('ignore', UnknownConfigKeyWarning)
        robot = RobotCfg(name='r', type='X', controllers=[ControllerCfg(name='c', type='A', gain=[1.0])])
        task = TaskCfg(type='SingleInferenceTask', robots=[robot], note={'a': [1]})
    config = Config(task_configs=[task])
    copy = config.update(env_num=2)
    assert copy.task_configs[0] is not config.task_configs[0] and copy.simulator is not config.simulator
    copy.task_configs[0].robots[0].position = (5.0, 0.0, 0.0)
    copy.task_configs[0].robots[0].controllers[0].gain.append(2.0)
    copy.task_configs[0].note['a'].append(2)
    copy.simulator.physics_dt = 0.5
    assert config.task_configs[0].robots[0].position == (0.0, 0.0, 0.0)
    assert config.task_configs[0].robots[0].controllers[0].gain == [1.0]
    assert config.task_configs[0].note == {'a': [1]} and config.simulator.physics_dt == 1 / 60
    changed = robot.update(name='r2')
    changed.controllers[0].name = 'changed'
    assert robot.controllers[0].name == 'c'


def test_update_takes_the_given_values_as_given_as_upstreams_model_copy():
    controllers = [ControllerCfg(name='c', type='A')]
    robot = RobotCfg(name='r', type='X').update(controllers=controllers)
    assert robot.controllers[0] is controllers[0]  # (pydantic's model_copy(update=..., deep=True) does not copy them)


# -- 3: controller numbers -----------------------------------------------------------------------------
@pytest.mark.parametrize('cls_name, kwargs, field', [
    ('DifferentialDriveControllerCfg', dict(name='m', wheel_base=0.1125, wheel_radius=0.0), 'wheel_radius'),
    ('DifferentialDriveControllerCfg', dict(name='m', wheel_base=0.1125, wheel_radius=-0.03), 'wheel_radius'),
    ('DifferentialDriveControllerCfg', dict(name='m', wheel_base=0.0, wheel_radius=0.03), 'wheel_base'),
    ('MoveToPointBySpeedControllerCfg', dict(name='m', forward_speed=-1.0), 'forward_speed'),
    ('MoveToPointBySpeedControllerCfg', dict(name='m', rotation_speed=0.0), 'rotation_speed'),
    ('MoveToPointBySpeedControllerCfg', dict(name='m', threshold=0.0), 'threshold'),
    ('MoveAlongPathPointsControllerCfg', dict(forward_speed=0.0), 'forward_speed'),
    ('MoveAlongPathPointsControllerCfg', dict(threshold=-0.1), 'threshold'),
    ('RotateControllerCfg', dict(name='r', rotation_speed=-3.0), 'rotation_speed'),
    ('RotateControllerCfg', dict(name='r', threshold=0.0), 'threshold'),
    ('RecoverControllerCfg', dict(name='r', recover_height=0.0), 'recover_height'),
    ('RecoverControllerCfg', dict(name='r', recover_height=1e9), 'recover_height'),
])
def test_controller_numbers_must_be_positive(cls_name, kwargs, field):
    from internutopia_extension.configs import controllers

    with pytest.raises(ValidationError) as excinfo:
        getattr(controllers, cls_name)(**kwargs)
    loc, message = one_error(excinfo)
    assert loc == field and message.startswith(f'Value error, {field} must be a number > 0')


def test_none_still_means_upstreams_fallback_for_controller_speeds():
    from internutopia_extension.configs.controllers import MoveToPointBySpeedControllerCfg, RotateControllerCfg

    cfg = MoveToPointBySpeedControllerCfg(name='m', forward_speed=None, rotation_speed=None, threshold=None)
    assert (cfg.forward_speed, cfg.rotation_speed, cfg.threshold) == (1.0, 8.0, 0.02)
    assert RotateControllerCfg(name='r', rotation_speed=None).rotation_speed == 3.0


# -- 4: step lengths ---------------------------------------------------------------------------------------
@pytest.mark.parametrize('kwargs, field, text', [
    (dict(physics_dt=1e6), 'physics_dt', 'within [1e-06, 1] seconds'),
    (dict(physics_dt=1e-10, rendering_dt=1e300), 'physics_dt', 'within [1e-06, 1] seconds'),
    (dict(physics_dt=1e-3, rendering_dt=1e300), 'rendering_dt', 'rendering_dt / physics_dt must be at most 1e+09'),
])
def test_step_lengths_are_bounded(kwargs, field, text):
    with pytest.raises(ValidationError) as excinfo:
        SimConfig(**kwargs)
    loc, message = one_error(excinfo)
    assert loc == field and text in message


def test_an_assignment_that_breaks_the_render_period_changes_nothing():
    sim = SimConfig(physics_dt=1e-3)
    with pytest.raises(ValidationError, match='rendering_dt / physics_dt'):
        sim.rendering_dt = 1e7
    assert sim.rendering_dt == 1 / 60
    sim = SimConfig(rendering_dt=100.0, physics_dt=0.01)
    with pytest.raises(ValidationError, match='physics_dt'):
        sim.physics_dt = 1e-8
    assert sim.physics_dt == 0.01


def test_the_render_clock_of_the_largest_accepted_period_is_an_integer():
    from internutopia.core.backend.clock import RenderClock

    clock = RenderClock.of(SimConfig(physics_dt=1e-6, rendering_dt=1e3))
    assert clock.period == 10**9 and clock.due(0.0)


# -- 5: robot scales and camera mounts -----------------------------------------------------------------
def test_env_rejects_a_scale_the_robot_cannot_honour_naming_the_field():
    from internutopia.core.vec_env import Env
    from internutopia_extension.configs.robots.h1 import H1RobotCfg
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    config = Config(task_configs=[SingleInferenceTaskCfg(robots=[H1RobotCfg()]),
                                  SingleInferenceTaskCfg(robots=[H1RobotCfg(scale=(2.0, 2.0, 2.0))])])
    with pytest.raises(ValueError, match=r'task_configs\[1\]\.robots\[0\]\.scale: \(2\.0, 2\.0, 2\.0\) cannot be '
                                         r'honoured: H1Robot does not scale its model'):
        Env(config)


def test_a_jetbot_scale_must_be_uniform():
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg

    with pytest.raises(ValidationError) as excinfo:
        JetbotRobotCfg(scale=(1.0, 2.0, 1.0))
    loc, message = one_error(excinfo)
    assert loc == 'scale' and 'scales uniformly only' in message
    assert JetbotRobotCfg(scale=(2.0, 2.0, 2.0)).scale == (2.0, 2.0, 2.0)


@pytest.mark.parametrize('robot, message', [
    ('{type: H1Robot, scale: [2.0, 2.0, 2.0]}',
     ':4: task_configs[0].robots[0].scale: (2.0, 2.0, 2.0) cannot be honoured: H1Robot does not scale its model'),
    ('{type: JetbotRobot, scale: [1.0, 2.0, 1.0]}', ':4: task_configs[0].robots[0].scale: a Jetbot scales uniformly only'),
    ('{type: JetbotRobot, sensors: [{type: RepCamera, name: camera, prim_path: no_such_body/Cam}]}',
     ":4: task_configs[0].robots[0].sensors[0].prim_path: camera 'camera' of robot 'jetbot': prim_path "
     "'no_such_body/Cam' must be '<body>/<camera>' with a body of the robot; bodies: ['chassis', 'left_wheel', "
     "'right_wheel']"),
])
def test_validate_fails_where_the_first_reset_would(tmp_path, capsys, robot, message):
    path = write(tmp_path, f'''\
        task_configs:
          - type: SingleInferenceTask
            robots:
              - {robot}
        ''')
    status, out = validate(capsys, path)
    assert status == cli.EXIT_ERROR and f'{path}{message}' in out, out


def test_a_camera_on_a_body_of_the_robot_validates(tmp_path, capsys):
    path = write(tmp_path, '''\
        task_configs:
          - type: SingleInferenceTask
            robots:
              - {type: JetbotRobot, sensors: [{type: RepCamera, name: camera, prim_path: chassis/Cam}]}
        ''')
    assert validate(capsys, path)[0] == cli.EXIT_OK


# -- 6: built-in metric options --------------------------------------------------------------------------
def test_a_metric_option_of_the_wrong_value_fails_at_construction_naming_it():
    from internutopia.core.config import MetricCfg
    from internutopia_extension.configs.metrics import CollisionCountMetricCfg

    with pytest.raises(ValidationError) as excinfo:
        CollisionCountMetricCfg(metric_config={'release_steps': 0})
    loc, message = one_error(excinfo)
    assert loc == 'metric_config.release_steps' and 'release_steps must be a number of env steps in 1..' in message
    with pytest.raises(ValidationError, match='must be an integer'):  # a plain MetricCfg of that type too
        MetricCfg(type='CollisionCountMetric', metric_config={'release_steps': 'x'})
    assert CollisionCountMetricCfg(metric_config={'release_steps': 3}).metric_config == {'release_steps': 3}


def test_an_unknown_metric_option_follows_the_unknown_key_policy():
    from internutopia.core.config import MetricCfg
    from internutopia_extension.configs.metrics import SuccessMetricCfg

    with pytest.warns(UnknownConfigKeyWarning, match="unknown key 'robot_nmae' .*: kept in metric_config, .*nearest known key: 'robot_name'"):
        cfg = SuccessMetricCfg(metric_config={'robot_nmae': 'jetbot'})
    assert cfg.metric_config == {'robot_nmae': 'jetbot'}  # kept, as upstream's free dict keeps it
    with strict_config(), pytest.raises(ValidationError) as excinfo:
        SuccessMetricCfg(metric_config={'robot_nmae': 'jetbot'})
    loc, message = one_error(excinfo)
    assert loc == 'metric_config.robot_nmae' and "did you mean 'robot_name'?" in message
    assert MetricCfg(type='MyMetric', metric_config={'anything': 1}).metric_config == {'anything': 1}  # free


def test_validate_names_metric_option_problems_at_their_lines(tmp_path, capsys):
    path = write(tmp_path, '''\
        task_configs:
          - type: PointNavTask
            goal: [1.0, 0.0, 0.0]
            robots:
              - type: JetbotRobot
            metrics:
              - type: CollisionCountMetric
                name: collisions
                metric_config: {release_steps: 0}
              - type: SuccessMetric
                name: success
                metric_config: {robot_nmae: jetbot}
        ''')
    status, out = validate(capsys, path)
    assert status == cli.EXIT_ERROR
    assert f'{path}:9: task_configs[0].metrics[0].metric_config.release_steps: release_steps must be' in out
    assert (f"{path}:12: task_configs[0].metrics[1].metric_config.robot_nmae: unknown field 'robot_nmae' of "
            "NavigationMetricOptions; did you mean 'robot_name'?") in out


# -- 7: YAML 1.2 floats -----------------------------------------------------------------------------------
def test_yaml_reads_exponent_floats_as_numbers(tmp_path, capsys):
    import yaml

    path = write(tmp_path, '''\
        env_offset_size: 1e1
        simulator:
          physics_dt: 5e-3
        task_configs:
          - type: PointNavTask
            goal: [1.0, 0.0, 0.0]
            success_distance: 5e-1
            robots:
              - type: JetbotRobot
        ''')
    config = Config.from_yaml(path)
    assert (config.env_offset_size, config.simulator.physics_dt, config.task_configs[0].success_distance) == (10.0, 0.005, 0.5)
    assert validate(capsys, path)[0] == cli.EXIT_OK
    assert validate(capsys, path, '--set', 'env_offset_size=2e1')[0] == cli.EXIT_OK
    assert yaml.safe_load('x: 1e1') == {'x': '1e1'}  # PyYAML's own loader is left as it is


# -- 8: reward_type ---------------------------------------------------------------------------------------
def test_reward_type_and_type_change_together():
    reward = RewardCfg(reward_type='Progress', reward_settings={'scale': 1.0})
    changed = reward.update(reward_type='Other')
    assert (changed.type, changed.reward_type) == ('Other', 'Other') and reward.type == 'Progress'
    assert RewardCfg(type='Progress').update(type='Other').reward_type == 'Other'
    reward.reward_type = 'Other'
    assert (reward.type, reward.reward_type) == ('Other', 'Other')
    reward.type = 'Third'
    assert reward.reward_type == 'Third'
    with pytest.raises(ValidationError):
        reward.reward_type = 5  # type: ignore[assignment]
    assert (reward.type, reward.reward_type) == ('Third', 'Third')
    with pytest.raises(ValidationError, match='name the same thing'):
        reward.update(type='A', reward_type='B')


# -- 9: --set reporting -----------------------------------------------------------------------------------
OV = '''\
    env_num: 1
    task_configs:
      - type: PointNavTask
        goal: [1.0, 0.0, 0.0]
        robots:
          - type: JetbotRobot
            position: [0.0, 0.0, 0.0]
        metrics:
          - type: SuccessMetric
            name: success
    '''


def test_a_bad_override_is_reported_as_the_override(tmp_path, capsys):
    path = write(tmp_path, OV)
    status, out = validate(capsys, path, '--set', 'simulator.physics_dt=0', '--set', 'task_configs.0.robots.0.position=[1, 2]')
    assert status == cli.EXIT_ERROR
    assert f'{path}: --set simulator.physics_dt=0: simulator.physics_dt: physics_dt must be' in out  # no line: not in the file
    assert (f'{path}:7: --set task_configs.0.robots.0.position=[1, 2]: task_configs[0].robots[0].position: position '
            'must be 3 numbers (x, y, z); got 2') in out  # the line of the value it replaced


def test_an_index_into_a_list_the_file_leaves_out_says_to_set_the_list(tmp_path, capsys):
    path = write(tmp_path, OV)
    status, out = validate(capsys, path, '--set', 'task_configs.0.robots.0.controllers.0.threshold=0.1')
    assert status == cli.EXIT_ERROR
    assert ('task_configs.0.robots.0.controllers is not in the file, so it has no entry 0; set the whole list instead, '
            'e.g. --set task_configs.0.robots.0.controllers=[...]') in out


def test_metric_options_and_free_dicts_take_their_keys_by_set(tmp_path, capsys):
    path = write(tmp_path, OV)
    assert validate(capsys, path, '--set', 'task_configs.0.metrics.0.metric_config.robot_name=jetbot')[0] == cli.EXIT_OK
    status, out = validate(capsys, path, '--set', 'task_configs.0.metrics.0.metric_config.robot_nmae=jetbot')
    assert status == cli.EXIT_ERROR
    assert "unknown key 'robot_nmae' at task_configs.0.metrics.0.metric_config; valid keys: robot_name" in out
    from internutopia.cli.overrides import apply_overrides

    data = {'task_configs': [{'type': 'FiniteStepTask', 'metrics': [{'type': 'MyMetric'}]}]}
    changed = apply_overrides(data, ['task_configs.0.metrics.0.metric_config.anything=1'])  # a free dict: any key
    assert changed['task_configs'][0]['metrics'][0]['metric_config'] == {'anything': 1}


# -- 10: tuple lengths -------------------------------------------------------------------------------------
def test_a_wrong_tuple_length_says_how_many_numbers(tmp_path, capsys):
    path = write(tmp_path, '''\
        task_configs:
          - type: SingleInferenceTask
            robots:
              - type: JetbotRobot
                position: [1.0, 2.0]
                orientation: [1.0, 0.0, 0.0, 0.0, 0.0]
        ''')
    status, out = validate(capsys, path)
    assert status == cli.EXIT_ERROR
    assert f'{path}:5: task_configs[0].robots[0].position: position must be 3 numbers (x, y, z); got 2: [1.0, 2.0]' in out
    assert f'{path}:6: task_configs[0].robots[0].orientation: orientation must be 4 numbers (w, x, y, z); got 5' in out
    with pytest.raises(ValidationError, match=r'scale must be 3 numbers \(x, y, z\); got 1'):
        RobotCfg(name='r', type='X', scale=[1.0])


# -- 11: an empty episode list ----------------------------------------------------------------------------
@pytest.mark.parametrize('episodes', [[], ()])
def test_env_refuses_an_empty_episode_list(episodes):
    from internutopia.core.vec_env import Env
    from internutopia_extension.configs.tasks import FiniteStepTaskCfg

    with pytest.raises(ValueError, match='episodes must hold at least one TaskCfg'):
        Env(Config(task_configs=[FiniteStepTaskCfg(max_steps=5)]), episodes=episodes)


# -- the contract note -----------------------------------------------------------------------------------
def test_scene_orientation_is_noted_as_a_difference():
    from internutopia.compat.notes import IMPROVED, status_of

    status, note = status_of('internutopia.core.config.task.TaskCfg.scene_orientation')
    assert status == IMPROVED and 'never reads it' in note
