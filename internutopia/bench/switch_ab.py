"""A runtime switch of the vector step turned on and off in one process.

Some of the step's savings have a switch that leaves every result the same (bit for bit, each
with its test): the fused quiet physics steps of an action repeat (``fuse_steps``:
``Runner.fuse_steps``, docs/extensions.md), the reset's forward passes run only when a
derived field is read (``defer_forward``: ``Pack.defer_forward``, docs/backend.md) and a task's
control tick in one compiled pass (``one_pass``: a task class's ``one_pass``, the walking
envs' ``LocomotionTask``, docs/performance.md). This times a
Gymnasium vector env's step with one switch on and off in alternating blocks of the same process,
on the same kind of motion (random actions), so the host's drift between processes does not
enter the comparison: each pair of adjacent blocks gives one ratio (on over off), and the median
of the pairs is the figure.

    python -m internutopia.bench.gym_step --ab fuse_steps --ids internutopia/H1Walk-v0,internutopia/AliengoWalk-v0
    python -m internutopia.bench.gym_step --ab defer_forward --ids internutopia/H1Walk-v0
    python -m internutopia.bench.gym_step --ab one_pass --ids internutopia/H1Walk-v0
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from internutopia.bench.fresh import DEFAULT_TIMEOUT_S, run_in_fresh_process
from internutopia.bench.paired import time_calls
from internutopia.bench.random_actions import warmed_random_actions

__all__ = ['PAIRS', 'SWITCHES', 'format_switch_ab', 'measure_switch_ab']

#: Pairs of blocks a measurement times by default.
PAIRS = 20


def _fuse_steps(runner: Any, on: bool) -> None:
    runner.fuse_steps = on


def _defer_forward(runner: Any, on: bool) -> None:
    for pack in runner.world.packs.values():  # (a Gymnasium id's world holds its one structure from the start)
        pack.defer_forward = on


def _one_pass(runner: Any, on: bool) -> None:
    tasks = [task for task in runner.terms.tasks.values() if hasattr(type(task), 'one_pass')]
    if not tasks:
        raise ValueError(f'no task of this env has a one_pass switch (its tasks: {sorted(runner.terms.tasks)})')
    for task in tasks:
        task.one_pass = on


#: Switch name -> a function setting it on a vector env's runner.
SWITCHES: dict[str, Callable[[Any, bool], None]] = {'fuse_steps': _fuse_steps, 'defer_forward': _defer_forward,
                                                    'one_pass': _one_pass}


def _switch_ab(env_id: str, switch: str, num_envs: int, pairs: int, steps: int) -> dict[str, Any]:
    import gymnasium as gym

    import internutopia.envs  # noqa: F401  (registers the ids)

    turn = SWITCHES[switch]
    env = gym.make_vec(env_id, num_envs=num_envs)
    inner: Any = env.unwrapped  # internutopia's VectorEnv
    runner = inner._vec.runner
    physics: dict[str, float] = {}
    calls: dict[str, int] = {}
    # (the physics calls: steps, and an action repeat run as one recorded call)
    time_calls(physics, runner.world, 'step', 'physics', calls)
    time_calls(physics, runner.world, 'rollout', 'physics', calls)
    try:
        env.reset(seed=0)
        actions = warmed_random_actions(env, 30)
        seconds = {True: np.empty(pairs), False: np.empty(pairs)}
        shares = {True: np.empty(pairs), False: np.empty(pairs)}
        per_call = {True: 0, False: 0}
        for pair in range(pairs):
            for on in ((True, False) if pair % 2 else (False, True)):  # (each goes first in half the pairs)
                turn(runner, on)
                physics.clear()
                calls.clear()
                began = time.perf_counter()
                for k in range(steps):
                    env.step(actions[k % len(actions)])
                spent = time.perf_counter() - began
                seconds[on][pair], shares[on][pair] = spent / steps, physics.get('physics', 0.0) / spent
                per_call[on] += calls.get('physics', 0)
    finally:
        env.close()
    ratios = seconds[True] / seconds[False]
    return {'id': env_id, 'switch': switch, 'num_envs': num_envs, 'pairs': pairs, 'steps_per_block': steps,
            'vector_step_ms_off': float(np.median(seconds[False]) * 1e3),
            'vector_step_ms_on': float(np.median(seconds[True]) * 1e3),
            'on_over_off': float(np.median(ratios)), 'ratio_q1': float(np.percentile(ratios, 25)),
            'ratio_q3': float(np.percentile(ratios, 75)),
            'physics_share_off': float(np.median(shares[False])), 'physics_share_on': float(np.median(shares[True])),
            'physics_calls_per_vector_step_off': per_call[False] / (pairs * steps),
            'physics_calls_per_vector_step_on': per_call[True] / (pairs * steps)}


def measure_switch_ab(env_id: str, num_envs: int = 64, switch: str = 'fuse_steps', pairs: int = PAIRS, steps: int = 40,
                      timeout_s: float | None = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """``pairs`` pairs of blocks of ``steps`` vector steps of ``env_id`` with ``switch`` (a name of
    :data:`SWITCHES`) on and off, in a fresh process: the medians of each, the median ratio of the
    pairs (on over off: below 1 is faster) with its quartiles, the physics share of each and their
    physics calls per vector step."""
    if switch not in SWITCHES:
        raise ValueError(f'unknown switch {switch!r}; valid switches: {sorted(SWITCHES)}')
    return run_in_fresh_process(_switch_ab, env_id, switch, num_envs, pairs, steps,
                                what=f'{switch} A/B {env_id} x{num_envs}', timeout_s=timeout_s)


def format_switch_ab(row: dict[str, Any]) -> str:
    """One progress line of a :func:`measure_switch_ab` row."""
    return (f"{row['id']} x{row['num_envs']}, {row['switch']}: {row['vector_step_ms_off']:.2f} ms off, "
            f"{row['vector_step_ms_on']:.2f} ms on: {row['on_over_off']:.3f} "
            f"(IQR {row['ratio_q1']:.3f}-{row['ratio_q3']:.3f}); physics share {row['physics_share_off']:.2f} -> "
            f"{row['physics_share_on']:.2f}; physics calls per vector step "
            f"{row['physics_calls_per_vector_step_off']:.2f} -> {row['physics_calls_per_vector_step_on']:.2f}")
