"""``examples/ray_gym_collect.py``: Gymnasium vector envs on Ray workers, one world each. A
worker's batch is the batch the same rollout gives in this process; the script prints each
worker's env steps and episodes, leaves no Ray behind, and refuses bad arguments before Ray starts."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import psutil
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _example():
    spec = importlib.util.spec_from_file_location('ray_gym_collect_example', ROOT / 'examples' / 'ray_gym_collect.py')
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_a_workers_batch_is_the_batch_this_process_collects(local_ray):
    """The same id, env count, seed and weights: the Ray worker's rollout and this process's are
    equal, observation for observation, over two rounds and across the episodes' ends (the Jetbot's
    point-nav episodes end after 200 vector steps)."""
    import ray

    example = _example()  # (not in sys.modules: Ray sends its classes to the workers by value)
    weights = np.full((17, 2), 0.01, dtype=np.float32)
    here = example.Collector('internutopia/JetbotPointNav-v0', 2, seed=3)
    worker = ray.remote(num_cpus=1)(example.Collector).remote('internutopia/JetbotPointNav-v0', 2, 3)
    try:
        for steps in (120, 100):
            local = here.rollout(weights, steps)
            remote = ray.get(worker.rollout.remote(weights, steps), timeout=300)
            assert local.keys() == remote.keys() == {'obs', 'actions', 'rewards', 'terminated', 'truncated', 'episode_returns'}
            for name in local:
                np.testing.assert_array_equal(local[name], remote[name], err_msg=name)
        assert local['obs'].shape == (100, 2, 17) and local['actions'].shape == (100, 2, 2)
        assert len(local['episode_returns']) == 2  # (both envs' first episodes ended at vector step 200)
    finally:
        here.close()
        ray.get(worker.close.remote(), timeout=60)
        ray.kill(worker)


@pytest.mark.slow
def test_the_script_reports_each_worker_and_leaves_no_ray_running(capsys):
    import ray

    me = psutil.Process()
    children_before = {child.pid for child in me.children(recursive=True)}
    _example().main(['--workers', '2', '--envs-per-worker', '2', '--steps', '110', '--rounds', '2', '--seed', '5'])
    out = capsys.readouterr().out
    for round_number in (1, 2):
        for worker in (0, 1):  # 2 envs x 6 physics steps an action x 110 vector steps
            assert f'round {round_number} worker {worker}: 1,320 env steps' in out
        assert re.search(rf'round {round_number}: 2,640 env steps in [\d.]+ s \([\d,]+ env-steps/s\)', out)
    assert 'round 1 worker 0: 1,320 env steps, 0 episodes ended, mean return n/a' in out
    assert re.search(r'round 2 worker 1: 1,320 env steps, 2 episodes ended, mean return -?\d+\.\d{3}', out)
    assert not ray.is_initialized()
    left = [child for child in me.children(recursive=True) if child.pid not in children_before and child.is_running()
            and child.status() != psutil.STATUS_ZOMBIE]
    assert not left, f'processes left behind: {[child.name() for child in left]}'


@pytest.mark.parametrize(('argv', 'message'), [
    (['--workers', '0'], '--workers must be >= 1; got 0'),
    (['--envs-per-worker', '-1'], '--envs-per-worker must be >= 1; got -1'),
    (['--steps', '0'], '--steps must be >= 1; got 0'),
    (['--seed', '-2'], '--seed must be >= 0; got -2'),
    (['--id', 'internutopia/NoSuch-v0'], "unknown --id 'internutopia/NoSuch-v0'; choose from internutopia/AliengoPointNav-v0"),
])
def test_bad_arguments_are_refused_before_ray_starts(argv, message, capsys):
    import ray

    with pytest.raises(SystemExit) as stopped:
        _example().main(argv)
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err
    assert not ray.is_initialized()
