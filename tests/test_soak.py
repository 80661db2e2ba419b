"""Soak: 50,000 short episodes of mixed structures and settings; the memory the process holds stays flat.

Structures change on almost every reset (slots move between packs all the time), every episode
writes a record, slots are reset in random subsets, and one episode in six is a point-nav episode
whose reward and metric settings no other episode shares (a sweep over settings). The process's resident memory, read after a
garbage collection, may not grow by more than a few MB between the end of a 10,000-episode
warm-up and the end of the run. About 60 s on two cores. The test runs it in a fresh interpreter;
``python tests/test_soak.py`` runs it alone and prints its figures.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia.macros import gm
from internutopia_extension.configs.metrics import StepsMetricCfg, SuccessMetricCfg
from internutopia_extension.configs.objects import DynamicCubeCfg, VisualCubeCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.configs.tasks.point_nav_task import PointNavProgressRewardCfg, PointNavTaskCfg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EPISODES = 50_000
WARM_UP = 10_000
ENV_NUM = 16
#: Allowed growth of the resident memory after the warm-up (measured: under 1 MB).
MAX_GROWTH_MB = 5.0


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
    return PointNavTaskCfg(goal=(1.0, 0.0, 0.0), max_steps=1, robots=[JetbotRobotCfg()], reward=reward,
                           metrics=[SuccessMetricCfg(), StepsMetricCfg(metric_config={'sweep': index})])


def soak(tmp_dir: str) -> dict:
    """Run the soak in this process; what it measured."""
    rng = np.random.default_rng(0)
    kinds = structures()
    picks = rng.integers(0, len(kinds) + 1, size=EPISODES)
    source = (kinds[k] if k < len(kinds) else with_own_settings(i) for i, k in enumerate(picks))
    results = os.path.join(tmp_dir, 'results.jsonl')
    config = Config(simulator=SimConfig(physics_dt=1 / 60), env_num=ENV_NUM, metrics_save_path=results,
                    task_configs=kinds[:1])
    finished = 0
    baseline = end = None
    quarters = [time.perf_counter()]
    with Env(config, episodes=source) as env:
        env.reset()
        while env.active_slots:
            _, _, terminated, _, info = env.step([None] * ENV_NUM)
            ended = [slot for slot in range(ENV_NUM) if terminated[slot] and info[slot] is not None]
            finished += len(ended)
            if ended:
                # Idle slots, in a random order, as a training loop might reset them.
                env.reset([int(s) for s in rng.permutation(ended)])
            if baseline is None and finished >= WARM_UP:
                baseline = held_mb()
            if end is None and finished >= EPISODES - 4 * ENV_NUM:  # still every slot busy
                end = held_mb()
            if finished >= len(quarters) * EPISODES // 4:
                quarters.append(time.perf_counter())
        compiles = env.runner.world.compile_count
    with open(results, encoding='utf-8') as stream:
        records = sum(1 for _ in stream)
    seconds = [round(b - a, 2) for a, b in zip(quarters, quarters[1:], strict=False)]
    # (The point-nav episodes are kind 0's structure, a Jetbot on the ground: they compile nothing.)
    return {'finished': finished, 'records': records, 'compiles': compiles, 'structures': len(kinds),
            'baseline_mb': baseline, 'end_mb': end, 'quarter_seconds': seconds}


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists('/proc/self/status'), reason='reads resident memory from /proc')
def test_fifty_thousand_mixed_episodes_hold_no_more_memory(tmp_path):
    # A fresh interpreter: the memory of the tests run before this one is not in the figures.
    run = subprocess.run([sys.executable, __file__, str(tmp_path)], capture_output=True, text=True, timeout=600,
                         env={**os.environ, 'PYTHONPATH': os.pathsep.join(filter(None, [ROOT, os.environ.get('PYTHONPATH')]))})
    assert run.returncode == 0, run.stderr[-3000:]
    figures = json.loads(run.stdout.strip().splitlines()[-1])
    assert figures['finished'] == figures['records'] == EPISODES  # every episode ended once, with its record
    assert figures['compiles'] == figures['structures']  # a structure seen before compiles nothing
    growth = figures['end_mb'] - figures['baseline_mb']
    assert growth < MAX_GROWTH_MB, f'resident memory grew {growth:.1f} MB over the run: {figures}'


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


if __name__ == '__main__':  # python tests/test_soak.py [DIR]: the soak alone, its figures as JSON
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        print(json.dumps(soak(sys.argv[1] if len(sys.argv) > 1 else scratch)))
