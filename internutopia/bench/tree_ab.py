"""The Gymnasium vector step of two source trees of this project, in lockstep.

A change that saves a few percent of a vector step cannot be seen by timing each tree in its own
run: on a shared host the speed of one process against the next drifts by more than that. Here
each tree steps the same id in its own process, both built before any timing, and the two take
turns: one block of vector steps in one, then one in the other (each goes first in half the
pairs), so both see the same host. Each pair of adjacent blocks gives a ratio (this tree's step
time over the other's) and the median over the pairs is the figure, with each tree's physics
share (time inside the world's step over the vector step).

    python -m internutopia.bench.tree_ab --before /tmp/old-checkout --ids internutopia/H1Walk-v0

``--before`` is a checkout of this project (e.g. ``git worktree add /tmp/old HEAD~3``); the
other tree is this one (``--after`` to name another). The workers run code sent to them, not
modules of either tree, so any two versions that build the id can be compared. ``--ids`` are
checked against the ids each of the two trees registers (not the running tree's): an id one tree
lacks is refused, naming that tree.

``--robots CASES`` compares ``vec_env.Env``'s own step instead, a benchmark case of
:mod:`internutopia.bench.cases` (as ``python -m internutopia.bench --robots`` runs it, each tree's
own case) through ``--api`` ``array`` (``step_arrays``) or ``dict`` (``step``): the absolute speed
of two trees, which their ratios to the physics limit do not give when the physics itself changed
between them (a faster physics step lowers ours over the limit though ours got no slower)::

    python -m internutopia.bench.tree_ab --before /tmp/old-checkout --robots jetbot,h1 --num-envs 64 --api array,dict
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from internutopia.bench import options
from internutopia.bench.paired import summarize

__all__ = ['APIS', 'PAIRS', 'measure_tree_ab', 'tree_cases', 'tree_ids']

#: Pairs of blocks a measurement times by default.
PAIRS = 40
#: Vector steps per block by default.
STEPS = 20
#: Seconds a worker may take to start, or to step one block, before the measurement fails.
TIMEOUT_S = 600.0

# The workers: build the id (or the benchmark case), wrap the world's step with a timer, warm up,
# then step a block per line read ("N": N steps; answers "seconds physics_seconds"), until "quit".
_GYM_WORKER_HEAD = r'''
import sys, time
import numpy as np
import gymnasium as gym
import internutopia.envs  # (registers the ids)
env = gym.make_vec(sys.argv[1], num_envs=int(sys.argv[2]))
runner = env.unwrapped.vec_env.runner
env.reset(seed=0)
space = env.action_space
rng = np.random.default_rng(0)
actions = [rng.uniform(space.low, space.high).astype(space.dtype) for _ in range(64)]
count = [0]
def step():
    env.step(actions[count[0] % 64])
    count[0] += 1
'''
_CASE_WORKER_HEAD = r'''
import sys, time
from internutopia.bench.cases import get_case
from internutopia.core.vec_env import Env
case, env_num, api = get_case(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
env = Env(case.config(env_num, 'off'))
runner = env.runner
env.reset()
if api == 'array':
    action = case.array_action(env_num)
    def step():
        env.step_arrays(action)
else:
    action = case.dict_actions(env_num)
    def step():
        env.step(action=action)
'''
_WORKER_LOOP = r'''
physics = [0.0]
def timed(call):
    def physics_call(*args):
        began = time.perf_counter()
        try:
            return call(*args)
        finally:
            physics[0] += time.perf_counter() - began
    return physics_call
# (the physics calls: steps, and an action repeat run as one recorded call, which older trees lack;
# written out here, not imported: the worker runs on either tree)
runner.world.step = timed(runner.world.step)
if hasattr(runner.world, 'rollout'):
    runner.world.rollout = timed(runner.world.rollout)
for _ in range(30):
    step()
print('ready', flush=True)
for line in sys.stdin:
    if line.strip() == 'quit':
        break
    physics[0] = 0.0
    began = time.perf_counter()
    for _ in range(int(line)):
        step()
    print(time.perf_counter() - began, physics[0], flush=True)
env.close()
'''

#: The APIs of ``vec_env.Env`` a benchmark case is compared through.
APIS = ('array', 'dict')


# What a tree has: the ids of its ``internutopia.envs``, or its benchmark cases, as a JSON list.
_IDS = r'''
import json
import gymnasium
import internutopia.envs
print(json.dumps(sorted(k for k in gymnasium.registry if k.startswith('internutopia/'))))
'''
_CASES = r'''
import json
from internutopia.bench.cases import CASES
print(json.dumps(sorted(CASES)))
'''


def _running_tree() -> Path:
    """The checkout this process imported ``internutopia`` from."""
    return Path(__file__).resolve().parents[2]


def tree_ids(tree: str | Path, timeout_s: float = TIMEOUT_S) -> list[str]:
    """The Gymnasium ids checkout ``tree`` registers (``import internutopia.envs`` there), as its
    workers see them: asked of a process running that tree, unless it is the one running now.

    Raises:
        RuntimeError: the tree's ``internutopia.envs`` cannot be imported (the error's last line).
    """
    tree = Path(tree).resolve()
    if tree == _running_tree():  # (asked here: a bad --ids is refused before any process starts)
        from internutopia.envs.ids import registered_ids  # (importing internutopia.envs registers this tree's ids)

        return registered_ids()
    return _asked(tree, _IDS, 'internutopia.envs', timeout_s)


def tree_cases(tree: str | Path, timeout_s: float = TIMEOUT_S) -> list[str]:
    """The benchmark cases of checkout ``tree`` (its ``internutopia.bench.cases``), as
    :func:`tree_ids` finds its ids.

    Raises:
        RuntimeError: the tree's ``internutopia.bench.cases`` cannot be imported (the error's last line).
    """
    tree = Path(tree).resolve()
    if tree == _running_tree():
        from internutopia.bench.cases import CASES

        return sorted(CASES)
    return _asked(tree, _CASES, 'internutopia.bench.cases', timeout_s)


def _asked(tree: Path, script: str, module: str, timeout_s: float) -> list[str]:
    """The JSON list ``script`` prints in a process running ``tree`` (which imports ``module``)."""
    environ = {**os.environ, 'PYTHONPATH': str(tree)}
    done = subprocess.run([sys.executable, '-c', script], cwd=tree, env=environ, capture_output=True, text=True,
                          timeout=timeout_s)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise RuntimeError(f'tree {tree}: cannot import {module} ({lines[-1] if lines else "no error text"})')
    return json.loads(done.stdout.strip().splitlines()[-1])


def _answer(worker: subprocess.Popen, timeout_s: float, what: str) -> str:
    """The worker's next line, or a ``RuntimeError`` when none comes within ``timeout_s``."""
    assert worker.stdout is not None
    ready, _, _ = select.select([worker.stdout], [], [], timeout_s)
    line = worker.stdout.readline() if ready else ''
    if not line:
        raise RuntimeError(f'{what}: no answer within {timeout_s:.0f} s (the worker crashed, hung or ran out of memory)')
    return line


def _start(tree: Path, target: str, num_envs: int, api: str | None, timeout_s: float) -> subprocess.Popen:
    environ = {**os.environ, 'PYTHONPATH': str(tree), 'MUJOCO_GL': os.environ.get('MUJOCO_GL', 'egl')}
    script, arguments = ((_GYM_WORKER_HEAD, [target, str(num_envs)]) if api is None
                         else (_CASE_WORKER_HEAD, [target, str(num_envs), api]))
    # (a worker reads its blocks from a pipe: when this process ends, the pipe closes and it stops)
    worker = subprocess.Popen([sys.executable, '-c', script + _WORKER_LOOP, *arguments], cwd=tree, env=environ, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    what = target if api is None else f'{target} ({api} API)'
    try:
        started = _answer(worker, timeout_s, f'the worker of tree {tree} starting {what}').strip() == 'ready'
    except RuntimeError:
        started = False
    if not started:
        worker.kill()
        worker.wait()
        raise RuntimeError(f'the worker of tree {tree} did not start {what} (run it there by hand to see why)')
    return worker


def _block(worker: subprocess.Popen, steps: int, timeout_s: float) -> tuple[float, float]:
    assert worker.stdin is not None
    worker.stdin.write(f'{steps}\n')
    worker.stdin.flush()
    answer = _answer(worker, timeout_s, f'a block of {steps} vector steps').split()
    return float(answer[0]), float(answer[1])


def measure_tree_ab(before: str | Path, after: str | Path, env_id: str, num_envs: int = 64, pairs: int = PAIRS,
                    steps: int = STEPS, timeout_s: float = TIMEOUT_S, api: str | None = None) -> dict[str, Any]:
    """``pairs`` pairs of blocks of ``steps`` vector steps of ``env_id`` in tree ``before`` and in
    tree ``after``, taking turns: each tree's median vector step and physics share, and the median
    ratio of the pairs (after over before: below 1 is faster) with its quartiles. With ``api``
    (one of :data:`APIS`), ``env_id`` is a benchmark case instead, stepped through that API of
    ``vec_env.Env`` at ``num_envs`` slots (a vector step: one step of every slot). A worker that
    does not start, or step a block, within ``timeout_s`` fails the measurement (``RuntimeError``);
    no worker outlives the call."""
    if api is not None and api not in APIS:
        raise ValueError(f'api must be one of {APIS} (or None for a Gymnasium id); got {api!r}')
    trees = {'before': Path(before).resolve(), 'after': Path(after).resolve()}
    for tree in trees.values():
        if not (tree / 'internutopia' / '__init__.py').is_file():
            raise ValueError(f'{tree} is not a checkout of this project (no internutopia/__init__.py)')
    workers: dict[str, subprocess.Popen] = {}
    try:
        for name, tree in trees.items():
            workers[name] = _start(tree, env_id, num_envs, api, timeout_s)
        seconds = {name: np.empty(pairs) for name in trees}
        shares = {name: np.empty(pairs) for name in trees}
        for pair in range(pairs):
            for name in (('before', 'after') if pair % 2 else ('after', 'before')):
                spent, physics = _block(workers[name], steps, timeout_s)
                seconds[name][pair], shares[name][pair] = spent / steps, physics / spent
    finally:
        for worker in workers.values():
            try:
                assert worker.stdin is not None
                worker.stdin.write('quit\n')
                worker.stdin.close()
                worker.wait(timeout=60)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                worker.kill()
                worker.wait()
    # (the paired benchmark's summary of ratios: its "limit over ours" is here after over before)
    paired = summarize(seconds['before'], seconds['after'])
    return {'id': env_id, 'api': api, 'num_envs': num_envs, 'pairs': pairs, 'steps_per_block': steps,
            'before': str(trees['before']), 'after': str(trees['after']),
            'vector_step_ms_before': paired['ours_step_s'] * 1e3, 'vector_step_ms_after': paired['limit_step_s'] * 1e3,
            'after_over_before': paired['ratio'], 'ratio_q1': paired['ratio_q1'], 'ratio_q3': paired['ratio_q3'],
            'physics_share_before': float(np.median(shares['before'])),
            'physics_share_after': float(np.median(shares['after'])),
            'load': os.getloadavg()[0]}


def _format(row: dict[str, Any]) -> str:
    api = f" {row['api']}" if row.get('api') else ''
    return (f"{row['id']} x{row['num_envs']}{api}: {row['vector_step_ms_before']:.3f} ms before, "
            f"{row['vector_step_ms_after']:.3f} ms after: {row['after_over_before']:.3f} "
            f"(IQR {row['ratio_q1']:.3f}-{row['ratio_q3']:.3f}); physics share {row['physics_share_before']:.2f} -> "
            f"{row['physics_share_after']:.2f} ({row['pairs']} pairs of {row['steps_per_block']} vector steps, "
            f"load {row['load']:.2f})")


def _checked_names(parser: argparse.ArgumentParser, option: str, names: list[str], trees: dict[str, str],
                   lister: Any, what: str) -> None:
    """Refuse (``parser.error``) each of ``names`` (given with ``option``) that one of ``trees``
    (``{'--before': path, '--after': path}``) lacks, as ``lister(path)`` lists that tree's
    ``what`` (ids, cases): the trees compared, not the one running, since each worker builds its
    own and one it cannot build would fail with no more than "did not start"."""
    known: dict[str, list[str]] = {}
    for tree_option, path in trees.items():
        if path not in known:
            try:
                known[path] = lister(path)
            except (RuntimeError, subprocess.TimeoutExpired, ValueError) as exc:
                parser.error(f'{tree_option} {path}: its {what} cannot be listed: {exc}')
    before, after = known[trees['--before']], known[trees['--after']]
    nowhere = [name for name in names if name not in before and name not in after]
    if nowhere:
        parser.error(f"unknown {what} {nowhere} in {option}: neither tree has them (--before {trees['--before']}, "
                     f"--after {trees['--after']}); their {what}: {sorted(set(before) | set(after))}")
    for tree_option, other in (('--before', '--after'), ('--after', '--before')):
        missing = [name for name in names if name not in known[trees[tree_option]]]
        if missing:
            parser.error(f'{what} {missing} in {option} are not in the {tree_option[2:]} tree {trees[tree_option]} '
                         f'(only in the {other[2:]} tree); {what} of both trees: {sorted(set(before) & set(after))}')


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog='python -m internutopia.bench.tree_ab', description=__doc__.split('\n\n')[0])
    parser.add_argument('--before', required=True, help='a checkout of this project to compare against')
    parser.add_argument('--after', default=str(Path(__file__).resolve().parents[2]), help='the other checkout (default: this one)')
    targets = parser.add_mutually_exclusive_group()
    targets.add_argument('--ids', help='comma-separated Gymnasium ids (default internutopia/H1Walk-v0)')
    targets.add_argument('--robots', help="comma-separated benchmark cases, stepped through vec_env.Env's --api instead")
    parser.add_argument('--api', default='array', help="with --robots: comma-separated, of array (step_arrays), dict (step); default array")
    parser.add_argument('--num-envs', type=int, default=64, help='envs of each vector env, slots of each case (default 64)')
    parser.add_argument('--pairs', type=int, default=PAIRS, help=f'pairs of blocks (default {PAIRS})')
    parser.add_argument('--steps', type=int, default=STEPS, help=f'vector steps per block (default {STEPS})')
    parser.add_argument('--json', action='store_true', help='print each row as a JSON line too')
    args = parser.parse_args(argv)
    for option in ('--num-envs', '--pairs', '--steps'):
        options.at_least(parser, option, getattr(args, option[2:].replace('-', '_')))
    for option in ('--before', '--after'):
        tree = Path(getattr(args, option[2:])).resolve()
        if not (tree / 'internutopia' / '__init__.py').is_file():
            parser.error(f'{option} {tree} is not a checkout of this project (no internutopia/__init__.py)')
    trees = {option: str(Path(getattr(args, option[2:])).resolve()) for option in ('--before', '--after')}
    if args.robots is None:
        if args.api != 'array':
            parser.error('--api goes with --robots (a Gymnasium id is stepped through its vector env)')
        names = options.checked_list(parser, '--ids', options.text_list(args.ids or 'internutopia/H1Walk-v0'), what='id')
        _checked_names(parser, '--ids', names, trees, tree_ids, 'ids')
        runs: list[tuple[str, str | None]] = [(name, None) for name in names]
    else:
        names = options.checked_list(parser, '--robots', options.text_list(args.robots), what='robot')
        apis = options.checked_list(parser, '--api', options.text_list(args.api), choices=APIS, what='API')
        _checked_names(parser, '--robots', names, trees, tree_cases, 'cases')
        runs = [(name, api) for name in names for api in apis]
    for target, api in runs:
        row = measure_tree_ab(args.before, args.after, target, args.num_envs, args.pairs, args.steps, api=api)
        print(_format(row), flush=True)
        if args.json:
            print(options.json_line(row), flush=True)


if __name__ == '__main__':
    options.interrupted('python -m internutopia.bench.tree_ab', main)
