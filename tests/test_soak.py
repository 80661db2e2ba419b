"""Soak: long runs of short episodes; the memory the process holds stays flat and the loop does not slow down.

Two runs, each in a fresh interpreter:

- **mixed**: 6,000 episodes in the suite (the docs record a 50,000-episode run) whose structures change on almost every reset (slots move between
  packs all the time), every episode writing a record, slots reset in random subsets, one episode
  in six a point-nav episode whose reward and metric settings no other episode shares;
- **sweep**: point-nav episodes that differ only in their reward and metric settings (a sweep over
  settings), every one with settings of its own.

The process's resident memory, read after a garbage collection, may not grow by more than a few MB
between the end of the warm-up and the end of the run, and the loop may not slow down: each batch
of episodes is timed in CPU seconds divided by those of a fixed reference workload timed beside it
(:func:`reference_seconds`: the machine's other jobs slow both alike), and the median of the last
quarter's batches is compared with the first quarter's (medians, since single batches still vary); a soak that slowed is run again, up to
three runs, and fails only if the last one slowed too (:func:`assert_kept_pace`). ``python tests/test_soak.py
[mixed|sweep] [EPISODES]`` runs one alone and prints its figures.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.config.unknown_keys import UnknownConfigKeyWarning
from internutopia.core.vec_env import Env
from internutopia.macros import gm
from internutopia_extension.configs.metrics import StepsMetricCfg, SuccessMetricCfg
from internutopia_extension.configs.objects import DynamicCubeCfg, VisualCubeCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.configs.tasks.point_nav_task import PointNavProgressRewardCfg, PointNavTaskCfg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EPISODES = 6_000  # (24 batches: quarters of 6)
ENV_NUM = 16
#: Episodes timed together: the run's pace is the time of each batch.
BATCH = 250
#: Allowed growth of the resident memory after the warm-up (measured: under 2 MB).
MAX_GROWTH_MB = 5.0
#: Allowed ratio of the last quarter's median paced batch time to the first quarter's (measured:
#: 0.86 to 1.03; the machine's load moves single batches by more than that, medians much less).
MAX_SLOWDOWN = 1.25


def held_mb() -> float:
    """Resident memory (MB) after collecting garbage."""
    gc.collect()
    with open('/proc/self/status', encoding='ascii') as stream:
        return next(int(line.split()[1]) for line in stream if line.startswith('VmRSS:')) / 1024


def structures() -> list[FiniteStepTaskCfg]:
    """Five structures: ground, a dynamic cube, a marker, two robots, an MJCF office scene."""
    office = os.path.join(gm.ASSET_PATH, 'scenes', 'office.xml')
    return [
        FiniteStepTaskCfg(max_steps=1, robots=[JetbotRobotCfg()]),
        FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg(position=(0.5, 0.0, 0.035))],
                          objects=[DynamicCubeCfg(name='cube', position=(1.0, 0.0, 0.1))]),
        FiniteStepTaskCfg(max_steps=1, robots=[JetbotRobotCfg()], objects=[VisualCubeCfg(name='mark', position=(0.0, 1.0, 0.05))]),
        FiniteStepTaskCfg(max_steps=1, robots=[JetbotRobotCfg(), JetbotRobotCfg(name='other', position=(1.0, 1.0, 0.035))]),
        FiniteStepTaskCfg(max_steps=1, scene_asset_path=office, robots=[JetbotRobotCfg(position=(0.0, 0.0, 0.035))]),
    ]


def with_own_settings(index: int) -> PointNavTaskCfg:
    """A one-step point-nav episode whose reward and metric settings are its own."""
    reward = PointNavProgressRewardCfg(reward_settings={'scale': 1.0 + index * 1e-5, 'step_penalty': (index % 97) * 1e-3})
    with warnings.catch_warnings():  # ('sweep' is an option no metric reads: kept, as upstream keeps it, with a warning)
        warnings.simplefilter('ignore', UnknownConfigKeyWarning)
        steps = StepsMetricCfg(metric_config={'sweep': index})
    return PointNavTaskCfg(goal=(1.0, 0.0, 0.0), max_steps=1, robots=[JetbotRobotCfg()], reward=reward,
                           metrics=[SuccessMetricCfg(), steps])


def slowdown(batch_seconds: list[float]) -> float:
    """The median batch time of the run's last quarter over its first quarter's."""
    quarter = max(len(batch_seconds) // 4, 1)
    return float(np.median(batch_seconds[-quarter:]) / np.median(batch_seconds[:quarter]))


def reference_seconds() -> float:
    """CPU seconds of a fixed piece of work like a step's (a Python loop of dict and list
    operations and small numpy calls), timed beside every batch: how fast the machine runs this
    process at that moment (other jobs on the same cores slow it down by half or more), so that
    batch times divided by it compare across the run."""
    values = np.arange(64.0)
    times = []
    for _ in range(3):  # the median of three: one run the scheduler interrupted counts for nothing
        start = time.process_time()
        total = 0.0
        for i in range(2000):
            row = {'slot': i, 'pair': [i, i + 1]}
            total += float(np.sum(values * row['pair'][1]))
        times.append(time.process_time() - start)
    return float(np.median(times))


def soak(tmp_dir: str, kind: str = 'mixed', episodes: int = EPISODES) -> dict:
    """Run a soak (``mixed`` or ``sweep``) of ``episodes`` episodes in this process; what it measured."""
    rng = np.random.default_rng(0)
    kinds = structures() if kind == 'mixed' else []
    picks = rng.integers(0, len(kinds) + 1, size=episodes)
    source = (kinds[k] if k < len(kinds) else with_own_settings(i) for i, k in enumerate(picks))
    results = os.path.join(tmp_dir, 'results.jsonl')
    config = Config(simulator=SimConfig(physics_dt=1 / 60), env_num=ENV_NUM, metrics_save_path=results,
                    task_configs=kinds[:1] or [with_own_settings(0)])
    warm_up = episodes // 5
    finished = 0
    baseline = end = None
    # CPU seconds of this process (all its threads) per batch, each divided by the reference
    # work's: the machine's other jobs stretch wall time, and even CPU time, far more than that.
    started = time.perf_counter()
    batch_started = time.process_time()
    batches: list[float] = []
    paced: list[float] = []
    with Env(config, episodes=source) as env:
        env.reset()
        while env.active_slots:
            _, _, terminated, _, info = env.step([None] * ENV_NUM)
            ended = [slot for slot in range(ENV_NUM) if terminated[slot] and info[slot] is not None]
            finished += len(ended)
            if ended:
                # Idle slots, in a random order, as a training loop might reset them.
                env.reset([int(s) for s in rng.permutation(ended)])
            if baseline is None and finished >= warm_up:
                baseline = held_mb()
            if end is None and finished >= episodes - 4 * ENV_NUM:  # still every slot busy
                end = held_mb()
            if finished >= (len(batches) + 1) * BATCH:
                batches.append(time.process_time() - batch_started)
                paced.append(batches[-1] / reference_seconds())
                batch_started = time.process_time()
        compiles = env.runner.world.compile_count
    with open(results, encoding='utf-8') as stream:
        records = sum(1 for _ in stream)
    batches, paced = batches[1:], paced[1:]  # the first holds the start-up
    quarter = len(batches) // 4
    # (The point-nav episodes are kind 0's structure, a Jetbot on the ground: they compile nothing.)
    return {'kind': kind, 'episodes': episodes, 'finished': finished, 'records': records, 'compiles': compiles,
            'structures': max(len(kinds), 1), 'baseline_mb': baseline, 'end_mb': end, 'seconds': round(time.perf_counter() - started, 1),
            'cpu_seconds': round(sum(batches), 1),
            'first_quarter_median_s': round(float(np.median(batches[:quarter])), 4),
            'last_quarter_median_s': round(float(np.median(batches[-quarter:])), 4),
            'cpu_slowdown': round(slowdown(batches), 3), 'slowdown': round(slowdown(paced), 3),
            'paced': [round(p, 1) for p in paced]}


#: Runs of a soak whose pace is taken before a slowdown counts: the first, and up to two more
#: only when it slowed (each in a fresh interpreter).
PACE_RUNS = 3


def kept_pace(figures: dict) -> bool:
    """Whether the last quarter ran no slower than the first by one of two clocks: CPU seconds per
    batch, or the same paced by the reference work. A loop that really slows down (a list growing
    per episode, a cache never emptied) slows both; the machine's other jobs move one or the other
    (contention stretches CPU time, a disturbed reference skews the paced figure), seldom both
    the same way at once."""
    return min(figures['cpu_slowdown'], figures['slowdown']) < MAX_SLOWDOWN


def assert_kept_pace(figures: dict, run_again) -> None:
    """The soak kept its pace in one of :data:`PACE_RUNS` runs. A slowdown the code causes comes
    back in every run of the same episodes; one the machine causes (a CI run once measured a
    sweep's last quarter at 1.33x while another job shared the cores) seldom comes back twice.
    ``run_again()`` runs the same soak in a fresh interpreter."""
    runs = [figures]
    while not kept_pace(runs[-1]) and len(runs) < PACE_RUNS:
        runs.append(run_again())
    assert kept_pace(runs[-1]), f'the last quarter ran slower than the first in {len(runs)} runs: {runs}'


def run_soak(tmp_path, kind: str, episodes: int) -> dict:
    """:func:`soak` in a fresh interpreter (the memory of the tests run before is not in its figures),
    writing its records in a folder of its own under ``tmp_path``."""
    run = subprocess.run([sys.executable, __file__, kind, str(episodes), tempfile.mkdtemp(dir=tmp_path)], capture_output=True, text=True, timeout=900,
                         env={**os.environ, 'PYTHONPATH': os.pathsep.join(filter(None, [ROOT, os.environ.get('PYTHONPATH')]))})
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists('/proc/self/status'), reason='reads resident memory from /proc')
def test_mixed_episodes_hold_no_more_memory_and_keep_their_pace(tmp_path):
    figures = run_soak(tmp_path, 'mixed', EPISODES)
    assert figures['finished'] == figures['records'] == EPISODES  # every episode ended once, with its record
    assert figures['compiles'] == figures['structures']  # a structure seen before compiles nothing
    growth = figures['end_mb'] - figures['baseline_mb']
    assert growth < MAX_GROWTH_MB, f'resident memory grew {growth:.1f} MB over the run: {figures}'
    assert_kept_pace(figures, lambda: run_soak(tmp_path, 'mixed', EPISODES))


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists('/proc/self/status'), reason='reads resident memory from /proc')
def test_a_sweep_over_reward_settings_holds_no_more_memory_and_keeps_its_pace(tmp_path):
    # 6,000 episodes here; the docs record a 40,000-episode run of the same soak.
    figures = run_soak(tmp_path, 'sweep', 6_000)
    assert figures['finished'] == figures['records'] == 6_000
    assert figures['compiles'] == 1  # settings are not structure
    growth = figures['end_mb'] - figures['baseline_mb']
    assert growth < MAX_GROWTH_MB, f'resident memory grew {growth:.1f} MB over the run: {figures}'
    assert_kept_pace(figures, lambda: run_soak(tmp_path, 'sweep', 6_000))


def test_a_slowdown_fails_only_when_it_comes_back_in_every_run():
    steady, slowed = {'cpu_slowdown': 1.0, 'slowdown': 1.0}, {'cpu_slowdown': 1.4, 'slowdown': 1.3}
    assert_kept_pace(steady, run_again=lambda: pytest.fail('a run that kept its pace is not run again'))
    again = iter([slowed, steady])
    assert_kept_pace(slowed, run_again=lambda: next(again))  # the machine's: it did not come back
    with pytest.raises(AssertionError, match='in 3 runs'):
        assert_kept_pace(slowed, run_again=lambda: slowed)  # the code's: every run slowed


def test_the_slowdown_is_a_ratio_of_quarter_medians_that_single_slow_batches_do_not_move():
    steady = [1.0] * 20
    assert slowdown(steady) == 1.0
    assert slowdown([1.0] * 19 + [9.0]) == 1.0  # one batch the machine stretched
    assert slowdown([1.0] * 10 + [1.5] * 10) == 1.5  # a loop that slowed down


def test_episodes_with_settings_of_their_own_leave_nothing_behind(make_config):
    """Each episode with reward and metric settings no other shares: the objects the process holds
    stay flat (they used to grow by one reward object, its arrays and its slot mask per episode,
    and every step went through all of them: the run slowed down as it went)."""
    episodes = (with_own_settings(i) for i in range(900))
    with Env(make_config([with_own_settings(0)], env_num=4), episodes=episodes) as env:
        env.reset()
        counts = []
        while env.active_slots:
            _, _, terminated, _, _ = env.step([None] * 4)
            env.reset([slot for slot, ended in enumerate(terminated) if ended])
            if env.runner.world_steps in (75, 225):  # 300 and 900 episodes
                gc.collect()
                counts.append(len(gc.get_objects()))
    # (Up to 64 idle metric and reward objects are kept for episodes to come: a bounded sawtooth.)
    assert counts[1] - counts[0] < 1500, f'{counts[1] - counts[0]} more objects after 600 more episodes'


if __name__ == '__main__':  # python tests/test_soak.py [mixed|sweep] [EPISODES] [DIR]: one soak alone, its figures as JSON
    arguments = sys.argv[1:]
    with tempfile.TemporaryDirectory() as scratch:
        print(json.dumps(soak(arguments[2] if len(arguments) > 2 else scratch, arguments[0] if arguments else 'mixed',
                              int(arguments[1]) if len(arguments) > 1 else EPISODES)))
