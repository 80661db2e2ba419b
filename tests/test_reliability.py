"""Reliability: bad input never gets in, faults end only their own episode, nothing is lost.

Each test checks one promise of docs/reliability.md.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from internutopia.core.util import memory
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.h1 import H1RobotCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


def jetbot_task(max_steps: int = 5, **kw) -> FiniteStepTaskCfg:
    return FiniteStepTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg(**kw)])


# ------------------------------------------------------------------------------------------------
# memory: an env_num this machine cannot hold is refused before it is allocated
def test_an_env_num_beyond_the_machine_is_refused_naming_the_memory(make_config):
    with pytest.raises(ValueError, match=r'env_num=1000000000000 needs about \d+.* GiB .* available'):
        Env(make_config([jetbot_task()], env_num=10 ** 12))


def test_a_structure_too_big_for_the_memory_left_changes_nothing(make_config, monkeypatch):
    # Pretend 80 MB are free beyond what the compiled kernels' runtime will still take (nothing once
    # an earlier test loaded them, ~100 MB in a fresh process): the runner's bookkeeping for 100k
    # slots fits, an H1 pack does not.
    free = 80 * 2 ** 20 + memory.jit_runtime_bytes()
    monkeypatch.setattr(memory, 'available_bytes', lambda: free)
    with Env(make_config([FiniteStepTaskCfg(robots=[H1RobotCfg()])], env_num=100_000)) as env:
        with pytest.raises(ValueError, match='env_num=100000 needs about .* physics state'):
            env.reset([0])
        assert len(env.runner.queue) == 1 and env.active_slots == []


# ------------------------------------------------------------------------------------------------
# results: the path is checked when the env is built; a later write failure never leaves a slot
# half-finished; one file holds one run
@pytest.mark.parametrize('where', ['directory', 'under a file'])
def test_a_results_path_that_cannot_be_written_fails_when_the_env_is_built(make_config, tmp_path, where):
    path = tmp_path if where == 'directory' else tmp_path / 'plain.txt' / 'results.jsonl'
    (tmp_path / 'plain.txt').write_text('')
    with pytest.raises(ValueError, match=f"metrics_save_path '{path}'"):
        Env(make_config([jetbot_task()], metrics_save_path=str(path)))


@pytest.mark.skipif(not os.path.exists('/dev/full'), reason='needs /dev/full (Linux) to make writes fail')
def test_a_failing_write_still_ends_the_episode_once(make_config):
    with Env(make_config([jetbot_task(max_steps=2)] * 2, env_num=1, metrics_save_path='/dev/full')) as env:
        env.reset()
        env.step([None])
        with pytest.warns(RuntimeWarning, match="metrics_save_path '/dev/full': cannot write 1 episode record"):
            _, _, _, truncated, info = env.step([None])
        assert truncated == [True] and info[0]['metrics'] == {}  # the episode ended, its result returned
        assert env.step([None])[0] == [None]  # the slot is done, not finished again and again
        assert env.reset()[1][0] is not None  # and takes the next episode
        with pytest.warns(RuntimeWarning, match='could not be written'):
            env.close()


def test_a_second_run_starts_the_results_file_afresh(make_config, tmp_path):
    path = tmp_path / 'results.jsonl'
    for _ in range(2):
        with Env(make_config([jetbot_task(max_steps=1)] * 2, env_num=2, metrics_save_path=str(path))) as env:
            env.reset()
            env.step([None, None])
    assert sorted(json.loads(line)['episode_index'] for line in path.read_text().splitlines()) == [0, 1]


def test_a_results_file_another_open_env_writes_is_refused(make_config, tmp_path):
    """Two open envs on one path: the second used to empty the file under the first, and the
    first env's records were overwritten without a word. Now the second is refused; the first
    keeps every record; once it is closed (or dropped) the path can be used again."""
    import subprocess
    import sys

    path = tmp_path / 'shared.jsonl'
    first = Env(make_config([jetbot_task(max_steps=1)] * 2, env_num=2, metrics_save_path=str(path)))
    first.reset()
    first.step([None, None])
    with pytest.raises(ValueError, match=r"metrics_save_path '.*shared.jsonl' is being written by another env"):
        Env(make_config([jetbot_task(max_steps=1)], env_num=1, metrics_save_path=str(path)))
    # another process is refused too (the file is locked, not just remembered)
    probe = ('import sys; from internutopia.core.results import ResultsWriter\n'
             'try:\n    ResultsWriter(sys.argv[1])\nexcept ValueError as e:\n    print(e)')
    out = subprocess.run([sys.executable, '-c', probe, str(path)], capture_output=True, text=True, check=True).stdout
    assert 'being written by another env' in out
    first.close()
    assert sorted(json.loads(line)['slot'] for line in path.read_text().splitlines()) == [0, 1]
    # an env dropped without close() (a notebook cell run again) gives the file up when collected;
    # in a fresh interpreter, since this test's fixture keeps every env it builds alive
    again = ('import sys; from internutopia.core.config import Config; from internutopia.core.vec_env import Env\n'
             'from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg\n'
             'from internutopia_extension.configs.tasks import FiniteStepTaskCfg\n'
             'def build():\n'
             '    task = FiniteStepTaskCfg(max_steps=1, robots=[JetbotRobotCfg(position=(0.2, 0.3, 0.0))])\n'
             '    return Env(Config(env_num=1, metrics_save_path=sys.argv[1], task_configs=[task]))\n'
             'build().reset()\n'
             'env = build(); env.reset(); env.step([None]); env.close()')
    subprocess.run([sys.executable, '-c', again, str(path)], capture_output=True, text=True, check=True)
    assert [json.loads(line)['episode_index'] for line in path.read_text().splitlines()] == [0]


def test_records_are_not_kept_in_memory(make_config):
    with Env(make_config([jetbot_task(max_steps=1)] * 6, env_num=2)) as env:
        env.reset()
        for _ in range(3):
            env.step([None, None])
            env.reset()
        assert env.runner.results.summary()['episodes'] == 6 and env.runner.results.records == []


# ------------------------------------------------------------------------------------------------
# divergence ends only the diverging slot's episode
def _same_tree(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same_tree(a[k], b[k]) for k in a)
    return np.array_equal(np.asarray(a), np.asarray(b))


def _drive(make_config, tmp_path, name: str, fault_at: int | None):
    """Three jetbots driving; at step 6 slot 1 gets the next episode; ``fault_at``: the step on
    which slot 1's velocities are set to 1e30 (a blow-up), ``None`` for a clean run."""
    path = tmp_path / f'{name}.jsonl'
    tasks = [jetbot_task(max_steps=50, position=(0.1 * k, 0.0, 0.035)) for k in range(4)]
    action = {'jetbot': {'move_by_speed': [0.4, 0.8]}}
    trace = []
    with Env(make_config(tasks, env_num=3, metrics_save_path=str(path))) as env:
        env.reset()
        for k in range(10):
            if k == fault_at:
                env.runner.world.pack(1).data.qvel[1, :] = 1e30
            trace.append(env.step([action] * 3))
            if k == 6:
                trace.append(env.reset([1]))
    return trace, [json.loads(line) for line in path.read_text().splitlines()]


def test_a_diverging_slot_ends_its_own_episode_and_nothing_else(make_config, tmp_path):
    clean, clean_records = _drive(make_config, tmp_path, 'clean', None)
    faulty, records = _drive(make_config, tmp_path, 'faulty', 3)
    obs, reward, terminated, truncated, info = faulty[3]
    assert terminated[1] is True and truncated[1] is False and reward[1] == 0.0
    assert info[1]['diverged'] is True and 'metrics' in info[1] and 'diverged' not in info[0]
    assert all(step[0][1] is None for step in faulty[4:7])  # done until it is reset
    # (and the next episode it took, still running at the close: abandoned by it)
    assert [r.get('outcome') for r in records if r['slot'] == 1] == ['diverged', 'abandoned']
    assert [r.get('outcome') for r in clean_records if r['slot'] == 1] == ['abandoned'] * 2  # reset while running
    assert records[0]['terminated'] is True and records[0]['steps'] == 4
    # Every other slot, at every step, is bit-identical to the run without the fault; and the
    # episode slot 1 takes next starts from a clean state: bit-identical too.
    for step, (a, b) in enumerate(zip(clean, faulty, strict=True)):
        if step == 7:  # the reset([1]): slot 1's first observation of its next episode
            assert a[1][0] == b[1][0] and _same_tree(a[0][0], b[0][0])
            continue
        for slot in (0, 2) if step < 7 else (0, 1, 2):
            assert _same_tree(a[0][slot], b[0][slot]), (step, slot)
    assert faulty[-1][0][1] is not None


@pytest.mark.parametrize('api', ['dict', 'array'])
def test_a_diverged_point_nav_episode_is_scored_where_it_was_not_where_the_engine_put_it(make_config, api):
    # The engine puts a diverged slot back to its rest pose at the slot's origin; the goal is
    # there, 3 m from where the robot drove: scored from the rest pose it was a success (SPL 1).
    from internutopia_extension.configs.tasks import PointNavTaskCfg

    task = PointNavTaskCfg(goal=(0.0, 0.0, 0.0), success_distance=0.3, max_steps=50,
                           robots=[JetbotRobotCfg(position=(3.0, 0.0, 0.035))])
    drive = {'jetbot': {'move_by_speed': [0.2, 0.0]}}
    with Env(make_config([task] * 2, env_num=2)) as env:
        env.reset()
        for _ in range(2):
            env.step([drive] * 2)
        env.runner.world.pack(1).data.qvel[1, :] = 1e30
        if api == 'dict':
            _, _, terminated, _, info = env.step([drive] * 2)
            assert terminated[1] is True and info[1]['diverged'] is True
            metrics, other = info[1]['metrics'], info[0]
        else:
            out = env.step_arrays({'jetbot': {'move_by_speed': np.tile([0.2, 0.0], (2, 1))}})
            assert out.diverged == (1,) and bool(out.terminated[1])
            metrics, other = out.metrics[1], None
    assert metrics['success'] is False and metrics['spl'] == 0.0
    assert abs(metrics['distance_to_goal'] - 3.0) < 0.05  # (where it was after two steps; 0.0 from the rest pose)
    assert other is None or 'diverged' not in other


def test_a_runaway_command_ends_its_slot_with_the_divergence_flagged(make_config):
    # The case: a huge move_by_speed on an H1 blows its simulation up after a few steps
    # (with the controller's speed limit lifted: by default such a command is clamped to top speed).
    from internutopia_extension.configs.robots.h1 import move_by_speed_cfg

    unlimited = move_by_speed_cfg.update(max_linear_speed=1e9)
    # Carried: its base follows any speed (a walking H1's command is clipped to the trained range).
    task = FiniteStepTaskCfg(max_steps=60, robots=[H1RobotCfg(locomotion='carried', controllers=[unlimited])])
    runaway = {'h1': {'move_by_speed': [1e6, 0.0, 0.0]}}
    with Env(make_config([task] * 2, env_num=2)) as env, Env(make_config([task], env_num=1)) as alone:
        env.reset()
        alone.reset()
        for _ in range(50):
            obs, _, terminated, _, info = env.step([runaway, None])
            assert _same_tree(obs[1], alone.step([None])[0][0])  # the other slot never notices
            if terminated[0]:
                break
        assert terminated[0] is True and info[0]['diverged'] is True and info[0]['steps'] < 50
        assert env.active_slots == [1]
        out = env.step_arrays({'h1': {'move_by_speed': np.zeros((2, 3))}})
        assert out.diverged == () and bool(out.active[1]) and not out.active[0]


# ------------------------------------------------------------------------------------------------
# the env works on its own copy of the config
def test_later_edits_of_the_users_config_change_nothing(make_config):
    task = jetbot_task(max_steps=3)
    config = make_config([task, task, task], env_num=2)
    with Env(config) as env:
        config.env_num = 4
        config.task_configs.append(jetbot_task())
        task.robots[0].position = (9.0, 9.0, 0.035)
        config.simulator.physics_dt = 0.1
        obs, _ = env.reset()
        assert env.env_num == 2 and len(obs) == 2
        assert len(env.runner.queue) == 1 and env.config.env_num == 2 and env.config is not config
        assert obs[0]['jetbot']['position'][0] == pytest.approx(0.0, abs=1e-3)
        assert env.runner.world.sim.physics_dt == pytest.approx(1 / 240)
        assert len(env.step([None, None])[0]) == 2


# ------------------------------------------------------------------------------------------------
# bad actions and reset lists: a ValueError naming the slot and what is wrong; nothing moves
@pytest.mark.parametrize('args, message', [
    ([0.3, True], 'got the bool True'),
    (['0.3', 0.0], "got the text '0.3'"),
    ([0.3 + 1j, 0.0], 'got the complex number'),
    (np.array([True, False]), 'array of bools'),
    (np.array([1 + 0j, 0j]), 'array of complex numbers'),
    (True, 'got the bool True'),
])
def test_actions_are_numbers_not_anything_numpy_can_make_a_number_of(make_config, args, message):
    with Env(make_config([jetbot_task(max_steps=50)] * 2)) as env:
        env.reset()
        before = env.runner.world.slot_state(1)
        with pytest.raises(ValueError, match=rf"action\[1\]\['jetbot'\]\['move_by_speed'\]: .*{message}"):
            env.step([None, {'jetbot': {'move_by_speed': args}}])
        assert all(np.array_equal(v, env.runner.world.slot_state(1)[k]) for k, v in before.items())
        assert env.runner.steps.tolist() == [0, 0]


@pytest.mark.parametrize('batched, message', [
    ({'jetbot': [0.3, 0.0]}, r"batched actions\['jetbot'\] must be a dict"),
    ({'jetbot': {'move_by_speed': 0.3}}, r'one row per env \(2\); got a float'),
    ({'jetbot': {'move_by_speed': np.float64(0.3)}}, r'one row per env \(2\); got a float64'),
    ({'jetbot': {'move_by_speed': 'fast'}}, r'one row per env \(2\); got a str'),
    ({'jetbot': {'move_by_speed': [[0.3, True], [0.0, 0.0]]}}, 'got the bool True'),
])
def test_bad_batched_actions_are_value_errors(make_config, batched, message):
    with Env(make_config([jetbot_task(max_steps=50)] * 2)) as env:
        env.reset()
        with pytest.raises(ValueError, match=message):
            env.step_arrays(batched)
        assert env.runner.steps.tolist() == [0, 0]


@pytest.mark.parametrize('reset_list', [np.array([[0, 1]]), [np.array([0, 1])], [0.0], [True], [np.float64(1.0)], {0: 1}])
def test_reset_lists_of_anything_but_int_ids_are_value_errors(make_config, reset_list):
    with Env(make_config([jetbot_task()] * 4)) as env:
        env.reset()
        with pytest.raises(ValueError, match='reset_list'):
            env.reset(reset_list)
        assert len(env.runner.queue) == 2 and env.active_slots == [0, 1]
        assert env.reset(np.array([1]))[1][0] is not None  # an int array is a list of ids


def test_a_slot_that_diverges_on_its_very_first_step_is_caught(make_config):
    # A start pose far out of range blows the simulation up at once, before its clock moved. Configs
    # reject such a pose, so it is put in past validation (model_copy does not validate).
    far = FiniteStepTaskCfg(max_steps=5, robots=[JetbotRobotCfg().model_copy(update={'position': (1e12, 0.0, 0.035)})])
    with Env(make_config([far, jetbot_task()], env_num=2)) as env:
        env.reset()
        obs, reward, terminated, truncated, info = env.step([None, None])
        assert info[0]['diverged'] is True and terminated[0] is True and reward[0] == 0.0
        assert 'diverged' not in info[1] and env.active_slots == [1]


def test_metric_objects_of_finished_episodes_are_not_kept_forever(make_config):
    from internutopia_extension.configs.metrics import StepsMetricCfg

    tasks = [FiniteStepTaskCfg(max_steps=1, robots=[JetbotRobotCfg()], metrics=[StepsMetricCfg(name=f'steps_{i}')])
             for i in range(150)]
    with Env(make_config(tasks, env_num=2)) as env:
        env.reset()
        seen = []
        while env.active_slots:
            _, _, terminated, _, info = env.step([None, None])
            seen += [list(i['metrics']) for i in info if i is not None and terminated]
            env.reset([s for s in range(2) if info[s] is not None])
        assert len(seen) == 150 and seen[-1] == ['steps_149']
        assert len(env.runner.metrics) <= 66 and len(env.runner.members) <= 67


# ------------------------------------------------------------------------------------------------
# tests leak nothing: an env left open by a failing test is closed by the autouse fixture
_LEFT_OPEN: list = []


def test_an_env_left_open_by_a_test_part_1(make_config):
    _LEFT_OPEN.append(Env(make_config([jetbot_task()])))  # a test that fails before its close()


def test_an_env_left_open_by_a_test_part_2_is_closed_after_it():
    assert _LEFT_OPEN and not _LEFT_OPEN[0].simulation_app.is_running()


def test_a_diverging_slot_whose_metrics_raise_fails_alone_back_at_its_start(make_config, tmp_path):
    """A divergence whose episode's metrics raise as it ends (injected into the terms'
    ``episode_metrics``): one failed record for that episode, its slot back at its start state and
    done until reset; the other slots step on untouched."""
    path = tmp_path / 'results.jsonl'
    tasks = [jetbot_task(max_steps=50, position=(0.1 * k, 0.0, 0.035)) for k in range(3)]
    action = {'jetbot': {'move_by_speed': [0.4, 0.8]}}
    with Env(make_config(tasks, env_num=2, metrics_save_path=str(path))) as env:
        env.reset()
        start = env.get_observations()[1]['jetbot']['position'].copy()
        episode_metrics = env.runner.terms.episode_metrics

        def metrics(slot):
            if slot == 1:
                raise ZeroDivisionError('no distance in a blown-up run')
            return episode_metrics(slot)

        env.runner.terms.episode_metrics = metrics
        env.step([action] * 2)
        env.runner.world.pack(1).data.qvel[1, :] = 1e30
        obs, reward, terminated, truncated, info = env.step([action] * 2)
        assert terminated == [False, True] and reward[1] == 0.0 and obs[0] is not None
        assert info[1]['diverged'] is True and info[1]['failed'] == 'ZeroDivisionError: no distance in a blown-up run'
        assert env.active_slots == [0]
        np.testing.assert_allclose(env.runner.world.pack(1).data.qpos[1, :3], start, atol=1e-9)  # (back at its start)
        _, _, _, _, info = env.step([action] * 2)
        assert info[0]['steps'] == 3 and info[1] is None
        env.runner.terms.episode_metrics = episode_metrics
    got = [json.loads(line) for line in path.read_text().splitlines()]
    failed = [r for r in got if r['slot'] == 1]
    assert len(failed) == 1 and failed[0]['outcome'] == 'failed' and failed[0]['error_type'] == 'ZeroDivisionError'
    assert 'metrics' not in failed[0] and failed[0]['steps'] == 2
