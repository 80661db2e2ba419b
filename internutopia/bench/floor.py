"""How close to the limit any Python step could come: a minimal step, timed against the limit.

The main benchmark compares ours with raw ``mujoco.batch`` replaying our controls. That ratio
mixes two things: what any step returning fresh result arrays costs on top of the physics, and
what our layers (the call guard, the action parse, the controllers, the tasks, the observation
tree) add. This tool separates them. It builds a case's env as the benchmark does, then times
these steps of the same world, each against its own :class:`~internutopia.limit.PhysicsLimit`
with the benchmark's paired chunks (:func:`~internutopia.bench.paired.time_pairs`):

- ``ours``: ``env.step_arrays`` with the case's batched action (the benchmark's array row);
- ``ours-dict``: ``env.step`` with the case's per-slot actions (the benchmark's dict row);
- ``floor``: the controls of ours' last step written back, one physics call per pack, and fresh
  copies of each robot group's base pose, joint positions and joint velocities plus the step's
  reward and flags in a dict: the least a step that returns fresh arrays has to do (no action
  parse, no controller, no task);
- ``floor-dict``: the floor as the dict API must give it: each slot's action read out of its
  dict and the slots' made one array (an object sent to several slots converted once, as ours'
  parse does), the floor's observation split into a dict per slot (the project's
  :class:`~internutopia.core.runner.observations.RowSplitter`, a view per leaf per slot) and the
  reward and flags as lists;
- ``bare``: the controls written and the physics call, nothing returned;
- ``physics-in-ours``: not a step but the physics call *inside* ours' array steps (a timer around
  each pack's batch call, in a pass of its own) against the limit's replay of the same calls: the
  ratio ours would reach if everything but the physics cost nothing. It is below 1 because the
  call runs after our Python (and a walking robot's network) has used the caches, where the
  limit's replay runs its calls back to back.

::

    python -m internutopia.bench.floor --robots h1,jetbot --env-nums 1,64
    python -m internutopia.bench.floor --robots h1 --parts    # where ours' step goes, in situ

``--parts`` times the parts of ours' step instead, inside a run of it with the physics on (a
timer around each: the physics call, the action parse, each controller's apply, the tasks, the
step count, the divergence check, the observation), and gives the rest of the runner's step and
the entry around it (``step_arrays``, the call guard, the result) by difference. Each timer adds
a fraction of a microsecond (a Python call and two clock reads) to the part it wraps.

The floors' ratios are upper bounds for a step of each API on that host; the distance from ours
to them is our layers' cost, and from the floor to ``bare`` the result arrays'.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from internutopia.bench import options
from internutopia.bench.fresh import run_in_fresh_process
from internutopia.bench.paired import summarize, time_calls, time_pairs
from internutopia.core.backend.mujoco.render.gl import default_to_egl

__all__ = ['PHYSICS_IN_OURS', 'STEPS', 'floor_rows', 'format_row', 'main', 'part_times']

#: The steps timed, in order, and the row of ours' physics call timed in situ (see the module docstring).
STEPS = ('ours', 'ours-dict', 'floor', 'floor-dict', 'bare')
PHYSICS_IN_OURS = 'physics-in-ours'
#: Pairs timed and thrown away before each step's timing (the limit's first replay starts threads).
WARM_PAIRS = 2


def _steps(env: Any, batched: dict[str, Any], per_slot: list[Any] | None = None) -> dict[str, Callable[[], Any]]:
    """The steps of ``env`` (reset and stepped) with its batched action and, for the dict API's
    two, its per-slot actions ``per_slot``: see the module docstring."""
    from internutopia.core.runner.observations import RowSplitter

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

    steps: dict[str, Callable[[], Any]] = {'ours': lambda: env.step_arrays(batched)}
    if per_slot is not None:
        # What the dict API's parse must read whatever it does: each slot's arguments of each
        # controller, gathered into one array per controller (an object sent to several slots
        # made an array once, as ours' parse does).
        entries = [(robot, controller) for robot, commands in per_slot[0].items() for controller in commands]
        splitter = RowSplitter()

        def gathered(robot: str, controller: str) -> np.ndarray:
            made: dict[int, np.ndarray] = {}
            rows = []
            for action in per_slot:
                args = action[robot][controller]
                row = made.get(id(args))
                if row is None:
                    row = made[id(args)] = np.asarray(args, dtype=float)
                rows.append(row)
            return np.repeat(rows[0][None], len(rows), axis=0) if len(made) == 1 else np.stack(rows)

        def floor_dict() -> tuple[list[dict[str, Any]], list[float], list[bool], list[bool]]:
            for robot, controller in entries:
                gathered(robot, controller)
            obs, reward, terminated, truncated = floor()
            return splitter(obs, env_num), reward.tolist(), terminated.tolist(), truncated.tolist()

        steps['ours-dict'] = lambda: env.step(per_slot)
        steps['floor-dict'] = floor_dict
    steps['floor'] = floor
    steps['bare'] = write_and_step
    return {name: steps[name] for name in STEPS if name in steps}


@contextlib.contextmanager
def _warmed_env(case_name: str, env_num: int) -> Iterator[tuple[Any, dict[str, Any], list[Any]]]:
    """The case's env (cameras off), reset and stepped a while, its batched action and its per-slot
    actions; closed after."""
    from internutopia.bench.cases import get_case
    from internutopia.core.vec_env import Env
    from internutopia_extension import import_extensions

    import_extensions()
    case = get_case(case_name)
    env = Env(case.config(env_num, 'off'))
    try:
        env.reset()
        batched, per_slot = case.array_action(env_num), case.dict_actions(env_num)
        for _ in range(30):
            env.step_arrays(batched)  # warm: kernels, caches, lazily bound fields
        for _ in range(5):
            env.step(per_slot)
        yield env, batched, per_slot
    finally:
        env.close()


class _PhysicsInOurs:
    """A proxy of a :class:`~internutopia.limit.PhysicsLimit` for :func:`time_pairs` that also
    keeps, for each pair, the seconds per step ours spent in its packs' batch calls (``spent``,
    filled by :func:`time_calls` timers around them) and the limit's, each over the whole chunk."""

    def __init__(self, limit: Any, spent: dict[str, float]) -> None:
        self.limit, self.spent = limit, spent
        self.ours: list[float] = []
        self.theirs: list[float] = []
        self._at, self._steps = 0.0, 0

    def start_round(self, steps: int) -> None:
        self._at, self._steps = self.spent.get(PHYSICS_IN_OURS, 0.0), steps
        self.limit.start_round(steps)

    def record(self, step: int) -> None:
        self.limit.record(step)

    def replay_steps(self, clock: Callable[[], float] = time.perf_counter,
                     switches: Callable[[], int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        self.ours.append((self.spent.get(PHYSICS_IN_OURS, 0.0) - self._at) / self._steps)
        seconds, clean = self.limit.replay_steps(clock, switches)
        self.theirs.append(float(seconds.mean()))
        return seconds, clean


def _measure(case_name: str, env_num: int, pairs: int, chunk: int) -> dict[str, Any]:
    from internutopia.limit import PhysicsLimit

    with _warmed_env(case_name, env_num) as (env, batched, per_slot):
        rows = []
        for name, step in _steps(env, batched, per_slot).items():
            limit = PhysicsLimit(env.runner.world)
            time_pairs(step, limit, WARM_PAIRS, chunk)
            ours, theirs, clean = time_pairs(step, limit, pairs, chunk)
            del limit
            summary = summarize(ours, theirs, clean)
            summary.pop('ratios')
            rows.append({'robot': case_name, 'env_num': env_num, 'step': name, **summary})
        # Last: the timers stay on the packs' batch calls once set.
        spent: dict[str, float] = {}
        for pack in env.runner.world.packs.values():
            time_calls(spent, pack.batch, 'step', PHYSICS_IN_OURS)
        proxy = _PhysicsInOurs(PhysicsLimit(env.runner.world), spent)
        time_pairs(lambda: env.step_arrays(batched), proxy, WARM_PAIRS, chunk)
        proxy.ours.clear()
        proxy.theirs.clear()
        _, _, clean = time_pairs(lambda: env.step_arrays(batched), proxy, pairs, chunk)
        summary = summarize(np.array(proxy.ours), np.array(proxy.theirs), clean)
        summary.pop('ratios')
        rows.append({'robot': case_name, 'env_num': env_num, 'step': PHYSICS_IN_OURS, **summary})
        return {'rows': rows}


def _parts(case_name: str, env_num: int, steps: int) -> dict[str, Any]:
    with _warmed_env(case_name, env_num) as (env, batched, _):
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
    """The rows of :data:`STEPS` and :data:`PHYSICS_IN_OURS` for one case and slot count,
    measured in a fresh process (see the module docstring): each with ``ratio`` (the limit's time
    over the step's, the median of the pairs), its IQR and the median seconds per step of each side."""
    return run_in_fresh_process(_measure, case_name, env_num, pairs, chunk, what=f'floor {case_name} x{env_num}',
                                timeout_s=timeout_s)['rows']


def format_row(row: dict[str, Any]) -> str:
    """One line of a row of :func:`floor_rows`."""
    return (f"{row['robot']:>10s} x{row['env_num']:<3d} {row['step']:15s}  limit/step {row['ratio']:.2f} "
            f"(IQR {row['ratio_q1']:.2f}-{row['ratio_q3']:.2f}, {row['clean_pairs']}/{row['pairs']} pairs clean)  "
            f"step {row['ours_step_s'] * 1e6:8.1f} us  limit {row['limit_step_s'] * 1e6:8.1f} us")


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(prog='python -m internutopia.bench.floor', description=__doc__.split('\n')[0])
    options.add_case_options(parser, robots='h1', env_nums='1')
    parser.add_argument('--pairs', type=int, default=80, help='timed pairs of chunks per step (default: 80)')
    parser.add_argument('--chunk', type=int, default=5, help='steps per chunk (default: 5)')
    parser.add_argument('--parts', action='store_true', help="time the parts of ours' step in situ instead")
    args = parser.parse_args(argv)
    from internutopia.bench.cases import CASES

    robots, env_nums = options.checked_cases(parser, args, CASES)
    options.at_least(parser, '--pairs', args.pairs)
    options.at_least(parser, '--chunk', args.chunk)
    default_to_egl(headless_only=False)
    out: list[dict[str, Any]] = []
    for robot in robots:
        for env_num in env_nums:
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
    options.interrupted('python -m internutopia.bench.floor', main)
