"""The benchmark tools' command lines (a defect hunt of their user surface, not their timings): bad
values are refused before anything starts, with an error naming the option and what it takes; an
empty or repeated list is refused; ``--json`` is strict JSON; Ctrl-C ends every process a tool
started, with one line instead of a traceback."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time

import pytest

from internutopia.bench import options
from tests.process_helpers import command_line

GYM_ID = 'internutopia/JetbotPointNav-v0'


def _refused(main, argv, capsys, *messages):
    """``main(argv)`` exits with status 2 before it measures anything; stderr says each of ``messages``."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    for message in messages:
        assert message in err, err


@pytest.fixture
def nothing_runs(monkeypatch):
    """Fail the test if a tool gets past its checks to a measurement."""
    from internutopia.bench import command, floor, fresh, gym_step, step_instructions, tree_ab

    def started(*args, **kwargs):
        pytest.fail('a measurement started')

    monkeypatch.setattr(command, 'run', started)
    monkeypatch.setattr(fresh, 'run_in_fresh_process', started)
    monkeypatch.setattr(floor, 'floor_rows', started)
    monkeypatch.setattr(floor, 'part_times', started)
    monkeypatch.setattr(gym_step, 'run_gym', started)
    monkeypatch.setattr(step_instructions, 'count', started)
    monkeypatch.setattr(tree_ab, 'measure_tree_ab', started)


@pytest.mark.parametrize('argv, messages', [
    (['--env-nums', ''], ['--env-nums is empty']),
    (['--env-nums', ',,'], ['--env-nums is empty']),
    (['--api', ''], ['--api is empty', 'dict, array']),
    (['--cameras', ''], ['--cameras is empty', 'off, on']),
    (['--robots', ''], ['--robots is empty', 'h1, h1_walking']),
    (['--robots', 'h1,h1'], ["--robots names 'h1' twice"]),
    (['--env-nums', '1,1'], ['--env-nums names 1 twice']),
    (['--api', 'dict,dict'], ["--api names 'dict' twice"]),
    (['--env-nums', '0'], ['--env-nums must be positive']),
    (['--env-nums', '-1'], ['--env-nums must be positive']),
    (['--env-nums', 'two'], ["'two' is not a comma-separated list of int values"]),
    (['--steps', '0'], ['--steps must be at least 1']),
    (['--steps', 'x'], ["--steps: invalid int value: 'x'"]),
    (['--robots', 'walle'], ["unknown robot 'walle'"]),
    (['--api', 'gym'], ['--api takes dict, array or dict,array']),
    (['--timeout', 'nan'], ['--timeout must be a positive number of seconds']),
    (['--timeout', '0'], ['--timeout must be a positive number of seconds']),
    (['--device', 'cuda:0'], ['--device cuda:0', 'needs --backend warp']),
    (['--backend', 'warp', '--device', 'gpu0'], ["--device takes cpu, cuda or cuda:N", "'gpu0'"]),
    (['--robots', '', '--gym', f'{GYM_ID},{GYM_ID}'], [f"--gym names '{GYM_ID}' twice"]),
])
def test_the_benchmark_refuses_bad_values_naming_the_option(argv, messages, capsys, nothing_runs):
    from internutopia.bench.command import main

    _refused(main, argv, capsys, *messages)


class _Asked(Exception):
    pass


def test_the_benchmark_takes_robots_empty_beside_gym_and_no_limit_as_inf(monkeypatch):
    from internutopia.bench import command

    asked = []

    def run(*args, **kwargs):
        asked.append((args, kwargs))
        raise _Asked

    monkeypatch.setattr(command, 'run', run)
    with pytest.raises(_Asked):
        command.main(['--robots', '', '--gym', GYM_ID, '--env-nums', '1', '--timeout', 'inf'])
    (args, kwargs), = asked
    assert args[0] == [] and kwargs['gym_ids'] == [GYM_ID] and math.isinf(kwargs['timeout_s'])


def test_an_interrupted_benchmark_says_so_in_one_line_and_exits_130(monkeypatch, capsys):
    from internutopia.bench import command, processes

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    ended = []
    monkeypatch.setattr(command, 'run', interrupted)
    monkeypatch.setattr(processes, 'kill_tracked', lambda: ended.append(True) or 0)
    assert command.main(['--robots', 'jetbot', '--env-nums', '1']) == 130
    assert capsys.readouterr().err.strip() == 'internutopia bench: interrupted; every process it had started was ended'
    assert ended


def _unmeasured(tool: str, monkeypatch: pytest.MonkeyPatch):
    """The module of bench tool ``tool``, its measurement failing the test if it starts."""
    import importlib

    module = importlib.import_module(f'internutopia.bench.{tool}')
    for measure in ('measure_handover', 'python_step_us', 'measure_staggered'):
        if hasattr(module, measure):
            monkeypatch.setattr(module, measure, lambda *a, **k: pytest.fail('a measurement started'))
    return module


@pytest.mark.parametrize('tool', ['floor', 'array_handover', 'profile_step', 'staggered'])
@pytest.mark.parametrize('argv, messages', [
    (['--robots', 'walle'], ["unknown robot 'walle' in --robots", 'jetbot']),
    (['--robots', ''], ['--robots is empty']),
    (['--robots', 'jetbot,jetbot'], ["--robots names 'jetbot' twice"]),
    (['--env-nums', 'x'], ['--env-nums takes comma-separated whole numbers', "'x'"]),
    (['--env-nums', '0'], ['--env-nums takes numbers of at least 1; got 0']),
    (['--env-nums', ''], ['--env-nums is empty']),
])
def test_the_tools_of_cases_and_slot_counts_refuse_bad_values_naming_the_option(tool, argv, messages, capsys, nothing_runs,
                                                                                monkeypatch):
    """The tools that take benchmark cases and slot counts read them with one helper
    (``options.checked_cases``). (array_handover and profile_step used to split the lists themselves: a traceback for
    ``--env-nums x``, a failure inside a measurement for an unknown robot.)"""
    module = _unmeasured(tool, monkeypatch)
    _refused(module.main, argv, capsys, f'python -m internutopia.bench.{tool}', *messages)


@pytest.mark.parametrize('tool, argv, message', [
    ('floor', ['--pairs', '0'], '--pairs must be at least 1'),
    ('floor', ['--chunk', '0'], '--chunk must be at least 1'),
    ('staggered', ['--groups', '9', '--env-nums', '4'], '--groups 9 is more than the slots of --env-nums 4'),
    ('staggered', ['--api', 'dict,tensor'], "unknown API 'tensor' in --api"),
    ('staggered', ['--pairs', '0'], '--pairs must be at least 1'),
    ('profile_step', ['--api', 'gym'], "unknown API 'gym' in --api"),
    ('profile_step', ['--blocks', '0'], '--blocks must be at least 1'),
    ('array_handover', ['--chunk', '0'], '--chunk must be at least 1'),
])
def test_the_tools_own_options_are_checked_too(tool, argv, message, capsys, nothing_runs, monkeypatch):
    module = _unmeasured(tool, monkeypatch)
    _refused(module.main, argv, capsys, message)


@pytest.mark.parametrize('argv, messages', [
    (['--ids', ''], ['--ids is empty']),
    (['--ids', f'{GYM_ID},{GYM_ID}'], [f"--ids names '{GYM_ID}' twice"]),
    (['--num-envs', 'x'], ['--num-envs takes comma-separated whole numbers']),
    (['--num-envs', '0'], ['--num-envs takes numbers of at least 1']),
    (['--pairs', '0'], ['--pairs must be at least 1']),
    (['--timeout', 'nan'], ['--timeout must be a positive number of seconds']),
    (['--phases', '--markdown'], ['--markdown prints the paired rows']),
])
def test_the_gym_step_tool_refuses_bad_values_naming_the_option(argv, messages, capsys, nothing_runs):
    from internutopia.bench import gym_step

    _refused(gym_step.main, ['--ids', GYM_ID, *argv] if argv[0] != '--ids' else argv, capsys,
             'python -m internutopia.bench.gym_step', *messages)


@pytest.mark.parametrize('argv, messages', [
    (['--api', 'foo'], ["unknown API 'foo' in --api; choose from dict, array"]),
    (['--api', ''], ['--api is empty']),
    (['--env-nums', 'x'], ['--env-nums takes comma-separated whole numbers']),
    (['--env-nums', '0'], ['--env-nums takes numbers of at least 1']),
    (['--calls', '0'], ['--calls must be at least 1']),
    (['--robots', 'jetbot,walle'], ["unknown robot 'walle'"]),  # (the second case too, before valgrind starts)
    (['--gym', 'internutopia/NoSuch-v0'], ["unknown Gymnasium id 'internutopia/NoSuch-v0'"]),
])
def test_instruction_counting_refuses_bad_values_before_valgrind_starts(argv, messages, capsys, nothing_runs):
    from internutopia.bench import step_instructions

    _refused(step_instructions.main, argv, capsys, 'python -m internutopia.bench.step_instructions', *messages)


def test_the_tree_comparison_refuses_bad_values_before_a_worker_starts(tmp_path, capsys, nothing_runs, monkeypatch):
    from internutopia.bench import tree_ab

    monkeypatch.setattr(tree_ab.subprocess, 'Popen', lambda *a, **k: pytest.fail('a worker started'))
    here = str(tree_ab.Path(tree_ab.__file__).resolve().parents[2])
    _refused(tree_ab.main, ['--before', str(tmp_path)], capsys, f'--before {tmp_path} is not a checkout of this project')
    _refused(tree_ab.main, ['--before', here, '--ids', 'internutopia/NoSuch-v0'], capsys,
             "unknown ids ['internutopia/NoSuch-v0'] in --ids")
    for option in ('--num-envs', '--pairs', '--steps'):
        _refused(tree_ab.main, ['--before', here, option, '0'], capsys, f'{option} must be at least 1')


def test_json_lines_are_strict_json_with_null_for_figures_that_are_no_number():
    line = options.json_line({'rows': [{'plain_physics_share': float('nan'), 'ratio': 0.5, 'limit': float('inf')}],
                              'load': (1.0, float('-inf'))})

    def refuse(constant):
        raise ValueError(constant)

    assert json.loads(line, parse_constant=refuse) == {'rows': [{'plain_physics_share': None, 'ratio': 0.5, 'limit': None}],
                                                       'load': [1.0, None]}


def test_gym_rows_without_a_plain_loop_print_n_a_and_strict_json(monkeypatch, capsys):
    """``--plain-steps 0`` leaves the plain loop's figures ``nan``: the line and the table say
    ``n/a`` and ``--json`` writes ``null`` (it wrote ``NaN``, which JSON readers refuse)."""
    from internutopia.bench import gym_step

    row = {'id': GYM_ID, 'num_envs': 1, 'action_repeat': 6, 'ratio': 0.3, 'ratio_q1': 0.2, 'ratio_q3': 0.4,
           'physics_share': 0.5, 'physics_share_q1': 0.4, 'physics_share_q3': 0.6, 'plain_physics_share': float('nan'),
           'plain_steps': 0, 'plain_env_steps_per_s': float('nan'), 'env_steps_per_s': 100.0,
           'limit_env_steps_per_s': 300.0, 'pairs': 2, 'chunk': 5, 'clean_pairs': 2}
    monkeypatch.setattr(gym_step, 'measure_gym', lambda *args, **kwargs: dict(row))
    gym_step.main(['--ids', GYM_ID, '--num-envs', '1', '--plain-steps', '0', '--markdown', '--json'])
    lines = capsys.readouterr().out.strip().splitlines()
    assert 'plain loop n/a' in lines[0] and any(line.startswith(f'| {GYM_ID} |') and '| n/a |' in line for line in lines)

    def refuse(constant):
        raise ValueError(constant)

    figures = json.loads(lines[-1], parse_constant=refuse)
    assert figures['rows'][0]['plain_physics_share'] is None and figures['rows'][0]['ratio'] == 0.3


def test_a_tools_ctrl_c_is_one_line_and_status_130(capsys):
    from internutopia.bench import processes

    def body():
        raise KeyboardInterrupt

    processes.track_pid(2 ** 22 + 7)  # (no such process: forgotten as it is ended)
    with pytest.raises(SystemExit) as exit_:
        options.interrupted('python -m internutopia.bench.floor', body)
    assert exit_.value.code == 130
    assert capsys.readouterr().err.strip() == 'python -m internutopia.bench.floor: interrupted; every process it had started was ended'
    assert processes.kill_tracked() == 0


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='reads the process tree from /proc')
def test_ctrl_c_of_the_floor_tool_leaves_no_process_and_no_traceback():
    """Ctrl-C (SIGINT to the tool's process group, as a terminal sends it) while its fresh process
    measures: exit status 130, one line, and nothing of the session left."""
    from internutopia.bench.processes import children_of

    tool = subprocess.Popen([sys.executable, '-m', 'internutopia.bench.floor', '--robots', 'jetbot', '--env-nums', '1',
                             '--pairs', '1000000'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=dict(os.environ, MUJOCO_GL=os.environ.get('MUJOCO_GL', 'egl')))
    try:
        seen: set[int] = set()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any('spawn_main' in command_line(pid) for pid in seen):
            seen.update(children_of(tool.pid))
            time.sleep(0.2)
        assert any('spawn_main' in command_line(pid) for pid in seen), 'the measurement never started'
        time.sleep(1.0)
        os.killpg(tool.pid, signal.SIGINT)
        out, err = tool.communicate(timeout=30)
    finally:
        if tool.poll() is None:
            os.killpg(tool.pid, signal.SIGKILL)
    assert tool.returncode == 130, err[-2000:]
    assert 'Traceback' not in err and 'interrupted; every process it had started was ended' in err
    deadline = time.monotonic() + 15
    while any(os.path.exists(f'/proc/{pid}') and 'Z' not in _state(pid) for pid in seen) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [pid for pid in seen if os.path.exists(f'/proc/{pid}') and 'Z' not in _state(pid)] == []


def _state(pid: int) -> str:
    try:
        with open(f'/proc/{pid}/stat', encoding='utf-8') as stream:
            return stream.read().rsplit(')', 1)[1].split()[0]
    except (OSError, IndexError):
        return ''
