"""The hand-over benchmark (``internutopia.bench.array_handover``): it steps the case through every
array library installed, says what each one handed over (type and device), and times each step;
the hand-over of one step's results alone is what ``step_arrays(array_backend='torch')`` hands."""

from __future__ import annotations

import json

import numpy as np
import pytest

from internutopia.bench.array_handover import available_array_backends, main, time_results_handover
from internutopia.bench.cases import get_case
from internutopia.core.vec_env import Env


def test_each_installed_library_steps_the_case_and_says_what_it_handed_over(capsys):
    assert main(['--robots', 'jetbot', '--env-nums', '2', '--chunks', '2', '--chunk', '3', '--json']) == 0
    row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (row['robot'], row['env_num'], row['backend'], row['device']) == ('jetbot', 2, 'mujoco', 'cpu')
    assert list(row['per_backend']) == available_array_backends() and row['per_backend']['numpy']['us_over_numpy'] == 0.0
    assert all(figures['us_per_step'] > 0 for figures in row['per_backend'].values())
    assert row['received']['numpy'] == 'observation numpy.ndarray on cpu, reward numpy.ndarray on cpu'
    if 'torch' in row['per_backend']:
        assert row['received']['torch'] == 'observation torch.Tensor on cpu, reward torch.Tensor on cpu'
    assert row['results_alone'] is None  # (timed where results travel to a GPU)


def test_the_results_handed_over_alone_are_every_array_of_a_step():
    pytest.importorskip('torch', reason="torch comes with the 'train' extra")
    case = get_case('jetbot')
    with Env(case.config(2, 'off')) as env:
        env.reset()
        out = env.step_arrays(case.array_action(2))
        alone = time_results_handover(out, 'cpu', reps=3)
    arrays = [out.reward, out.terminated, out.truncated, out.active]
    stack = [out.obs]
    while stack:
        node = stack.pop()
        for value in node.values():
            (stack if isinstance(value, dict) else arrays).append(value)
    assert alone['arrays'] == len(arrays) and alone['bytes'] == sum(np.asarray(a).nbytes for a in arrays) and alone['us'] > 0
