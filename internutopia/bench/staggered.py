"""What slots whose episodes started at different times cost a walking robot's step.

A walking robot's policy ticks on each slot's own clock, counted from that slot's episode start
(:mod:`internutopia_extension.robots.policy_clock`), so that an episode walks the same path
whenever it starts. Slots started together tick together: one network call a tick for all of
them. Slots started a physics step or two apart tick on different physics steps, each schedule
its own network call on fewer rows. The main benchmark starts every episode together; this tool
times that against the other extreme, side by side in one process:

- ``together``: the case's env, every slot started by one reset (the main benchmark's run);
- ``staggered``: the same case with its slots started in ``--groups`` groups, one physics step
  apart (slot ``s`` in group ``s % groups``), so their ticks fall on as many different steps.

Both envs step the same actions in alternating blocks (each first in half the pairs); a pair's
ratio is staggered over together, the figure the median of the pairs with its quartiles. The
network calls a step makes are counted on each side (``onnxruntime``'s ``run``), so the cost
reads against its cause::

    python -m internutopia.bench.staggered --robots h1_walking,g1 --env-nums 64 --api dict,array
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from internutopia.bench import options
from internutopia.bench.fresh import DEFAULT_TIMEOUT_S, run_in_fresh_process
from internutopia.bench.paired import time_calls
from internutopia.core.backend.mujoco.render.gl import default_to_egl

__all__ = ['GROUPS', 'format_row', 'main', 'measure_staggered']

#: Start groups by default: the walking H1's and G1's tick (50 Hz) spans 4.8 physics steps at 240 Hz,
#: so five groups one physics step apart put ticks on every step of a tick's span.
GROUPS = 5


def _staggered_starts(env: Any, step: Any, groups: int) -> None:
    """Restart every slot outside group 0 at its group's physics step (slot ``s``: group ``s % groups``)."""
    for group in range(1, groups):
        step()
        env.reset([slot for slot in range(env.env_num) if slot % groups == group])


def _measure(case_name: str, env_num: int, api: str, groups: int, pairs: int, steps: int) -> dict[str, Any]:
    import onnxruntime

    from internutopia.bench.cases import get_case
    from internutopia.core.vec_env import Env
    from internutopia_extension import import_extensions

    import_extensions()
    case = get_case(case_name)
    base = case.config(env_num, 'off')
    # (room in the queue for the staggered env's second starts: every slot but group 0's)
    config = base.model_copy(update={'task_configs': list(base.task_configs) * 2})
    envs = {'together': Env(config), 'staggered': Env(config)}
    spent: dict[str, float] = {}
    calls: dict[str, int] = {}
    own_run = vars(onnxruntime.InferenceSession).get('run')  # (None: inherited, as onnxruntime defines it)
    time_calls(spent, onnxruntime.InferenceSession, 'run', 'network', calls)  # (every session's calls counted)
    try:
        steppers = {}
        for name, env in envs.items():
            if api == 'dict':
                actions = case.dict_actions(env_num)
                steppers[name] = lambda env=env, actions=actions: env.step(actions)
            else:
                batched = case.array_action(env_num)
                steppers[name] = lambda env=env, batched=batched: env.step_arrays(batched)
            env.reset()
        _staggered_starts(envs['staggered'], steppers['staggered'], groups)
        for name in envs:  # (warm: the network's threads, the physics' caches)
            for _ in range(steps):
                steppers[name]()
        seconds = {name: np.empty(pairs) for name in envs}
        network_calls = dict.fromkeys(envs, 0)
        for pair in range(pairs):
            for name in (('together', 'staggered') if pair % 2 else ('staggered', 'together')):
                calls.clear()
                began = time.perf_counter()
                for _ in range(steps):
                    steppers[name]()
                seconds[name][pair] = (time.perf_counter() - began) / steps
                network_calls[name] += calls.get('network', 0)
        running = {name: len(env.active_slots) for name, env in envs.items()}
    finally:
        if own_run is None:
            del onnxruntime.InferenceSession.run
        else:
            onnxruntime.InferenceSession.run = own_run
        for env in envs.values():
            env.close()
    if running['together'] != env_num or running['staggered'] != env_num:
        raise RuntimeError(f'episodes ended while timed ({running} of {env_num} slots running): '
                           'the case must keep its episodes for the whole run')
    ratios = seconds['staggered'] / seconds['together']
    return {'robot': case_name, 'env_num': env_num, 'api': api, 'groups': groups, 'pairs': pairs, 'steps_per_block': steps,
            'step_us_together': float(np.median(seconds['together']) * 1e6),
            'step_us_staggered': float(np.median(seconds['staggered']) * 1e6),
            'staggered_over_together': float(np.median(ratios)), 'ratio_q1': float(np.percentile(ratios, 25)),
            'ratio_q3': float(np.percentile(ratios, 75)),
            'network_calls_per_step_together': network_calls['together'] / (pairs * steps),
            'network_calls_per_step_staggered': network_calls['staggered'] / (pairs * steps)}


def measure_staggered(case: str, env_num: int = 64, api: str = 'dict', groups: int = GROUPS, pairs: int = 20,
                      steps: int = 48, timeout_s: float | None = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """``pairs`` pairs of blocks of ``steps`` steps of ``case`` (a name of
    :data:`~internutopia.bench.cases.CASES`) with ``env_num`` slots started together and started
    in ``groups`` groups a physics step apart, in a fresh process: each side's median step, the
    median ratio of the pairs (staggered over together) with its quartiles, and the network calls
    each side makes a step."""
    if api not in ('dict', 'array'):
        raise ValueError(f"unknown api {api!r}; valid: 'dict', 'array'")
    if groups < 1 or groups > env_num:
        raise ValueError(f'groups must be between 1 and env_num ({env_num}); got {groups}')
    return run_in_fresh_process(_measure, case, env_num, api, groups, pairs, steps,
                                what=f'staggered starts {case} x{env_num} {api}', timeout_s=timeout_s)


def format_row(row: dict[str, Any]) -> str:
    """One progress line of a :func:`measure_staggered` row."""
    return (f"{row['robot']:>10s} x{row['env_num']:<3d} {row['api']:5s} {row['groups']} start groups: "
            f"{row['step_us_together']:8.1f} us together, {row['step_us_staggered']:8.1f} us staggered: "
            f"{row['staggered_over_together']:.3f} (IQR {row['ratio_q1']:.3f}-{row['ratio_q3']:.3f}); network calls a step "
            f"{row['network_calls_per_step_together']:.2f} -> {row['network_calls_per_step_staggered']:.2f}")


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(prog='python -m internutopia.bench.staggered', description=__doc__.split('\n')[0])
    options.add_case_options(parser, robots='h1_walking', env_nums='64')
    options.add_api_option(parser, 'dict')
    parser.add_argument('--groups', type=int, default=GROUPS, help=f'start groups, one physics step apart (default: {GROUPS})')
    parser.add_argument('--pairs', type=int, default=20, help='timed pairs of blocks (default: 20)')
    parser.add_argument('--steps', type=int, default=48, help='steps per block (default: 48, ten ticks of a 50 Hz policy at 240 Hz)')
    parser.add_argument('--json', action='store_true', help='also print the rows as one JSON line')
    args = parser.parse_args(argv)
    from internutopia.bench.cases import CASES

    robots, env_nums = options.checked_cases(parser, args, CASES)
    apis = options.checked_apis(parser, args)
    options.at_least(parser, '--groups', args.groups)
    options.at_least(parser, '--pairs', args.pairs)
    options.at_least(parser, '--steps', args.steps)
    if args.groups > min(env_nums):
        parser.error(f'--groups {args.groups} is more than the slots of --env-nums {min(env_nums)}')
    default_to_egl(headless_only=False)
    rows: list[dict[str, Any]] = []
    for robot in robots:
        for env_num in env_nums:
            for api in apis:
                row = measure_staggered(robot, env_num, api, args.groups, args.pairs, args.steps)
                print(format_row(row), flush=True)
                rows.append(row)
    if args.json:
        print(options.json_line(rows))
    return rows


if __name__ == '__main__':
    options.interrupted('python -m internutopia.bench.staggered', main)
