"""YAML config files: duplicate keys, alias bombs, every problem of a file at once, and the same
``file:line`` quality from ``Config.from_yaml`` and ``internutopia validate``."""

from __future__ import annotations

import textwrap
import time
import tracemalloc

import pytest

from internutopia import cli
from internutopia.core.config import Config, ConfigFileError, strict_config
from internutopia.core.config.yaml_file import MAX_ALIAS_NODES


def write(tmp_path, text, name='c.yaml'):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def problems_of(path):
    with pytest.raises(ConfigFileError) as error:
        cli.load_config(path)
    return error.value.problems


def test_a_duplicate_key_is_an_error_with_both_lines(tmp_path):
    path = write(tmp_path, """\
        env_num: 2
        task_configs:
          - type: FiniteStepTask
            max_steps: 5
            robots:
              - {type: JetbotRobot, name: jetbot}
            max_steps: 50
        env_num: 3
        """)
    expected = [f"{path}:7: duplicate key 'max_steps' (first at line 4); give each key once",
                f"{path}:8: duplicate key 'env_num' (first at line 1); give each key once"]
    assert problems_of(path) == expected
    with pytest.raises(ConfigFileError) as error:
        Config.from_yaml(path)
    assert error.value.problems == expected
    assert isinstance(error.value, ValueError)


def test_merge_keys_and_aliases_that_repeat_a_part_are_fine(tmp_path):
    path = write(tmp_path, """\
        env_num: 2
        task_configs:
          - &episode
            type: FiniteStepTask
            max_steps: 5
            robots:
              - &jetbot {type: JetbotRobot, name: jetbot}
          - <<: *episode
            max_steps: 7
          - *episode
        """)
    config = cli.load_config(path)
    assert [t.max_steps for t in config.task_configs] == [5, 7, 5]
    assert Config.from_yaml(path) == config


@pytest.mark.parametrize('entry', ['cli', 'from_yaml'])
def test_an_alias_bomb_is_refused_before_expansion_fast_and_small(tmp_path, entry):
    # Nine levels of nine aliases: 9**9 (387 million) nodes once expanded, from 80 lines.
    lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x]']
    lines += [f'a{k}: &a{k} [' + ', '.join([f'*a{k - 1}'] * 9) + ']' for k in range(1, 9)]
    lines += ['env_num: *a8', 'task_configs: [{type: FiniteStepTask}]']
    path = write(tmp_path, '\n'.join(lines) + '\n')
    load = cli.load_config if entry == 'cli' else Config.from_yaml
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(ConfigFileError) as error:
        load(path)
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert error.value.problems[0].startswith(f'{path}:')
    assert f'aliases expand this file past {MAX_ALIAS_NODES:_} nodes' in error.value.problems[0]
    assert 'refused before expanding them' in error.value.problems[0]
    assert elapsed < 1.0 and peak < 50 * 2**20


def test_an_alias_that_contains_itself_is_refused(tmp_path):
    path = write(tmp_path, 'env_num: 1\nloop: &loop [1, *loop]\ntask_configs: [{type: FiniteStepTask}]\n')
    problems = problems_of(path)
    assert len(problems) == 1 and 'refers to a node that contains it' in problems[0]


def test_validate_reports_every_problem_of_a_file_sorted_by_line(tmp_path, capsys):
    path = write(tmp_path, """\
        env_num: 0
        simulator: {physcs_dt: 0.01}
        task_configs:
          - type: FiniteStepTask
            max_steps: -1
            scene_asset_path: nowhere/scene.xml
            robots:
              - {type: JetbotRobot, name: jetbot, positon: [0, 0, 0]}
          - type: FiniteStepTsk
            robots:
              - {type: JetbotRobot, name: jetbot}
              - {type: JetbotRobot, name: jetbot}
          - type: FiniteStepTask
            max_steps: 3
            max_steps: 4
        """)
    assert cli.main(['validate', path]) == cli.EXIT_ERROR
    err = capsys.readouterr().err.splitlines()
    lines = [int(line.split(':')[1]) for line in err]
    assert lines == sorted(lines)
    text = '\n'.join(err)
    for expected in ('1: env_num: env_num must be >= 1',
                     "2: simulator.physcs_dt: unknown field 'physcs_dt' of SimConfig; did you mean 'physics_dt'",
                     '5: task_configs[0].max_steps: max_steps must be a number of env steps in 1..1_000_000_000',
                     "6: task_configs[0].scene_asset_path: file not found: 'nowhere/scene.xml'",
                     "8: task_configs[0].robots[0].positon: unknown field 'positon' of JetbotRobotCfg; did you mean 'position'",
                     "9: task_configs[1].type: unknown task type 'FiniteStepTsk'",
                     "15: duplicate key 'max_steps' (first at line 14)"):
        assert f'{path}:{expected}' in text, expected
    assert "robot names must be unique; repeated: ['jetbot']" in text  # the second task's own error


def test_from_yaml_names_the_bad_key_line_and_nearest_fields(tmp_path):
    path = write(tmp_path, """\
        env_num: 1
        task_configs:
          - type: FiniteStepTask
            robots:
              - type: JetbotRobot
                name: jetbot
                controllers:
                  - {type: DifferentialDriveController, name: move_by_speed, wheel_base: 0.1, wheel_radis: 0.03}
        """)
    with strict_config(), pytest.raises(ConfigFileError) as error:
        Config.from_yaml(path)
    assert error.value.problems == [
        f"{path}:8: task_configs[0].robots[0].controllers[0].wheel_radis: unknown field 'wheel_radis' of "
        "DifferentialDriveControllerCfg; did you mean 'wheel_radius', 'wheel_base'? valid fields: "
        "['name', 'sub_controllers', 'type', 'wheel_base', 'wheel_radius']",
        f"{path}:8: task_configs[0].robots[0].controllers[0].wheel_radius: missing required field 'wheel_radius'"]
    assert problems_of(path)[0] == error.value.problems[0]  # the command says the same


@pytest.mark.parametrize('text, problem', [
    ('', '1: the file is empty'),
    ('- a list\n', '1: expected a mapping of Config fields at the top level'),
    ('env_num: [1\n', '2:1: YAML syntax error'),
    ('env_num: !!binary aGVsbG8=\ntask_configs: [{type: FiniteStepTask}]\n', "1: env_num: must be an integer; got the text b'hello'"),
])
def test_files_that_are_no_config(tmp_path, text, problem):
    path = write(tmp_path, text)
    with pytest.raises(ConfigFileError) as error:
        Config.from_yaml(path)
    assert error.value.problems[0].startswith(f'{path}:{problem}')


def test_the_validate_example_in_the_docs_is_what_validate_prints(tmp_path, capsys, monkeypatch):
    import os
    import re

    docs = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'docs', 'configs.md')
    with open(docs, encoding='utf-8') as stream:
        section = re.search(r'<!-- validate-example -->\n(.*?)<!-- /validate-example -->', stream.read(), flags=re.S)
    assert section, 'docs/configs.md lost its validate example'
    config, output = re.findall(r'```\w+\n(.*?)```', section.group(1), flags=re.S)
    (tmp_path / 'bad.yaml').write_text(config)
    monkeypatch.chdir(tmp_path)
    assert cli.main(['validate', 'bad.yaml']) == cli.EXIT_ERROR
    assert '$ internutopia validate bad.yaml\n' + capsys.readouterr().err == output


def test_every_registered_type_of_the_extension_loads_as_its_own_config_class():
    """A type written in YAML is validated as its config class, so its own fields are kept: every
    built-in type with a config class is known once the extension is imported (the two oracle
    controllers take the move_to_point / rotate configs, as in InternUtopia)."""
    from internutopia.core.config import ControllerCfg, MetricCfg, ObjectCfg, RobotCfg, SensorCfg, TaskCfg
    from internutopia.core.controller.base import BaseController
    from internutopia.core.metric.base import BaseMetric
    from internutopia.core.object.base import BaseObject
    from internutopia.core.robot.base import BaseRobot
    from internutopia.core.sensor.base import BaseSensor
    from internutopia.core.task.base import BaseTask
    from internutopia_extension import import_extensions

    import_extensions()
    families = [(BaseRobot, RobotCfg), (BaseController, ControllerCfg), (BaseSensor, SensorCfg), (BaseMetric, MetricCfg),
                (BaseTask, TaskCfg), (BaseObject, ObjectCfg)]
    # (the project's own types: other tests register classes of their own in the same process)
    missing = {cfg.__name__: [name for name in base.registry.names() if cfg.config_class_for(name) is None
                              and base.registry.get(name).__module__.startswith('internutopia')]
               for base, cfg in families}
    assert missing == {'RobotCfg': [], 'ControllerCfg': ['MoveToPointOracleController', 'RotateOracleController'],
                       'SensorCfg': [], 'MetricCfg': [], 'TaskCfg': [], 'ObjectCfg': []}


def test_a_mocap_franka_in_yaml_keeps_its_own_fields(tmp_path):
    path = write(tmp_path, """\
        env_num: 1
        task_configs:
          - type: SingleInferenceTask
            robots:
              - {type: MocapControlledFrankaRobot, name: arm, grip_force: 70.0}
        """)
    robot = cli.load_config(path).task_configs[0].robots[0]
    assert type(robot).__name__ == 'MocapControlledFrankaRobotCfg' and robot.grip_force == 70.0
    assert type(Config.from_yaml(path).task_configs[0].robots[0]).__name__ == 'MocapControlledFrankaRobotCfg'


@pytest.mark.parametrize('robot', ['GR1RobotCfg', 'H1WithHandRobotCfg'])
def test_a_config_written_by_to_yaml_runs_from_the_command_line(tmp_path, robot):
    """Their default ``usd_path`` is InternUtopia's Isaac asset (never read here: the built-in model
    is): ``to_yaml`` writes it as a package path and ``validate`` does not ask for the file."""
    import importlib

    module = importlib.import_module(f'internutopia_extension.configs.robots.{"gr1" if robot == "GR1RobotCfg" else "h1_with_hand"}')
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    path = str(tmp_path / 'robot.yaml')
    Config(task_configs=[SingleInferenceTaskCfg(robots=[getattr(module, robot)()])]).to_yaml(path)
    assert 'usd_path: package://internutopia/assets/robots/' in open(path).read()
    assert type(cli.load_config(path).task_configs[0].robots[0]).__name__ == robot
