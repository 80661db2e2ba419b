"""Config: checked fields, unknown keys reported, validated update, YAML round-trip, registries."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from internutopia.core.config import (
    Config,
    ConfigFileError,
    ControllerCfg,
    RobotCfg,
    SensorCfg,
    SimConfig,
    TaskCfg,
    UnknownConfigKeyWarning,
    strict_config,
)
from internutopia.core.robot.base import BaseRobot
from internutopia_extension.configs.robots.h1 import (
    H1RobotCfg,
    h1_camera_cfg,
    h1_tp_camera_cfg,
    move_along_path_cfg,
    move_by_speed_cfg,
    rotate_cfg,
)
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.sensors import RepCameraCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg, PointNavTaskCfg, SingleInferenceTaskCfg


def test_defaults_follow_internutopia():
    sim = SimConfig()
    assert sim.physics_dt == pytest.approx(1 / 60) and sim.rendering_dt == pytest.approx(1 / 60) and sim.rendering_interval is None and sim.backend == 'mujoco'
    config = Config(task_configs=[SingleInferenceTaskCfg()])
    assert config.env_num == 1 and config.metrics_save_path == 'console'
    assert SensorCfg(name='s', type='RepCamera').enable is True
    assert ControllerCfg(name='c', type='X').sub_controllers is None
    assert H1RobotCfg().name == 'h1' and H1RobotCfg().type == 'H1Robot'


@pytest.mark.parametrize('cls, kwargs, field', [
    (SimConfig, {'physcs_dt': 0.01}, 'physcs_dt'),
    (RepCameraCfg, {'name': 'c', 'enabled': False}, 'enabled'),
    (TaskCfg, {'type': 'X', 'scene_path': 'a'}, 'scene_path'),
    (RobotCfg, {'name': 'r', 'type': 'X', 'pos': (0, 0, 0)}, 'pos'),
])
def test_unknown_fields_are_errors_in_strict_mode(cls, kwargs, field):
    with strict_config(), pytest.raises(ValidationError, match=rf"unknown field '{field}' of {cls.__name__}; did you mean"):
        cls(**kwargs)
    with pytest.warns(UnknownConfigKeyWarning, match=rf"unknown key '{field}' of {cls.__name__}"):
        cls(**kwargs)


def test_update_returns_validated_copy_and_reports_unknown_keys():
    camera = h1_camera_cfg.update(name='camera', resolution=(320, 240), enable=False)
    assert camera.enable is False and camera.resolution == (320, 240)
    assert h1_camera_cfg.enable is True and h1_camera_cfg.resolution == (640, 480)
    with pytest.warns(UnknownConfigKeyWarning, match=r"unknown key 'enabel' of RepCameraCfg: ignored.*nearest known key: 'enable'"):
        ignored = h1_camera_cfg.update(enabel=False)
    assert ignored.enable is True and not hasattr(ignored, 'enabel')
    with strict_config(), pytest.raises(ValidationError, match=r"unknown field 'enabel' of RepCameraCfg; did you mean 'enable'"):
        h1_camera_cfg.update(enabel=False)
    with pytest.raises(ValidationError):
        h1_camera_cfg.update(resolution='big')


@pytest.mark.parametrize('kwargs, field', [
    ({'env_num': 0}, 'env_num'),
    ({'task_configs': []}, 'task_configs'),
    ({'env_offset_size': 0}, 'env_offset_size'),
    ({'env_offset_size': -3}, 'env_offset_size'),
    ({'simulator': {'physics_dt': 0}}, 'physics_dt'),
    ({'simulator': {'rendering_dt': -1}}, 'rendering_dt'),
])
def test_invalid_values_name_the_field(kwargs, field):
    kwargs.setdefault('task_configs', [SingleInferenceTaskCfg()])
    with pytest.raises(ValidationError, match=field):
        Config(**kwargs)


_NAN, _INF = float('nan'), float('inf')


@pytest.mark.parametrize('build, field, message', [
    # Step lengths: finite, > 0, a number or a fraction string; never a bool.
    (lambda: SimConfig(physics_dt=_INF), 'physics_dt', 'finite number of seconds'),
    (lambda: SimConfig(physics_dt='1/'), 'physics_dt', 'fraction like'),
    (lambda: SimConfig(physics_dt='1/0'), 'physics_dt', 'fraction like'),
    (lambda: SimConfig(physics_dt=True), 'physics_dt', 'fraction like'),
    (lambda: SimConfig(rendering_dt=_NAN), 'rendering_dt', 'finite'),
    (lambda: SimConfig(rendering_interval=True), 'rendering_interval', 'integer; got the bool'),
    (lambda: SimConfig(rendering_interval=-1), 'rendering_interval', '0..1_000_000_000'),
    # Counts: integers, not bools or text that pydantic would coerce.
    (lambda: Config(env_num=True, task_configs=[SingleInferenceTaskCfg()]), 'env_num', 'integer; got the bool'),
    (lambda: Config(env_num='8', task_configs=[SingleInferenceTaskCfg()]), 'env_num', "integer; got the text '8'"),
    (lambda: Config(env_offset_size=_INF, task_configs=[SingleInferenceTaskCfg()]), 'env_offset_size', 'finite'),
    (lambda: FiniteStepTaskCfg(max_steps=0), 'max_steps', '1..1_000_000_000'),
    (lambda: FiniteStepTaskCfg(max_steps=-5), 'max_steps', '1..1_000_000_000'),
    (lambda: FiniteStepTaskCfg(max_steps=2.5), 'max_steps', 'integer'),
    # Poses and scales: finite; quaternions not all zeros; scales > 0.
    (lambda: JetbotRobotCfg(position=(_NAN, 0.0, 0.0)), 'position', 'finite'),
    (lambda: JetbotRobotCfg(position=(0.0, _INF, 0.0)), 'position', 'finite'),
    (lambda: JetbotRobotCfg(position=('1', 0.0, 0.0)), 'position', 'text'),
    (lambda: JetbotRobotCfg(orientation=(0.0, 0.0, 0.0, 0.0)), 'orientation', 'all zeros'),
    (lambda: JetbotRobotCfg(scale=(1.0, 0.0, 1.0)), 'scale', '> 0'),
    (lambda: TaskCfg(type='X', scene_scale=(1.0, 1.0, -1.0)), 'scene_scale', '> 0'),
    (lambda: TaskCfg(type='X', scene_orientation=(0.0, 0.0, 0.0, 0.0)), 'scene_orientation', 'all zeros'),
    (lambda: TaskCfg(type='X', scene_position=(0.0, 0.0, _NAN)), 'scene_position', 'finite'),
    (lambda: PointNavTaskCfg(goal=(_INF, 0.0, 0.0), robots=[JetbotRobotCfg()]), 'goal', 'finite'),
    (lambda: PointNavTaskCfg(goal=(0.0, 0.0, 0.0), success_distance=_NAN, robots=[JetbotRobotCfg()]), 'success_distance', 'finite'),
    (lambda: PointNavTaskCfg(goal=(1.0, 0.0, 0.0), robots=[JetbotRobotCfg()],
                             reward={'type': 'PointNavProgressReward', 'reward_settings': {'scale': _NAN}}), 'reward', 'finite'),
])
def test_bad_values_are_rejected_naming_the_field(build, field, message):
    with pytest.raises(ValidationError, match=field) as caught:
        build()
    assert message in str(caught.value)


def test_numbers_still_take_ints_numpy_scalars_and_lists():
    import numpy as np

    robot = JetbotRobotCfg(position=[1, np.float32(2.0), np.int64(0)], orientation=[1, 0, 0, 0])
    assert robot.position == (1.0, 2.0, 0.0) and robot.orientation == (1.0, 0.0, 0.0, 0.0)
    assert Config(env_num=np.int64(3), task_configs=[SingleInferenceTaskCfg()]).env_num == 3
    assert SimConfig(physics_dt=np.float32(0.01)).physics_dt == pytest.approx(0.01)


def test_assignment_is_checked_like_construction():
    robot = JetbotRobotCfg()
    with pytest.raises(ValidationError, match='position'):
        robot.position = (_NAN, 0.0, 0.0)
    assert robot.position == JetbotRobotCfg().position


def test_dt_accepts_fractions():
    assert SimConfig(physics_dt='1/200').physics_dt == pytest.approx(0.005)


def test_duplicate_robot_names_rejected():
    with pytest.raises(ValidationError, match='repeated'):
        TaskCfg(type='X', robots=[JetbotRobotCfg(), JetbotRobotCfg()])


def test_duplicate_controller_sensor_object_and_metric_names_are_rejected():
    """Two entries of one name used to replace each other silently (the last controller, sensor,
    object or metric of a name won; a robot and an object of one name failed in MuJoCo's compiler)."""
    from internutopia_extension.configs.metrics import TraveledDistanceMetricCfg
    from internutopia_extension.configs.objects import DynamicCubeCfg

    spin = rotate_cfg.update(name='move_by_speed')
    with pytest.raises(ValidationError, match=r"controllers\n.*controller names must be unique; repeated: \['move_by_speed'\]"):
        H1RobotCfg(controllers=[move_by_speed_cfg, spin])
    with pytest.raises(ValidationError, match=r"sensors\n.*sensor names must be unique; repeated: \['eye'\]"):
        JetbotRobotCfg(sensors=[RepCameraCfg(name='eye', resolution=(32, 24)), RepCameraCfg(name='eye', resolution=(64, 48))])
    cube = DynamicCubeCfg(name='crate', position=(1.5, -0.5, 0.1))
    with pytest.raises(ValidationError, match=r"objects\n.*object names must be unique; repeated: \['crate'\]"):
        FiniteStepTaskCfg(objects=[cube, cube.update(position=(2.5, 0.5, 0.1))])
    with pytest.raises(ValidationError, match=r"metrics\n.*metric names must be unique; repeated: \['odo'\]"):
        FiniteStepTaskCfg(metrics=[TraveledDistanceMetricCfg(name='odo'), TraveledDistanceMetricCfg(name='odo', robot_name='x')])
    with pytest.raises(ValidationError, match=r"must not share a name; shared: \['crate'\]"):
        FiniteStepTaskCfg(robots=[JetbotRobotCfg(name='crate')], objects=[cube])
    task = FiniteStepTaskCfg(robots=[JetbotRobotCfg()], objects=[cube])
    with pytest.raises(ValidationError, match='repeated'):  # on assignment too
        task.objects = [cube, cube]
    assert [o.name for o in task.objects] == ['crate']
    # different names (and no controllers or sensors at all) still pass
    assert JetbotRobotCfg(controllers=None, sensors=None).controllers is None
    assert len(FiniteStepTaskCfg(objects=[cube, cube.update(name='crate2')]).objects) == 2


def test_yaml_round_trip_is_exact(tmp_path):
    h1 = H1RobotCfg(position=(0.0, 0.0, 1.05), controllers=[move_by_speed_cfg, move_along_path_cfg, rotate_cfg],
                    sensors=[h1_camera_cfg.update(resolution=(320, 240), enable=False), h1_tp_camera_cfg])
    config = Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 60), env_num=3, env_offset_size=7.5,
                    task_configs=[SingleInferenceTaskCfg(robots=[h1], scene_scale=(0.01, 0.01, 0.01)),
                                  FiniteStepTaskCfg(max_steps=12, robots=[JetbotRobotCfg(position=(1.0, 2.0, 0.0))])])
    path = tmp_path / 'config.yaml'
    config.to_yaml(path)
    loaded = Config.from_yaml(path)
    assert loaded == config
    assert type(loaded.task_configs[1]) is FiniteStepTaskCfg
    assert type(loaded.task_configs[0].robots[0].controllers[1].sub_controllers[0]) is type(move_along_path_cfg.sub_controllers[0])
    assert loaded.model_dump_json() == config.model_dump_json()
    assert '"max_steps":12' in config.model_dump_json()


def test_from_yaml_rejects_bad_files(tmp_path):
    path = tmp_path / 'bad.yaml'
    path.write_text('- just\n- a list\n')
    with pytest.raises(ValueError, match='mapping'):
        Config.from_yaml(path)
    path.write_text('env_num: 2\ntask_configs:\n  - type: FiniteStepTask\n    max_step: 3\n')
    with strict_config(), pytest.raises(ConfigFileError, match=rf"{path}:4: task_configs\[0\].max_step: unknown field 'max_step' "
                                                              r"of FiniteStepTaskCfg; did you mean 'max_steps'"):
        Config.from_yaml(path)
    with pytest.warns(UnknownConfigKeyWarning, match=rf"{path}:4: task_configs\[0\].max_step: unknown key 'max_step' of "
                                                      r"FiniteStepTaskCfg: kept as an attribute.*nearest known key: 'max_steps'"):
        kept = Config.from_yaml(path)
    assert kept.task_configs[0].max_step == 3 and kept.task_configs[0].max_steps == 500


def test_registry_errors_list_registered_types():
    with pytest.raises(ValueError, match=r"unknown robot type 'Nope'.*registered robot types: \[.*'H1Robot'.*'JetbotRobot'"):
        BaseRobot.registry.get('Nope')


def test_user_config_never_mutated(make_config):
    from internutopia.core.vec_env import Env

    task = FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg(position=(0.5, 0.0, 0.0))])
    config = make_config([task, task, task], env_num=2)
    before = config.model_dump_json()
    env = Env(config)
    env.reset()
    for _ in range(3):
        env.step([{'jetbot': {'move_by_speed': [0.3, 0.0]}}] * 2)
    env.reset()
    env.close()
    assert config.model_dump_json() == before
    assert task.robots[0].position == (0.5, 0.0, 0.0) and task.robots[0].name == 'jetbot'


def test_rendering_interval_zero_renders_every_step():
    # InternUtopia's scripts pass rendering_interval=0, which renders on every step there.
    from internutopia.core.backend.mujoco.render.pack import RenderClock

    assert RenderClock.of(SimConfig(physics_dt=1 / 240, rendering_interval=0)).period == 1
