"""The fused physics steps of an action repeat, switched on and off in one process.

A Gymnasium vector env whose action repeat has quiet physics steps (the walking ids) advances
them in one call (``Runner.fuse_steps``, see docs/extensions.md). This times its vector step
with the fusing on and off in alternating blocks of the same process, on the same episodes'
kind of motion (random actions), so the host's drift between processes does not enter the
comparison: each pair of adjacent blocks gives one ratio (fused over one-by-one), and the
median of the pairs is the figure.

    python -m internutopia.bench.gym_step --fused-ab --ids internutopia/H1Walk-v0,internutopia/AliengoWalk-v0
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from internutopia.bench.fresh import DEFAULT_TIMEOUT_S, run_in_fresh_process
from internutopia.bench.random_actions import warmed_random_actions

__all__ = ['format_fused_ab', 'measure_fused_ab']


def _fused_ab(env_id: str, num_envs: int, pairs: int, steps: int) -> dict[str, Any]:
    import gymnasium as gym

    import internutopia.envs  # noqa: F401  (registers the ids)

    env = gym.make_vec(env_id, num_envs=num_envs)
    inner: Any = env.unwrapped  # internutopia's VectorEnv
    runner = inner._vec.runner
    world_step, physics, calls = runner.world.step, [0.0], [0]

    def timed_step(count: int = 1) -> None:
        began = time.perf_counter()
        world_step(count)
        physics[0] += time.perf_counter() - began
        calls[0] += 1

    runner.world.step = timed_step
    env.reset(seed=0)
    actions = warmed_random_actions(env, 30)
    seconds = {True: np.empty(pairs), False: np.empty(pairs)}
    shares = {True: np.empty(pairs), False: np.empty(pairs)}
    per_call = {True: 0, False: 0}
    for pair in range(pairs):
        for fused in ((True, False) if pair % 2 else (False, True)):  # (each goes first in half the pairs)
            runner.fuse_steps = fused
            physics[0], calls[0] = 0.0, 0
            began = time.perf_counter()
            for k in range(steps):
                env.step(actions[k % len(actions)])
            spent = time.perf_counter() - began
            seconds[fused][pair], shares[fused][pair] = spent / steps, physics[0] / spent
            per_call[fused] += calls[0]
    env.close()
    ratios = seconds[True] / seconds[False]
    return {'id': env_id, 'num_envs': num_envs, 'pairs': pairs, 'steps_per_block': steps,
            'vector_step_ms_one_by_one': float(np.median(seconds[False]) * 1e3),
            'vector_step_ms_fused': float(np.median(seconds[True]) * 1e3),
            'fused_over_one_by_one': float(np.median(ratios)), 'ratio_q1': float(np.percentile(ratios, 25)),
            'ratio_q3': float(np.percentile(ratios, 75)),
            'physics_share_one_by_one': float(np.median(shares[False])), 'physics_share_fused': float(np.median(shares[True])),
            'physics_calls_per_vector_step_one_by_one': per_call[False] / (pairs * steps),
            'physics_calls_per_vector_step_fused': per_call[True] / (pairs * steps)}


def measure_fused_ab(env_id: str, num_envs: int = 64, pairs: int = 20, steps: int = 40,
                     timeout_s: float | None = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """``pairs`` pairs of blocks of ``steps`` vector steps of ``env_id``, fused and one by one, in
    a fresh process: the medians of each, the median ratio of the pairs (fused over one by one:
    below 1 is faster) with its quartiles, the physics share of each and their physics calls per
    vector step."""
    return run_in_fresh_process(_fused_ab, env_id, num_envs, pairs, steps,
                                what=f'fused steps A/B {env_id} x{num_envs}', timeout_s=timeout_s)


def format_fused_ab(row: dict[str, Any]) -> str:
    """One progress line of a :func:`measure_fused_ab` row."""
    return (f"{row['id']} x{row['num_envs']}: {row['vector_step_ms_one_by_one']:.2f} ms one by one, "
            f"{row['vector_step_ms_fused']:.2f} ms fused: {row['fused_over_one_by_one']:.3f} "
            f"(IQR {row['ratio_q1']:.3f}-{row['ratio_q3']:.3f}); physics calls per vector step "
            f"{row['physics_calls_per_vector_step_one_by_one']:.2f} -> {row['physics_calls_per_vector_step_fused']:.2f}")
