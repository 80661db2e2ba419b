"""Two benchmark cases side by side: how many times one's env step costs the other's.

The main benchmark times each case against the physics limit of its own model, one case after
the other; on a shared machine two cases run a minute apart can see machines 30 % apart, which
hides a difference between the cases. Here both envs live in one process and are stepped in
alternating chunks (:func:`internutopia.bench.paired.time_pairs`: the first case's chunk, then
the second's, one ratio per pair), so each pair compares them on nearly the same machine, and the
median over the pairs is the figure. Used for H1 walking against carried (issue 30: walking must
stay within 2x of carried per step)::

    python -m internutopia.bench.versus h1 h1_walking --env-nums 1,16
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from internutopia.bench.cases import get_case
from internutopia.bench.paired import time_pairs

__all__ = ['compare', 'main']


class _OtherCase:
    """The second case in the place of :func:`time_pairs`' limit: its chunk is the same number of
    steps of its own env (nothing recorded or replayed)."""

    def __init__(self, step: Any) -> None:
        self.step = step
        self.chunk = 0

    def start_round(self, chunk: int) -> None:
        self.chunk = chunk

    def record(self, index: int) -> None:
        pass

    def replay(self) -> float:
        began = time.perf_counter()
        for _ in range(self.chunk):
            self.step()
        return (time.perf_counter() - began) / self.chunk


def _stepper(case_name: str, env_num: int) -> tuple[Any, Any]:
    """A reset env of a case with every slot running, and one ``step_arrays`` call of it."""
    from internutopia.core.vec_env import Env

    case = get_case(case_name)
    env = Env(case.config(env_num, 'off'))
    env.reset()
    action = case.array_action(env_num)
    return env, lambda: env.step_arrays(action)


def compare(first: str, second: str, env_num: int, pairs: int = 30, chunk: int = 20, warmup: int = 100) -> dict[str, Any]:
    """Time ``second``'s env step against ``first``'s at ``env_num`` slots (cameras off, array API).

    Returns ``cost``: the median over the pairs of second's seconds per step over first's (2.0:
    a step of ``second`` costs twice one of ``first``), its interquartile range, and each side's
    median microseconds per step.
    """
    envs = []
    try:
        first_env, first_step = _stepper(first, env_num)
        envs.append(first_env)
        second_env, second_step = _stepper(second, env_num)
        envs.append(second_env)
        for _ in range(warmup):  # compiled kernels, policy sessions and caches warm on both sides
            first_step()
            second_step()
        first_s, second_s, _ = time_pairs(first_step, _OtherCase(second_step), pairs, chunk)
    finally:
        for env in envs:
            env.close()
    costs = second_s / first_s
    q1, median, q3 = np.percentile(costs, [25, 50, 75])
    return {'first': first, 'second': second, 'env_num': env_num, 'cost': float(median), 'cost_q1': float(q1),
            'cost_q3': float(q3), 'first_us': float(np.median(first_s) * 1e6), 'second_us': float(np.median(second_s) * 1e6),
            'pairs': pairs, 'chunk': chunk}


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('first', help='the case the other is measured against (a --robots name of the benchmark)')
    parser.add_argument('second', help='the case whose cost is reported')
    parser.add_argument('--env-nums', default='1,16', help='comma-separated slot counts (default 1,16)')
    parser.add_argument('--pairs', type=int, default=30, help='timed pairs of chunks (default 30)')
    parser.add_argument('--chunk', type=int, default=20, help='steps per chunk (default 20)')
    parser.add_argument('--json', action='store_true', help='print the rows as one JSON list on the last line')
    args = parser.parse_args(argv)
    try:
        env_nums = [int(text) for text in args.env_nums.split(',')]
    except ValueError:
        parser.error(f'--env-nums must be comma-separated integers; got {args.env_nums!r}')
    if any(n < 1 for n in env_nums) or args.pairs < 1 or args.chunk < 1:
        parser.error('--env-nums, --pairs and --chunk must be at least 1')
    for name in (args.first, args.second):
        try:
            get_case(name)
        except ValueError as error:
            parser.error(str(error))
    rows = []
    for env_num in env_nums:
        row = compare(args.first, args.second, env_num, args.pairs, args.chunk)
        rows.append(row)
        print(f"{args.second} vs {args.first} x{env_num}: a step costs {row['cost']:.2f}x "
              f"(IQR {row['cost_q1']:.2f}-{row['cost_q3']:.2f}, {row['pairs']} pairs of {row['chunk']} steps; "
              f"{row['second_us']:.0f} vs {row['first_us']:.0f} us)", flush=True)
    if args.json:
        print(json.dumps(rows))
    return rows


if __name__ == '__main__':
    main()
