"""Unknown config keys: accepted where InternUtopia accepts them (ignored, or kept as attributes),
each with a warning naming it and the nearest declared key; errors in strict mode and in
``internutopia validate``."""

from __future__ import annotations

import textwrap
import warnings

import pytest
from pydantic import ValidationError

from internutopia import cli
from internutopia.core.config import (
    Config,
    ControllerCfg,
    MetricCfg,
    ObjectCfg,
    RayDistributionCfg,
    RewardCfg,
    RobotCfg,
    SensorCfg,
    SimConfig,
    TaskCfg,
    UnknownConfigKeyWarning,
    set_strict_config,
    strict_config,
)
from internutopia.core.config.unknown_keys import STRICT_ENV
from internutopia_extension.configs.controllers import DifferentialDriveControllerCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

#: (class, its required fields): InternUtopia keeps unknown keys of these classes as attributes ...
KEEPING = [(ControllerCfg, {'name': 'c', 'type': 'X'}), (TaskCfg, {'type': 'X'}), (RewardCfg, {'type': 'X'}),
           (RayDistributionCfg, {})]
#: ... and ignores them on these (pydantic's default there).
IGNORING = [(SimConfig, {}), (RobotCfg, {'name': 'r', 'type': 'X'}), (SensorCfg, {'name': 's', 'type': 'X'}),
            (ObjectCfg, {'name': 'o', 'type': 'X'}), (MetricCfg, {'type': 'X'}),
            (Config, {'task_configs': [FiniteStepTaskCfg()]})]


@pytest.fixture(autouse=True)
def _no_process_setting(monkeypatch):
    monkeypatch.delenv(STRICT_ENV, raising=False)
    yield
    set_strict_config(None)


def _warnings_of(build):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        result = build()
    return result, [w for w in caught if issubclass(w.category, UnknownConfigKeyWarning)]


@pytest.mark.parametrize('cls, required', KEEPING)
def test_classes_that_keep_unknown_keys_keep_them_as_attributes_with_a_warning(cls, required):
    cfg, caught = _warnings_of(lambda: cls(**required, steps_per_action=4))
    assert cfg.steps_per_action == 4 and cfg.model_extra == {'steps_per_action': 4}
    assert len(caught) == 1
    text = str(caught[0].message)
    assert f"unknown key 'steps_per_action' of {cls.__name__}: kept as an attribute" in text
    assert 'nearest known key: ' in text and STRICT_ENV in text
    assert caught[0].filename == __file__  # it points at the line that built the config


@pytest.mark.parametrize('cls, required', IGNORING)
def test_classes_that_ignore_unknown_keys_drop_them_with_a_warning(cls, required):
    cfg, caught = _warnings_of(lambda: cls(**required, rank=0))
    assert not hasattr(cfg, 'rank') and not cfg.model_extra
    assert [str(w.message).split(':')[0] for w in caught] == [f"unknown key 'rank' of {cls.__name__}"]
    assert 'ignored, as InternUtopia ignores it' in str(caught[0].message)
    with pytest.raises(ValueError, match='rank'):  # as there: setting an undeclared attribute fails
        cfg.rank = 1


def test_internnav_style_configs_build_with_one_warning_per_key_and_the_nearest_key():
    sim, caught = _warnings_of(lambda: SimConfig(physics_dt=1 / 240, rank=0, local_rank=0, world_size=1))
    assert sim.physics_dt == pytest.approx(1 / 240)
    assert [str(w.message).split(':')[0] for w in caught] == [
        "unknown key 'rank' of SimConfig", "unknown key 'local_rank' of SimConfig", "unknown key 'world_size' of SimConfig"]
    controller, _ = _warnings_of(lambda: ControllerCfg(**{'name': 'move', 'type': 'Nav', 'steps_per_action': 3}))
    assert controller.steps_per_action == 3
    task, caught = _warnings_of(lambda: FiniteStepTaskCfg(env_num=2, offset_size=5.0, proc_num=1, max_stepz=3))
    assert (task.env_num, task.offset_size, task.proc_num, task.max_stepz) == (2, 5.0, 1, 3)
    assert "nearest known key: 'max_steps'" in str(caught[-1].message)


def test_nested_mappings_are_reported_against_their_own_class():
    data = {'task_configs': [{'type': 'FiniteStepTask', 'robots': [
        {'type': 'JetbotRobot', 'name': 'j', 'positon': [0, 0, 0],
         'controllers': [{'type': 'DifferentialDriveController', 'name': 'move_by_speed', 'wheel_base': 0.1,
                          'wheel_radius': 0.03, 'top_speed': 2}]}]}]}
    config, caught = _warnings_of(lambda: Config.model_validate(data))
    robot = config.task_configs[0].robots[0]
    assert type(robot) is JetbotRobotCfg and robot.position == JetbotRobotCfg().position  # ignored
    assert robot.controllers[0].top_speed == 2  # kept by a controller
    messages = [str(w.message) for w in caught]
    assert any("'positon' of JetbotRobotCfg: ignored" in m and "nearest known key: 'position'" in m for m in messages)
    assert any("'top_speed' of DifferentialDriveControllerCfg: kept" in m for m in messages)
    with strict_config(), pytest.raises(ValidationError) as error:
        Config.model_validate(data)
    locs = {tuple(e['loc']) for e in error.value.errors()}
    assert locs == {('task_configs', 0, 'robots', 0, 'positon'),
                    ('task_configs', 0, 'robots', 0, 'controllers', 0, 'top_speed')}


def test_strict_mode_by_context_by_function_and_by_environment(monkeypatch):
    def build():
        return DifferentialDriveControllerCfg(name='m', wheel_base=0.1, wheel_radius=0.03, wheel_radus=0.03)

    with strict_config(), pytest.raises(ValidationError, match=r"unknown field 'wheel_radus' of DifferentialDriveControllerCfg; "
                                                              r"did you mean 'wheel_radius', 'wheel_base'\? valid fields: \["):
        build()
    set_strict_config(True)
    with pytest.raises(ValidationError, match='wheel_radus'):
        build()
    with strict_config(False), pytest.warns(UnknownConfigKeyWarning, match="nearest known key: 'wheel_radius' "):
        assert build().wheel_radus == 0.03  # a block can relax the process setting
    set_strict_config(None)
    monkeypatch.setenv(STRICT_ENV, '1')
    with pytest.raises(ValidationError, match='wheel_radus'):
        build()
    monkeypatch.setenv(STRICT_ENV, '0')
    with pytest.warns(UnknownConfigKeyWarning):
        build()
    with pytest.raises(TypeError, match='True, False or None'):
        set_strict_config('yes')  # type: ignore[arg-type]


def test_strict_mode_reports_unknown_keys_and_bad_values_together():
    with strict_config(), pytest.raises(ValidationError) as error:
        SimConfig(physcs_dt=0.01, rendering_dt=-1)
    assert {e['loc'] for e in error.value.errors()} == {('physcs_dt',), ('rendering_dt',)}


def test_update_keeps_what_was_kept_and_reports_only_new_keys():
    controller, _ = _warnings_of(lambda: ControllerCfg(name='c', type='X', steps_per_action=4))
    renamed, caught = _warnings_of(lambda: controller.update(name='d'))
    assert renamed.name == 'd' and renamed.steps_per_action == 4 and caught == []
    more, caught = _warnings_of(lambda: renamed.update(horizon=8))
    assert more.horizon == 8 and len(caught) == 1 and "'horizon' of ControllerCfg" in str(caught[0].message)
    assert controller.name == 'c' and not hasattr(controller, 'horizon')  # the original is untouched
    with strict_config(), pytest.raises(ValidationError, match="unknown field 'horizn' of ControllerCfg"):
        controller.update(horizn=8)


def test_unknown_keys_do_not_hide_type_dispatch():
    # A mapping of a registered type validates as that type's class, so its own fields are known.
    data = {'type': 'DifferentialDriveController', 'name': 'm', 'wheel_base': 0.1, 'wheel_radius': 0.03}
    cfg, caught = _warnings_of(lambda: ControllerCfg.model_validate(data))
    assert type(cfg) is DifferentialDriveControllerCfg and caught == []


def test_a_typed_class_built_by_name_points_at_its_types_own_config_class():
    # MetricCfg(type='RecordingMetric', robot_name=...) stays a MetricCfg and drops robot_name: the
    # warning (and strict mode's error) says which class declares it, not the nearest key ('name').
    from internutopia_extension.configs.metrics import RecordingMetricCfg

    cfg, caught = _warnings_of(lambda: MetricCfg(type='RecordingMetric', robot_name='h1', speed=2))
    assert type(cfg) is MetricCfg and len(caught) == 2
    robot_name, speed = (str(w.message) for w in caught)
    assert "unknown key 'robot_name' of MetricCfg: ignored" in robot_name
    assert ("it is a field of RecordingMetricCfg, the config class of type 'RecordingMetric': build "
            f"RecordingMetricCfg(...) (from {RecordingMetricCfg.__module__})") in robot_name
    assert 'nearest known key' not in robot_name
    assert 'nearest known key' in speed and 'RecordingMetricCfg' not in speed  # not its field
    with strict_config(), pytest.raises(ValidationError) as raised:
        MetricCfg(type='RecordingMetric', robot_name='h1')
    assert "unknown field 'robot_name' of MetricCfg; it is a field of RecordingMetricCfg" in str(raised.value)
    # The type's own class takes it.
    assert RecordingMetricCfg(robot_name='h1').robot_name == 'h1'


def write(tmp_path, text):
    path = tmp_path / 'c.yaml'
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_validate_reports_unknown_keys_as_errors_while_from_yaml_warns_with_the_line(tmp_path, capsys):
    path = write(tmp_path, """\
        env_num: 1
        rank: 0
        task_configs:
          - type: FiniteStepTask
            proc_num: 2
            robots:
              - type: JetbotRobot
                name: jetbot
        """)
    assert cli.main(['validate', path]) == cli.EXIT_ERROR
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{path}:2: rank: unknown field 'rank' of Config; did you mean")
    assert err[1].startswith(f"{path}:5: task_configs[0].proc_num: unknown field 'proc_num' of FiniteStepTaskCfg")
    with pytest.warns(UnknownConfigKeyWarning) as caught:
        config = Config.from_yaml(path)
    assert config.task_configs[0].proc_num == 2
    assert [str(w.message).split(' unknown')[0] for w in caught] == [f'{path}:2: rank:', f'{path}:5: task_configs[0].proc_num:']
    assert caught[0].filename == __file__


def test_update_reports_unknown_keys_of_the_mappings_it_is_given():
    task = FiniteStepTaskCfg()
    with pytest.warns(UnknownConfigKeyWarning, match="'positon' of JetbotRobotCfg"):
        task.update(robots=[{'type': 'JetbotRobot', 'name': 'j', 'positon': [1, 0, 0]}])
    with strict_config(), pytest.raises(ValidationError, match=r"robots\.0\.positon"):
        task.update(robots=[{'type': 'JetbotRobot', 'name': 'j', 'positon': [1, 0, 0]}])
