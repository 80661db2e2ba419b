"""How close to the limit any Python step could come: a minimal step, timed against the limit.

The main benchmark compares ours with raw ``mujoco.batch`` replaying our controls. That ratio
mixes two things: what any step returning fresh result arrays costs on top of the physics, and
what our layers (the call guard, the action parse, the controllers, the tasks, the observation
tree) add. This tool separates them. It builds a case's env as the benchmark does, then times
three steps of the same world, each against its own :class:`~internutopia.limit.PhysicsLimit`
with the benchmark's paired chunks (:func:`~internutopia.bench.paired.time_pairs`):

- ``ours``: ``env.step_arrays`` with the case's batched action (the benchmark's array row);
- ``floor``: the controls of ours' last step written back, one physics call per pack, and fresh
  copies of each robot group's base pose, joint positions and joint velocities plus the step's
  reward and flags in a dict: the least a step that returns fresh arrays has to do (no action
  parse, no controller, no task);
- ``bare``: the controls written and the physics call, nothing returned.

::

    python -m internutopia.bench.floor --robots h1,jetbot --env-nums 1,64
    python -m internutopia.bench.floor --robots h1 --parts    # where ours' step goes, in situ

``--parts`` times the parts of ours' step instead, inside a run of it with the physics on (a
timer around each: the physics call, the action parse, each controller's apply, the tasks, the
step count, the divergence check, the observation), and gives the rest of the runner's step and
the entry around it (``step_arrays``, the call guard, the result) by difference. Each timer adds
a fraction of a microsecond (a Python call and two clock reads) to the part it wraps.

The floor's ratio is an upper bound for a step of the array API on that host; the distance from
ours to it is our layers' cost, and from it to ``bare`` the result arrays'.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from internutopia.bench.fresh import run_in_fresh_process
from internutopia.bench.paired import summarize, time_calls, time_pairs
from internutopia.core.backend.mujoco.render.gl import default_to_egl

__all__ = ['STEPS', 'floor_rows', 'format_row', 'main', 'part_times']

#: The three steps timed, in order.
STEPS = ('ours', 'floor', 'bare')
#: Pairs timed and thrown away before each step's timing (the limit's first replay starts threads).
WARM_PAIRS = 2


def _steps(env: Any, batched: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """The three steps of ``env`` (reset and stepped): see the module docstring."""
    runner = env.runner
    packs = list(runner.world.packs.values())
    # The controls as ours' last step left them: the floor writes these every step (a command).
    controls = [(pack.data.ctrl, pack.slots, pack.data.ctrl[pack.slots].copy()) for pack in packs]
    groups = [(group.name, group, group.slots, group.joint_qposadr[group.slots], group.joint_dofadr[group.slots])
              for group in runner.groups.robots.values() if len(group.slots)]
    env_num = runner.env_num

    def write_and_step() -> None:
        for ctrl, slots, values in controls:
            ctrl[slots] = values
        for pack in packs:
            pack.step(1)

    def floor() -> tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray]:
        write_and_step()
        obs = {}
        for name, group, slots, qposadr, dofadr in groups:
            position, orientation = group.poses(slots)
            data, rows = group.bound_world.data, slots[:, None]
            obs[name] = {'position': position, 'orientation': orientation,
                         'joint_positions': data.qpos[rows, qposadr], 'joint_velocities': data.qvel[rows, dofadr]}
        return obs, np.zeros(env_num), np.zeros(env_num, dtype=bool), np.zeros(env_num, dtype=bool)

    return {'ours': lambda: env.step_arrays(batched), 'floor': floor, 'bare': write_and_step}


@contextlib.contextmanager
def _warmed_env(case_name: str, env_num: int) -> Iterator[tuple[Any, dict[str, Any]]]:
    """The case's env (cameras off), reset and stepped a while, and its batched action; closed after."""
    from internutopia.bench.cases import get_case
    from internutopia.core.vec_env import Env
    from internutopia_extension import import_extensions

    import_extensions()
    case = get_case(case_name)
    env = Env(case.config(env_num, 'off'))
    try:
        env.reset()
        batched = case.array_action(env_num)
        for _ in range(30):
            env.step_arrays(batched)  # warm: kernels, caches, lazily bound fields
        yield env, batched
    finally:
        env.close()


def _measure(case_name: str, env_num: int, pairs: int, chunk: int) -> dict[str, Any]:
    from internutopia.limit import PhysicsLimit

    with _warmed_env(case_name, env_num) as (env, batched):
        rows = []
        for name, step in _steps(env, batched).items():
            limit = PhysicsLimit(env.runner.world)
            time_pairs(step, limit, WARM_PAIRS, chunk)
            ours, theirs, clean = time_pairs(step, limit, pairs, chunk)
            del limit
            summary = summarize(ours, theirs, clean)
            summary.pop('ratios')
            rows.append({'robot': case_name, 'env_num': env_num, 'step': name, **summary})
        return {'rows': rows}


def _parts(case_name: str, env_num: int, steps: int) -> dict[str, Any]:
    import time

    with _warmed_env(case_name, env_num) as (env, batched):
        runner = env.runner
        spent: dict[str, float] = {}
        clock = time.perf_counter
        timed = functools.partial(time_calls, spent)

        for pack in runner.world.packs.values():
            timed(pack.batch, 'step', 'physics (the batch call)')
        timed(runner.world, 'step', 'world.step')
        timed(runner.actions, 'parse_batched', 'action parse and check')
        timed(runner.terms, 'step', 'tasks, rewards, metrics')
        timed(runner.observer, 'observe_arrays', 'observation tree')
        timed(runner, '_advance', 'runner._advance')
        timed(runner, '_diverged', 'divergence check')
        timed(runner.table, 'count_step', 'step count')
        for group in runner.groups.robots.values():
            for name, controller in group.controllers.items():
                timed(controller, 'apply', f'controller {name!r} apply')
        began = clock()
        for _ in range(steps):
            env.step_arrays(batched)
        total = clock() - began
    per_step = {label: seconds / steps * 1e6 for label, seconds in spent.items()}
    inside = sum(value for label, value in per_step.items()
                 if label not in ('world.step', 'runner._advance', 'observation tree', 'action parse and check')
                 and not label.startswith('physics'))
    per_step['rest of the runner\'s step (robot hooks, bookkeeping)'] = (per_step['runner._advance'] - per_step['world.step'] - inside)
    per_step['world.step around the batch call'] = per_step.pop('world.step') - sum(
        value for label, value in per_step.items() if label.startswith('physics'))
    per_step['entry (step_arrays, guard, result)'] = (total / steps * 1e6 - per_step.pop('runner._advance')
                                                     - per_step['observation tree'] - per_step['action parse and check'])
    return {'robot': case_name, 'env_num': env_num, 'steps': steps, 'step_us': total / steps * 1e6, 'parts_us': per_step}


def part_times(case_name: str, env_num: int, steps: int = 3000, timeout_s: float = 600.0) -> dict[str, Any]:
    """Microseconds per step of each part of ours' array step, in situ (physics on), measured in a
    fresh process: ``step_us`` (the whole step, timers included) and ``parts_us`` by part."""
    return run_in_fresh_process(_parts, case_name, env_num, steps, what=f'parts {case_name} x{env_num}', timeout_s=timeout_s)


def floor_rows(case_name: str, env_num: int, pairs: int = 80, chunk: int = 5, timeout_s: float = 600.0) -> list[dict[str, Any]]:
    """The rows of ``ours``, ``floor`` and ``bare`` for one case and slot count, measured in a
    fresh process (see the module docstring): each with ``ratio`` (the step over the limit, the
    median of the pairs), its IQR and the median seconds per step of each side."""
    return run_in_fresh_process(_measure, case_name, env_num, pairs, chunk, what=f'floor {case_name} x{env_num}',
                                timeout_s=timeout_s)['rows']


def format_row(row: dict[str, Any]) -> str:
    """One line of a row of :func:`floor_rows`."""
    return (f"{row['robot']:>8s} x{row['env_num']:<3d} {row['step']:5s}  step/limit {row['ratio']:.2f} "
            f"(IQR {row['ratio_q1']:.2f}-{row['ratio_q3']:.2f}, {row['clean_pairs']}/{row['pairs']} pairs clean)  "
            f"step {row['ours_step_s'] * 1e6:8.1f} us  limit {row['limit_step_s'] * 1e6:8.1f} us")


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(prog='python -m internutopia.bench.floor', description=__doc__.split('\n')[0])
    parser.add_argument('--robots', default='h1', help='comma-separated cases of internutopia.bench.cases (default: h1)')
    parser.add_argument('--env-nums', default='1', help='comma-separated slot counts (default: 1)')
    parser.add_argument('--pairs', type=int, default=80, help='timed pairs of chunks per step (default: 80)')
    parser.add_argument('--chunk', type=int, default=5, help='steps per chunk (default: 5)')
    parser.add_argument('--parts', action='store_true', help="time the parts of ours' step in situ instead")
    args = parser.parse_args(argv)
    default_to_egl(headless_only=False)
    out: list[dict[str, Any]] = []
    for robot in filter(None, args.robots.split(',')):
        for env_num in (int(n) for n in args.env_nums.split(',') if n):
            if args.parts:
                parts = part_times(robot, env_num)
                print(f"{robot} x{env_num}: {parts['step_us']:.1f} us a step (timers included)", flush=True)
                for label, value in sorted(parts['parts_us'].items(), key=lambda item: -item[1]):
                    print(f'  {label:54s} {value:8.1f} us', flush=True)
                out.append(parts)
                continue
            for row in floor_rows(robot, env_num, args.pairs, args.chunk):
                print(format_row(row), flush=True)
                out.append(row)
    return out


if __name__ == '__main__':
    main()
