"""The locomotion task's control tick in one compiled pass (``LocomotionTask.one_pass``,
:func:`~internutopia_extension.robots.locomotion_rewards_kernel.tick_rows`): the walker's state,
the payment, the falls and what is due, with every result bit for bit that of the step taken piece
by piece (falls, time limits, goal steering, pushes and commands due included)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from test_fused_steps import _same

import internutopia.core.util.jit as jit
import internutopia.envs  # noqa: F401  (registers the ids)
from internutopia_extension.robots import locomotion_rewards_kernel
from internutopia_extension.robots.locomotion_rewards_kernel import CompiledPayment
from internutopia_extension.tasks.locomotion import LocomotionTask

pytestmark = pytest.mark.skipif(not locomotion_rewards_kernel._tick_kernel.available, reason='the one pass needs numba')


def _run(env_id: str, one_pass: bool, vector_steps: int, monkeypatch, **kwargs) -> tuple[list, int]:
    """Every result of ``vector_steps`` random vector steps (a push made due inside an action in
    slot 2 at step 5), the task's tables at the end, and how many ticks ran in one pass."""
    ticks = [0]
    tick = CompiledPayment.tick

    def counted(self, *args):
        ticks[0] += 1
        return tick(self, *args)

    monkeypatch.setattr(CompiledPayment, 'tick', counted)
    monkeypatch.setattr(LocomotionTask, 'one_pass', one_pass)
    env = gym.make_vec(env_id, num_envs=4, **kwargs)
    runner = env.unwrapped.vec_env.runner
    results = [env.reset(seed=5)]
    rng = np.random.default_rng(1)
    for k in range(vector_steps):
        if k == 5:
            task = runner.terms.tasks['LocomotionTask']
            task.next_push[2] = runner.table.steps[2] + 2
            task._quiet_slots = None
        results.append(env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)))
    task = runner.terms.tasks['LocomotionTask']
    results.append([task.terms_table, task.tracking_error, task.yaw_rate_error, task.fell, task.goal_index, task.next_push,
                    task.next_command])  # (the ended episodes' records are in the infos: their metrics)
    env.close()
    return results, ticks[0]


@pytest.mark.parametrize(('env_id', 'steps', 'kwargs'), [
    ('internutopia/H1Walk-v0', 120, {}),
    ('internutopia/H1Walk-v0', 120, {'seconds': 0.2}),  # (time limits: every episode ends on its last step)
    ('internutopia/AliengoWalk-v0', 80, {}),
    ('internutopia/GR1Walk-v0', 40, {}),
])
def test_a_walking_tick_in_one_pass_gives_every_result_of_the_step_piece_by_piece(env_id, steps, kwargs, monkeypatch):
    piece_by_piece, none = _run(env_id, False, steps, monkeypatch, **kwargs)
    one_pass, ticks = _run(env_id, True, steps, monkeypatch, **kwargs)
    assert none == 0 and ticks >= steps  # (every vector step's tick went through it)
    assert _same(piece_by_piece, one_pass)  # observations, rewards, flags, infos, records, the task's tables
    ended = sum(int(np.count_nonzero(step[2] | step[3])) for step in one_pass[1:-1])
    assert ended > 0  # (falls or time limits: the pass's terminations and truncations were compared)


def test_a_kernel_may_compile_in_kernels_of_its_own_file_only():
    def outer(values):  # pragma: no cover - never compiled
        return inner(values)  # noqa: F821

    with pytest.raises(ValueError, match='uses inner .* from another file'):
        jit.Kernel(outer, uses={'inner': locomotion_rewards_kernel.STATE_KERNEL})
