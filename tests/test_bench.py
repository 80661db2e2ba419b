"""The benchmark: its method (paired chunks, medians, repeats) and every figure the docs quote.

Values and format only: speed itself is never asserted in a test.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from internutopia.bench import CASES, Case, register_case
from internutopia.bench.paired import summarize, time_pairs
from internutopia.bench.report import combine_runs, markdown_table
from tests.process_helpers import command_line


class _FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.switches = 0  # the process's involuntary context switches so far

    def __call__(self) -> float:
        return self.now


class _FakeLimit:
    """Records the calls the method makes; its replay 'takes' ``per_step`` per recorded step."""

    def __init__(self, clock: _FakeClock, per_step: list[float], preempted_replays: tuple[int, ...] = ()) -> None:
        self.clock, self.per_step, self.calls, self.preempted = clock, per_step, [], preempted_replays

    def start_round(self, steps: int) -> None:
        self.calls.append(('start', steps))

    def record(self, step: int) -> None:
        self.clock.now += 100.0  # bookkeeping: must not count as ours
        self.calls.append(('record', step))

    def replay(self) -> float:
        self.calls.append(('replay',))
        replay = sum(call[0] == 'replay' for call in self.calls) - 1
        self.clock.switches += replay in self.preempted
        return self.per_step[replay]


def test_pairs_alternate_chunks_and_keep_bookkeeping_out_of_our_time():
    clock = _FakeClock()
    ours_per_step = iter([2.0] * 3 + [4.0] * 3)  # the machine slows down for the second chunk ...
    limit = _FakeLimit(clock, [1.0, 2.0], preempted_replays=(1,))  # ... and so does the limit's replay of it

    def step() -> None:
        clock.now += next(ours_per_step)

    ours, theirs, clean = time_pairs(step, limit, pairs=2, chunk=3, clock=clock, switches=lambda: clock.switches)
    np.testing.assert_array_equal(ours, [2.0, 4.0])
    np.testing.assert_array_equal(theirs, [1.0, 2.0])
    np.testing.assert_array_equal(clean, [True, False])  # the process was preempted during the second replay
    assert limit.calls == [('start', 3), ('record', 0), ('record', 1), ('record', 2), ('replay',),
                           ('start', 3), ('record', 0), ('record', 1), ('record', 2), ('replay',)]
    assert summarize(ours, theirs)['ratio'] == 0.5  # the drift cancels within each pair


class _FakeStepLimit(_FakeLimit):
    """A limit that times its steps one by one (as PhysicsLimit.replay_steps)."""

    def __init__(self, clock: _FakeClock, seconds: list[list[float]], preempted: list[set[int]]) -> None:
        super().__init__(clock, [])
        self.seconds, self.preempted_steps = seconds, preempted

    def replay_steps(self, clock, switches):
        replay = sum(call[0] == 'replay' for call in self.calls)
        self.calls.append(('replay',))
        flags = np.array([k not in self.preempted_steps[replay] for k in range(len(self.seconds[replay]))])
        return np.array(self.seconds[replay]), flags


def test_preempted_steps_are_left_out_of_their_pair():
    clock = _FakeClock()
    # Ours: 1 s per step, but step 1 of the first chunk was preempted (10 s); the limit's step 3
    # of the first chunk was preempted too. The second chunk: most steps preempted on one side.
    ours_steps = iter([(1.0, False), (10.0, True), (1.0, False), (1.0, False)] + [(2.0, True)] * 3 + [(1.0, False)])
    limit = _FakeStepLimit(clock, [[0.5, 0.5, 0.5, 5.0], [0.5] * 4], [{3}, set()])

    def step() -> None:
        seconds, preempted = next(ours_steps)
        clock.now += seconds
        clock.switches += preempted

    ours, theirs, clean = time_pairs(step, limit, pairs=2, chunk=4, clock=clock, switches=lambda: clock.switches)
    np.testing.assert_array_equal(clean, [True, False])
    np.testing.assert_allclose(ours, [1.0, 7 / 4])  # the first pair: steps 0 and 2 only
    np.testing.assert_allclose(theirs, [0.5, 0.5])  # the second pair: every step (too few clean ones)
def test_summary_is_the_median_pair_ratio_with_quartiles():
    ours = np.array([1.0, 1.0, 1.0, 1.0, 10.0])  # one disturbed chunk of ours
    limit = np.array([0.8, 0.9, 0.7, 0.8, 0.8])
    summary = summarize(ours, limit)
    assert summary['ratio'] == pytest.approx(0.8)
    assert (summary['ratio_q1'], summary['ratio_q3']) == pytest.approx((0.7, 0.8))
    assert summary['pairs'] == 5 and summary['ours_step_s'] == 1.0 and summary['limit_step_s'] == pytest.approx(0.8)
    assert summary['used'] == 'all' and len(summary['ratios']) == 5


def test_summary_counts_only_unpreempted_pairs_when_there_are_enough():
    ours = np.ones(12)
    limit = np.array([0.9] * 6 + [0.5] * 6)  # the last six pairs were preempted
    clean = np.arange(12) < 6
    summary = summarize(ours, limit, clean)
    assert summary['ratio'] == pytest.approx(0.9) and summary['used'] == 'clean' and summary['clean_pairs'] == 6
    few = summarize(ours, limit, np.arange(12) < 2)  # too few clean pairs: every pair counts
    assert few['used'] == 'all' and few['ratio'] == pytest.approx(0.7) and few['clean_pairs'] == 2


def test_runs_combine_into_median_of_medians_with_spread():
    runs = [{'ratio': r, 'ratios': [r - 0.01, r, r + 0.01], 'ours_step_s': 1e-3, 'limit_step_s': r * 1e-3, 'pairs': 3,
             'chunk': 20, 'startup_s': 0.5, 'peak_memory_mb': 100.0 + i} for i, r in enumerate([0.80, 0.90, 0.84])]
    row = combine_runs('h1', 64, 'off', 'array', runs, 3000.0)
    assert row['ratio_vs_limit'] == 0.84 and (row['ratio_min'], row['ratio_max']) == (0.8, 0.9)
    assert row['ratio_runs'] == [0.8, 0.9, 0.84] and row['runs'] == 3 and row['pairs'] == 9
    assert row['ratio_q1'] < row['ratio_vs_limit'] < row['ratio_q3'] and row['peak_memory_mb'] == 102.0
    assert row['env_steps_per_s'] == 64000.0 and row['ratio_vs_async'] == pytest.approx(64000 / 3000, abs=0.01)
    table = markdown_table([row]).splitlines()
    assert len(table) == 3 and '| 0.84 | 0.81-0.89 | 0.80-0.90 (3) | 21.3 |' in table[2]
    assert table[0].count('|') == table[2].count('|')


def test_a_case_name_registers_once():
    with pytest.raises(ValueError, match="'h1' is already registered"):
        register_case(Case('h1', 'again', CASES['h1'].config, CASES['h1'].dict_actions, CASES['h1'].array_action))


@pytest.mark.slow
def test_bench_json_has_every_figure():
    result = subprocess.run([sys.executable, '-m', 'internutopia.bench', '--robots', 'jetbot', '--env-nums', '2',
                             '--cameras', 'off', '--steps', '30', '--chunk', '10', '--repeat', '2', '--no-render', '--json',
                             '--markdown'],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    figures = json.loads(lines[-1])
    assert figures['machine']['cores'] >= 1 and figures['repeat'] == 2 and figures['chunk'] == 10
    rows = {row['api']: row for row in figures['rows']}
    assert set(rows) == {'dict', 'array'}
    for row in rows.values():
        assert row['robot'] == 'jetbot' and row['env_num'] == 2 and row['cameras'] == 'off'
        assert row['env_steps_per_s'] > 0 and row['ratio_vs_limit'] > 0 and row['ratio_vs_async'] > 0
        assert row['runs'] == 2 and len(row['ratio_runs']) == 2 and row['pairs'] == 6 and row['chunk'] == 10
        assert row['ratio_min'] <= row['ratio_vs_limit'] <= row['ratio_max'] and row['ratio_q1'] <= row['ratio_q3']
        assert row['step_ms'] == pytest.approx(2e3 / row['env_steps_per_s'], rel=1e-2)
    assert rows['dict']['reset_same_structure_steps'] > 0 and rows['dict']['reset_new_structure_ms'] > 0
    assert 0 < figures['startup_s']['jetbotx2'] < 60 and figures['peak_memory_mb']['jetbotx2'] > 10
    assert sum(line.startswith('| jetbot | 2 | off |') for line in lines) == 2  # the Markdown table
    assert sum(' run 2/2: ours/limit ' in line for line in lines) == 2


def test_bench_rejects_bad_arguments():
    for argv, message in ((['--robots', 'walle'], 'unknown robot'), (['--cameras', 'x'], 'unknown camera setting'),
                          (['--repeat', '0'], '--repeat must be at least 1'),
                          (['--env-nums', '1,x'], "'1,x' is not a comma-separated list of int values")):
        result = subprocess.run([sys.executable, '-m', 'internutopia.bench', *argv], capture_output=True, text=True)
        assert result.returncode == 2 and message in result.stderr, (argv, result.stderr)


def test_versus_steps_two_cases_in_alternating_chunks_and_reports_the_cost(capsys):
    from internutopia.bench import versus

    rows = versus.main(['h1', 'h1_walking', '--env-nums', '1', '--pairs', '3', '--chunk', '5', '--json'])
    assert len(rows) == 1 and rows[0]['env_num'] == 1 and rows[0]['pairs'] == 3
    row = rows[0]
    assert row['first_us'] > 0 and row['second_us'] > 0 and np.isfinite(row['cost']) and row['cost_q1'] <= row['cost_q3']
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith('h1_walking vs h1 x1: a step costs ') and json.loads(printed[-1]) == rows
    for argv, message in ((['h1', 'walle'], 'unknown robot'), (['h1', 'h1_walking', '--env-nums', '0'], 'at least 1'),
                          (['h1', 'h1_walking', '--env-nums', 'x'], 'comma-separated integers')):
        result = subprocess.run([sys.executable, '-m', 'internutopia.bench.versus', *argv], capture_output=True, text=True)
        assert result.returncode == 2 and message in result.stderr, (argv, result.stderr)


def test_profile_step_times_the_python_alone():
    from internutopia.bench.profile_step import python_step_us

    result = python_step_us('jetbot', 2, 'array', steps=5, blocks=2, profile=True)
    assert 0 < result['cpu_best_us'] <= result['cpu_median_us'] and 0 < result['best_us'] <= result['median_us']
    assert 'step_arrays' in result['profile']


def test_physics_off_keeps_every_slot_running(make_config):
    from internutopia.bench.cases import CASES
    from internutopia.bench.profile_step import switch_physics_off
    from internutopia.core.vec_env import Env

    case = CASES['jetbot']
    with Env(case.config(3, 'off')) as env:
        env.reset()
        switch_physics_off(env)
        before = env.runner.world.packs
        for _ in range(5):
            out = env.step_arrays(case.array_action(3))
        assert out.active.all() and not out.diverged and env.runner.world.packs is before


def test_reset_cost_compiles_once_per_new_structure_and_never_for_the_same():
    """The reset-cost benchmark's own checks hold: a structural reset compiles (a new cube each time,
    since the world keeps structures it has seen), a same-structure reset never does."""
    from internutopia.bench.reset_cost import measure

    figures = measure(4, repeats=2, steps=3)
    assert figures['packs'] == 2  # the plain structure and the last new one
    assert figures['same_ms'] > 0 and figures['change_ms'] > 0 and figures['all_ms'] > 0


# ------------------------------------------------------------------------------------------------
# a benchmark that is safe to run: memory planned before a pool starts, no process outlives it
def test_a_pool_runs_whole_scaled_down_or_skipped_by_its_memory():
    from internutopia.bench.memory import MemoryBudget, plan_pool

    budget = MemoryBudget(available_mb=10_000.0, cgroup_free_mb=None, total_mb=16_000.0, share=0.5)  # 5,000 usable
    whole = plan_pool(8, per_worker_mb=400.0, base_mb=200.0, budget=budget, cores=2)
    assert (whole.workers, whole.scaled, whole.skipped, whole.note) == (8, False, False, None)
    scaled = plan_pool(64, per_worker_mb=400.0, base_mb=200.0, budget=budget, cores=2)
    assert scaled.workers == 12 and scaled.scaled and scaled.needed_mb == 200 + 64 * 400
    assert 'scaled down to 12 of 64 workers' in scaled.note and '25,800 MB' in scaled.note
    skipped = plan_pool(64, per_worker_mb=400.0, base_mb=200.0, budget=budget, cores=16)
    assert skipped.skipped and skipped.workers == 0 and 'skipped: 64 workers need about 25,800 MB' in skipped.note
    capped = plan_pool(64, per_worker_mb=1.0, base_mb=0.0, budget=budget, cores=2, max_workers=4)
    assert capped.workers == 4 and '--async-max-workers 4' in capped.note
    # a cgroup limit tighter than the machine's free memory is what counts
    tight = MemoryBudget(available_mb=10_000.0, cgroup_free_mb=1_000.0, total_mb=16_000.0, share=0.5)
    assert tight.usable_mb == 500.0 and plan_pool(4, 400.0, 0.0, tight, cores=1).workers == 1


def test_a_pool_that_does_not_fit_is_skipped_with_a_line_and_starts_nothing():
    from internutopia.bench.baseline import AsyncBaseline
    from internutopia.bench.processes import children_of

    lines: list[str] = []
    baseline = AsyncBaseline(log=lines.append)
    baseline.footprints[('jetbot', 'off')] = (10.0 ** 9, 100.0)  # a worker 'measured' at a petabyte
    before = set(children_of(os.getpid()))
    fields = baseline.measure('jetbot', 64, 'off', steps=20)
    assert set(children_of(os.getpid())) == before
    assert fields['async_env_steps_per_s'] is None and fields['async_workers'] == 0
    assert fields['async_note'].startswith('skipped: 64 workers need about') and fields['async_memory_needed_mb'] > 10 ** 10
    assert len(lines) == 1 and 'AsyncVectorEnv skipped' in lines[0] and 'budget' in lines[0] and 'no ratio' in lines[0]


def test_only_off_means_no_camera_rows():
    from internutopia.bench.command import camera_rows_wanted

    assert not camera_rows_wanted(['off'], no_render=False, user_config=None)
    assert camera_rows_wanted(['off', 'on'], no_render=False, user_config=None)
    assert not camera_rows_wanted(['on'], no_render=True, user_config=None)
    assert not camera_rows_wanted(['on'], no_render=False, user_config='x.yaml')


@pytest.mark.slow
def test_rows_report_the_memory_of_ours_and_of_each_pool_and_a_scaled_pool_says_so():
    result = subprocess.run([sys.executable, '-m', 'internutopia.bench', '--robots', 'jetbot', '--env-nums', '1,3',
                             '--cameras', 'off', '--api', 'array', '--steps', '20', '--chunk', '10',
                             '--async-max-workers', '2', '--json'],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    figures = json.loads(lines[-1])
    assert figures['camera_rows'] == [] and not any('camera case' in line for line in lines)
    one, three = sorted(figures['rows'], key=lambda row: row['env_num'])
    assert (one['async_workers'], one['async_scaled'], one['async_note']) == (1, False, None)
    assert (three['async_workers'], three['async_scaled']) == (2, True)
    assert three['async_note'].startswith('scaled down to 2 of 3 workers: --async-max-workers 2')
    assert any('scaled down to 2 of 3 workers' in line for line in lines)
    for row in (one, three):
        # ours is one process; a pool's tree is its driver, fork server and workers, each a whole process
        assert 10 < row['peak_memory_mb'] < row['async_peak_memory_mb']
        assert row['async_worker_peak_mb'] * row['async_workers'] < row['async_peak_memory_mb']
        assert row['async_memory_needed_mb'] > row['async_peak_memory_mb'] or row is one
        assert 'peak memory: ours' in ' '.join(lines) and row['ratio_vs_async'] > 0


def _dead(pid: int) -> bool:
    try:
        with open(f'/proc/{pid}/stat', encoding='utf-8') as stream:
            return stream.read().rsplit(')', 1)[1].split()[0] in ('Z', 'X')  # a zombie has ended
    except OSError:
        return True


def _kill_and_outlive_none(bench: subprocess.Popen, sig: int) -> None:
    """Send ``sig`` to the benchmark process ``bench``: it ends by it, and within 15 s so does
    every process it had started."""
    from internutopia.bench.processes import children_of

    tree = children_of(bench.pid)
    os.kill(bench.pid, sig)
    assert bench.wait(30) == -sig
    deadline = time.monotonic() + 15
    while not all(_dead(pid) for pid in tree) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [pid for pid in tree if not _dead(pid)] == [], 'processes outlived the benchmark'


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='reads the process tree from /proc')
@pytest.mark.parametrize('sig', [signal.SIGKILL, signal.SIGTERM])
def test_no_process_outlives_a_killed_benchmark(sig):
    """Kill the benchmark while its pool's workers step: every process it started ends with it."""
    from internutopia.bench.processes import children_of

    bench = subprocess.Popen([sys.executable, '-m', 'internutopia.bench', '--robots', 'jetbot', '--env-nums', '2',
                              '--cameras', 'off', '--api', 'array', '--steps', '100000000'],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        workers: list[int] = []
        deadline = time.monotonic() + 120
        while len(workers) < 2 and time.monotonic() < deadline:  # the pool of 2 (after its one-worker probe)
            time.sleep(0.5)
            tree = children_of(bench.pid)
            servers = [pid for pid in tree if 'forkserver' in command_line(pid)]
            workers = [pid for pid in tree if any(pid in children_of(server) for server in servers)]
        assert len(workers) >= 2, 'the pool never started'
        time.sleep(1.0)  # the workers are building or stepping their envs
        _kill_and_outlive_none(bench, sig)
    finally:
        if bench.poll() is None:
            os.killpg(bench.pid, signal.SIGKILL)


@pytest.mark.slow
def test_a_measurement_past_its_time_limit_is_killed_and_the_run_goes_on():
    from internutopia.bench.processes import children_of

    bench = subprocess.Popen([sys.executable, '-m', 'internutopia.bench', '--robots', 'jetbot', '--env-nums', '1',
                              '--cameras', 'off', '--api', 'array', '--steps', '100000000', '--no-async', '--timeout', '6',
                              '--json'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: set[int] = set()
    while bench.poll() is None:
        seen.update(children_of(bench.pid))
        time.sleep(0.5)
    out = bench.stdout.read()
    assert bench.returncode == 0, bench.stderr.read()[-3000:]
    assert 'ran past its time limit of 6 s; its processes were killed' in out and 'row left out' in out
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures['rows'] == [] and figures['failures'][0]['api'] == 'array'
    # Killed processes take a moment to end (the kernel tears a process down after the signal): the
    # same grace as test_no_process_outlives_a_killed_benchmark.
    deadline = time.monotonic() + 15
    while not all(_dead(pid) for pid in seen) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert seen and [pid for pid in seen if not _dead(pid)] == [], 'processes outlived their measurement'


def test_instruction_counting_refuses_an_unknown_case_or_id_before_valgrind_starts(monkeypatch):
    """An unknown benchmark case or Gymnasium id is refused at once, naming the valid ones (no
    child under valgrind, which takes seconds to start)."""
    from internutopia.bench import step_instructions

    monkeypatch.setattr(step_instructions.subprocess, 'run', lambda *a, **k: pytest.fail('a child was started'))
    with pytest.raises(ValueError, match=r"unknown robot 'nosuchbot'; choose from h1"):
        step_instructions.count('nosuchbot', 1, 'array', ['step'], calls=2)
    with pytest.raises(ValueError, match=r"unknown Gymnasium id 'internutopia/NoSuch-v0'; choose from .*internutopia/H1Walk-v0"):
        step_instructions.count('internutopia/NoSuch-v0', 4, 'gym', ['step'], calls=2)


def test_instruction_counts_against_a_baseline_say_each_change_and_fail_past_the_allowed_rise(tmp_path, monkeypatch, capsys):
    """``--baseline`` prints each count's change against a previous run's output (its header
    and other lines ignored; a case it lacks is printed without one and named in the summary);
    ``--max-increase`` makes the run fail, naming the cases that rose by more than allowed."""
    from internutopia.bench import step_instructions

    counted = {('h1', 1, 'array'): [103_000], ('h1', 1, 'dict'): [250_000], ('h1', 64, 'array'): [900_000],
               ('h1', 64, 'dict'): [1_000_000]}
    monkeypatch.setattr(step_instructions, 'count', lambda robot, env_num, api, phases, calls=50: counted[robot, env_num, api])
    baseline = tmp_path / 'before.txt'
    baseline.write_text('# python -m internutopia.bench.step_instructions ... (tree abc1234)\n'
                        'h1 x1 array step: 100,000 instructions per call\n'
                        'h1 x1 dict step: 250,000 instructions per call  (baseline 249,000: +0.4%)\n'
                        'h1 x64 array step: 1,000,000 instructions per call\n', encoding='utf-8')
    argv = ['--robots', 'h1', '--env-nums', '1,64', '--api', 'array,dict', '--baseline', str(baseline)]
    assert step_instructions.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ['h1 x1 array step: 103,000 instructions per call  (baseline 100,000: +3.0%)',
                     'h1 x1 dict step: 250,000 instructions per call  (baseline 250,000: +0.0%)',
                     'h1 x64 array step: 900,000 instructions per call  (baseline 1,000,000: -10.0%)',
                     'h1 x64 dict step: 1,000,000 instructions per call',
                     f'3 count(s) compared with {baseline} (1 not in it: h1 x64 dict step)']
    assert step_instructions.main([*argv, '--max-increase', '5']) == 0
    capsys.readouterr()
    assert step_instructions.main([*argv, '--max-increase', '2']) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (f'3 count(s) compared with {baseline} (1 not in it: h1 x64 dict step); '
                                                        '1 rose by more than 2 %: h1 x1 array step')
    # A run's own output is a baseline as it is (the lines it read back are the lines it wrote).
    assert step_instructions.read_counts('\n'.join(lines[:4])) == {'h1 x1 array step': 103_000, 'h1 x1 dict step': 250_000,
                                                               'h1 x64 array step': 900_000, 'h1 x64 dict step': 1_000_000}
    for wrong, message in ((['--max-increase', '2'], '--max-increase needs --baseline'),
                           (['--baseline', str(tmp_path / 'missing.txt')], 'no file')):
        with pytest.raises(SystemExit):
            step_instructions.main(['--robots', 'h1', *wrong])
        assert message in capsys.readouterr().err


@pytest.mark.skipif(shutil.which('valgrind') is None, reason='instruction counts need valgrind (apt-get install valgrind)')
def test_instruction_counting_reports_the_childs_own_error(tmp_path, monkeypatch):
    """``step_instructions`` runs the measured steps in a child under callgrind; when that child
    fails (here: its counting helper is not a library), its traceback's last lines are the error,
    not a bare exit status."""
    from internutopia.bench import step_instructions

    not_a_library = tmp_path / 'libcount.so'
    not_a_library.write_text('not a shared library', encoding='utf-8')
    monkeypatch.setattr(step_instructions, '_helper', lambda directory: str(not_a_library))
    with pytest.raises(RuntimeError, match=r"(?s)counting jetbot x1 array failed \(exit 1\).*OSError: .*libcount\.so"):
        step_instructions.count('jetbot', 1, 'array', ['step'], calls=2)


@pytest.mark.skipif(shutil.which('valgrind') is None, reason='the counting helper needs valgrind headers (apt-get install valgrind)')
def test_gym_instruction_counting_steps_the_vector_env_with_its_physics_off(tmp_path, monkeypatch):
    """``step_instructions --gym`` counts whole vector steps of a Gymnasium id with the physics
    switched off: the world's steps advance by the id's action repeat per counted call, the robots
    stay where they were. (Run here outside valgrind, where its client requests do nothing.)"""
    from internutopia.bench import profile_step, step_instructions

    switched = []
    switch = profile_step.switch_physics_off

    def recording_switch(env):
        switch(env)
        runner = env.runner
        packs = list(runner.world.packs.values())  # (kept: the env is closed when the count ends)
        switched.append((runner, runner.world_steps, packs, [pack.data.qpos.copy() for pack in packs]))

    monkeypatch.setattr(profile_step, 'switch_physics_off', recording_switch)
    step_instructions._measure(step_instructions._helper(str(tmp_path)), 'internutopia/JetbotPointNav-v0', 2, 'gym', ['step'], 3)
    (runner, steps_before, packs, qpos_before), = switched
    assert runner.world_steps - steps_before == (5 + 3) * 6  # 5 warm-up and 3 counted calls, 6 physics steps each
    for pack, before in zip(packs, qpos_before, strict=True):
        np.testing.assert_array_equal(pack.data.qpos, before)
    with pytest.raises(SystemExit):
        step_instructions.main(['--gym', 'internutopia/JetbotPointNav-v0', '--phases', 'observe'])  # not a phase of a gym step


@pytest.mark.parametrize('env_id', ['internutopia/JetbotPointNav-v0', 'internutopia/H1Walk-v0'])
def test_the_turnover_phase_ends_each_episode_after_the_length_its_index_draws(env_id):
    """``step_instructions``' ``turnover`` phase ends episodes (truncated) after a length drawn from
    their index: the Jetbot's inside a recorded repeat (on the inner step it is due, as a task's
    end would), the walking H1's after its fused step; each ended episode is reported once with
    that length, and the vector env restarts it. (Physics off, as counted.)"""
    import gymnasium

    import internutopia.envs  # noqa: F401  (registers the ids)
    from internutopia.bench.profile_step import switch_physics_off
    from internutopia.bench.step_instructions import end_at_a_spread

    envs = gymnasium.make_vec(env_id, num_envs=4)
    try:
        envs.reset(seed=0)
        vec_env, repeat = envs.unwrapped.vec_env, envs.unwrapped.action_repeat
        space = envs.single_action_space
        action = np.zeros((4, *space.shape), dtype=space.dtype)
        switch_physics_off(vec_env)
        end_at_a_spread(vec_env.runner, repeat, ends_per_step=16.0)  # lengths of 2 to 4 vector steps
        lengths = {}
        for _ in range(40):
            _, _, terminated, truncated, infos = envs.step(action)
            for env in np.flatnonzero(terminated | truncated).tolist():
                index = int(infos['episode_index'][env])
                assert truncated[env] and not terminated[env] and index not in lengths
                lengths[index] = int(infos['steps'][env])
        assert len(lengths) >= 25  # (about one end in three vector steps per env)
        for index, steps in lengths.items():
            assert steps == repeat * (2 + index * 7919 % 3), (index, steps)
        assert {steps // repeat for steps in lengths.values()} == {2, 3, 4}
    finally:
        envs.close()


def test_physics_off_drops_the_forward_passes_a_reset_left_pending(monkeypatch):
    """A reset leaves the forward passes of its slots pending (the next step recomputes them); the
    physics-off step drops them as the real step does, so reading the clock runs no MuJoCo forward
    pass that a real run would not."""
    import mujoco

    from internutopia.bench.cases import CASES
    from internutopia.bench.profile_step import switch_physics_off
    from internutopia.core.vec_env import Env

    case = CASES['jetbot']
    with Env(case.config(3, 'off')) as env:
        env.reset()
        switch_physics_off(env)
        env.step_arrays(case.array_action(3))
        env.runner.world.forward(np.array([1]))  # (as a reset does once it has placed a slot: the pass left pending)
        pack, = env.runner.world.packs.values()
        assert pack._pending_rows
        forwards = []
        monkeypatch.setattr(mujoco, 'mj_forward', lambda *args: forwards.append(args))
        env.step_arrays(case.array_action(3))
        assert not pack._pending_rows and not forwards


# ------------------------------------------------------------------------------------------------
# The recording benchmark: no run outlives it, its folder does not either
@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='reads the process tree from /proc')
@pytest.mark.parametrize('sig', [signal.SIGTERM, signal.SIGKILL])
def test_no_run_outlives_a_killed_recording_benchmark(tmp_path, sig):
    from internutopia.bench.processes import children_of

    bench = subprocess.Popen([sys.executable, '-m', 'internutopia.bench.recording', '--env-num', '1', '--episodes',
                              '100000', '--pairs', '1'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, 'TMPDIR': str(tmp_path)}, start_new_session=True)
    try:
        tree: list[int] = []
        deadline = time.monotonic() + 60
        while not tree and time.monotonic() < deadline:
            time.sleep(0.5)
            tree = children_of(bench.pid)
        assert tree, 'the run never started'
        time.sleep(2.0)  # the run is building or stepping its env
        _kill_and_outlive_none(bench, sig)
        if sig == signal.SIGTERM:
            assert os.listdir(tmp_path) == []  # (its temporary folder removed)
    finally:
        if bench.poll() is None:
            os.killpg(bench.pid, signal.SIGKILL)


def test_a_recording_benchmark_run_past_its_time_limit_is_killed(monkeypatch):
    from internutopia.bench import recording

    monkeypatch.setattr(recording.sys, 'executable', sys.executable)
    command = [sys.executable, '-c', 'import time; time.sleep(60)']
    real = subprocess.Popen

    def popen(args, **kw):
        return real(command, **kw)

    monkeypatch.setattr(recording.subprocess, 'Popen', popen)
    started = time.monotonic()
    with pytest.raises(RuntimeError, match='ran past its time limit of 1 s; its processes were killed'):
        recording._child(1, 1, 1 / 30, None, timeout_s=1)
    assert time.monotonic() - started < 10
