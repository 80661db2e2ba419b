"""What a piece of the step's Python costs right after a physics call, against back to back.

A vector step alternates the physics (milliseconds in C, on every core) with our Python. This
times a few pieces of the walking step's Python (the walker's state gathering, the locomotion
task's payment, a plain 30-attribute read) two ways: back to back (the hot cost a profiler of a
loop reports) and each right after something else ran for a while: the pack's physics call, a
sleep, a Python busy loop of the same length, and a sweep of 8 MB of memory. Where the pieces
cost many times their hot figure after every kind of gap, including the sleep and the busy loop
that evict nothing, the cost is the host's, not our memory traffic: data left untouched for a few
milliseconds falls out of the caches (``--gap-lengths`` shows how the cost grows with the gap);
what then counts is how many distinct objects and code paths a step touches, more than its
instructions.

    python -m internutopia.bench.after_physics --json
    python -m internutopia.bench.after_physics --gap-lengths    # the 30-attribute read after busy loops of 0-12 ms
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from internutopia.bench.fresh import DEFAULT_TIMEOUT_S, run_in_fresh_process
from internutopia.bench.random_actions import warmed_random_actions
from internutopia.bench.report import machine

__all__ = ['GAP_LENGTHS_MS', 'GAPS', 'gap_lengths', 'measure_after_physics']

#: The gaps timed before each call, besides none.
GAPS = ('physics call', 'sleep 6 ms', 'Python loop 6 ms', 'sweep of 8 MB')
#: The busy loops' lengths of :func:`gap_lengths`, ms.
GAP_LENGTHS_MS = (0.0, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0)


def _busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _attribute_reader() -> Callable[[], list[int]]:
    """A read of 30 attributes of one object (a small piece of Python touching about 30 objects)."""
    holder = type('Holder', (), {f'field{k}': k for k in range(30)})()
    names = [f'field{k}' for k in range(30)]
    return lambda: [getattr(holder, name) for name in names]


def gap_lengths(calls: int = 200) -> list[dict[str, float]]:
    """The 30-attribute read right after Python busy loops of each of :data:`GAP_LENGTHS_MS`:
    per length, the median and 90th percentile of ``calls`` calls (us) and the share above 10 us.
    A busy loop touches almost nothing of ours, so what grows with its length is how much of our
    data the host's other work has pushed out of the caches meanwhile."""
    read = _attribute_reader()
    for _ in range(1000):
        read()
    rows = []
    for gap_ms in GAP_LENGTHS_MS:
        times = np.empty(calls)
        for k in range(calls):
            _busy(gap_ms / 1000)
            began = time.perf_counter()
            read()
            times[k] = (time.perf_counter() - began) * 1e6
        rows.append({'gap_ms': gap_ms, 'median_us': float(np.median(times)), 'p90_us': float(np.percentile(times, 90)),
                     'share_above_10_us': float(np.mean(times > 10.0))})
    return rows


def _after_physics(env_id: str, num_envs: int, calls: int) -> dict[str, Any]:
    import gymnasium as gym

    import internutopia.envs  # noqa: F401  (registers the ids)

    env = gym.make_vec(env_id, num_envs=num_envs)
    env.reset(seed=0)
    warmed_random_actions(env, 20)
    runner: Any = env.unwrapped._vec.runner  # type: ignore[attr-defined]
    task = runner.terms.tasks.get('LocomotionTask')
    if task is None:
        env.close()
        raise ValueError(f'{env_id} runs no locomotion task; use a walking id (internutopia/H1Walk-v0, '
                         'internutopia/AliengoWalk-v0, internutopia/GR1Walk-v0)')
    walker = next(iter(runner.groups.robots.values())).walker
    slots = np.arange(num_envs, dtype=np.intp)
    span = np.full(num_envs, 4)
    memory = np.zeros(1_000_000)
    pieces: dict[str, Callable[[], Any]] = {
        'walker state': lambda: walker.state(slots),
        'locomotion payment': lambda: task._pay(slots, span),
        'read 30 attributes': _attribute_reader(),
    }
    gaps: dict[str, Callable[[], Any]] = {
        'physics call': lambda: runner.world.step(4),
        'sleep 6 ms': lambda: time.sleep(0.006),
        'Python loop 6 ms': lambda: _busy(0.006),
        'sweep of 8 MB': lambda: np.add(memory, 1.0, out=memory),
    }
    rows = []
    for piece, call in pieces.items():
        for _ in range(50):
            call()
        began = time.perf_counter()
        for _ in range(calls * 5):
            call()
        row = {'piece': piece, 'back_to_back_us': (time.perf_counter() - began) / (calls * 5) * 1e6}
        for gap, before in gaps.items():
            spent = 0.0
            for _ in range(calls):
                before()
                began = time.perf_counter()
                call()
                spent += time.perf_counter() - began
            row[f'after {gap} us'] = spent / calls * 1e6
        rows.append(row)
    env.close()
    return {'id': env_id, 'num_envs': num_envs, 'calls': calls, 'rows': rows}


def measure_after_physics(env_id: str = 'internutopia/H1Walk-v0', num_envs: int = 64, calls: int = 100,
                          timeout_s: float | None = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """Each piece's mean time back to back and after each of :data:`GAPS` (``calls`` calls each),
    in a fresh process (see the module doc)."""
    return run_in_fresh_process(_after_physics, env_id, num_envs, calls, what=f'after-physics timings {env_id}',
                                timeout_s=timeout_s)


def markdown_table(result: dict[str, Any]) -> str:
    """The rows as a markdown table, in microseconds."""
    lines = ['| piece | back to back | ' + ' | '.join(f'after a {gap}' for gap in GAPS) + ' |',
             '|---|---:|' + '---:|' * len(GAPS)]
    for row in result['rows']:
        lines.append(f"| {row['piece']} | {row['back_to_back_us']:.1f} | "
                     + ' | '.join(f"{row[f'after {gap} us']:.1f}" for gap in GAPS) + ' |')
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--id', default='internutopia/H1Walk-v0', help='a walking id (its task is the locomotion task)')
    parser.add_argument('--num-envs', type=int, default=64)
    parser.add_argument('--calls', type=int, default=100, help='timed calls of each piece after each gap')
    parser.add_argument('--gap-lengths', action='store_true',
                        help='instead: the 30-attribute read after Python busy loops of 0-12 ms (no env)')
    parser.add_argument('--json', action='store_true', help='print the figures as one JSON object on the last line')
    args = parser.parse_args(argv)
    if args.num_envs < 1 or args.calls < 1:
        parser.error('--num-envs and --calls must be at least 1')
    first = machine()
    if args.gap_lengths:
        result: dict[str, Any] = {'gap_lengths': gap_lengths(max(args.calls, 200))}
        print('| gap (ms) | median (us) | 90th percentile (us) | share above 10 us |\n|---:|---:|---:|---:|')
        for row in result['gap_lengths']:
            print(f"| {row['gap_ms']:g} | {row['median_us']:.1f} | {row['p90_us']:.1f} | {row['share_above_10_us']:.2f} |")
    else:
        result = measure_after_physics(args.id, args.num_envs, args.calls)
        print(markdown_table(result))
    result.update({'machine': first, 'load_at_end': machine()['load']})
    if args.json:
        print(json.dumps(result))
    return result


if __name__ == '__main__':
    main()
