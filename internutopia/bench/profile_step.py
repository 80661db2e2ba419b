"""Where the Python of a step goes: per-step time with the physics switched off, and a profile.

``python -m internutopia.bench.profile_step --robots h1 --env-nums 64 --api array`` builds a case's env
(:mod:`internutopia.bench.cases`), replaces every pack's physics step with nothing, and times
the rest of ``env.step`` / ``env.step_arrays``: the best of ``--blocks`` blocks of ``--steps``
steps, in wall-clock time and in the thread's CPU time (which leaves out the time other
processes held the core, so it is the steadier figure on a busy machine).
``--profile`` adds a ``cProfile`` listing of the hot functions (their own time, not counting
callees), which is what ``docs/performance.md``'s breakdown of a step is read from.

Inside a real run the same Python costs more than here (the physics evicts it from the caches
between steps); the paired benchmark (``python -m internutopia.bench``) measures that run.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from internutopia.bench import options
from internutopia.core.backend.mujoco.pack import PackRollout

__all__ = ['python_step_us', 'switch_physics_off']


def _env_and_step(case_name: str, env_num: int, api: str) -> tuple[Any, Any]:
    from internutopia.bench.cases import get_case
    from internutopia.core.vec_env import Env

    case = get_case(case_name)
    env = Env(case.config(env_num, 'off'))
    env.reset()
    if api == 'dict':
        actions = case.dict_actions(env_num)
        return env, lambda: env.step(actions)
    batched = case.array_action(env_num)
    return env, lambda: env.step_arrays(batched)


def switch_physics_off(env: Any) -> None:
    """Make every pack's physics step only advance its slots' clocks (the world checks them to
    find diverged simulations), so that a step of ``env`` is its Python alone. As the real step
    does, it first drops the forward passes a reset left pending (else reading the clock would
    run them: MuJoCo work a real step never does)."""
    dt = env.runner.world.sim.physics_dt
    for pack in env.runner.world.packs.values():
        def advance_clock(steps: int = 1, pack: Any = pack) -> None:
            pack.drop_pending_forwards()
            pack.data.time[pack.slots] += dt * steps

        def rollout(steps: int, fields: tuple[str, ...], pack: Any = pack) -> Any:
            # (an action repeat in one recorded call: the same state recorded after each step)
            pack.drop_pending_forwards()
            start = pack.batch.state.copy()
            pack.data.time[pack.slots] += dt * steps
            return PackRollout(pack, steps, {name: np.repeat(getattr(pack.data, name)[:, None], steps, axis=1) for name in fields},
                               start)

        def rewind(rollout: Any, slots: np.ndarray, steps: int, pack: Any = pack) -> None:
            pack.batch.state[slots] = rollout.start[slots]
            pack.data.time[slots] += dt * steps

        def step_slots(slots: np.ndarray, steps: int, pack: Any = pack) -> None:
            pack.data.time[slots] += dt * steps

        pack.step, pack.rollout, pack.rewind, pack.step_slots = advance_clock, rollout, rewind, step_slots


def python_step_us(case_name: str, env_num: int, api: str, steps: int = 200, blocks: int = 15,
                   profile: bool = False, physics: bool = False) -> dict[str, Any]:
    """Microseconds per step of ours with the physics off (on with ``physics``): best and median block."""
    env, step = _env_and_step(case_name, env_num, api)
    for _ in range(20):
        step()  # warm: kernels, caches, lazily bound fields
    if not physics:
        switch_physics_off(env)
    times, cpu = [], []
    for _ in range(blocks):
        began, began_cpu = time.perf_counter(), time.thread_time()
        for _ in range(steps):
            step()
        cpu.append((time.thread_time() - began_cpu) / steps * 1e6)
        times.append((time.perf_counter() - began) / steps * 1e6)
    out: dict[str, Any] = {'best_us': min(times), 'median_us': sorted(times)[len(times) // 2],
                           'cpu_best_us': min(cpu), 'cpu_median_us': sorted(cpu)[len(cpu) // 2]}
    if profile:
        import cProfile
        import io
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(steps * 5):
            step()
        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats('tottime').print_stats(30)
        out['profile'] = text.getvalue()
    env.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m internutopia.bench.profile_step``: see ``--help``."""
    from internutopia.bench.cases import CASES

    parser = argparse.ArgumentParser(prog='python -m internutopia.bench.profile_step', description=__doc__.split('\n\n')[0])
    options.add_case_options(parser, robots='h1', env_nums='64')
    options.add_api_option(parser, 'array,dict')
    parser.add_argument('--steps', type=int, default=200, help='steps per timed block')
    parser.add_argument('--blocks', type=int, default=15, help='timed blocks (the best is reported)')
    parser.add_argument('--physics', action='store_true', help='keep the physics on (whole step)')
    parser.add_argument('--profile', action='store_true', help='print a cProfile listing per case')
    args = parser.parse_args(argv)
    robots, env_nums = options.checked_cases(parser, args, CASES)
    apis = options.checked_apis(parser, args)
    options.at_least(parser, '--steps', args.steps)
    options.at_least(parser, '--blocks', args.blocks)
    from internutopia.core.backend.mujoco.render.gl import default_to_egl

    default_to_egl(headless_only=False)
    for robot in robots:
        for env_num in env_nums:
            for api in apis:
                result = python_step_us(robot, env_num, api, args.steps, args.blocks, args.profile, args.physics)
                print(f'{robot} x{env_num} {api}: {"step" if args.physics else "Python alone"} '
                      f'{result["best_us"]:.1f} us best, {result["median_us"]:.1f} us median; thread CPU time '
                      f'{result["cpu_best_us"]:.1f} us best, {result["cpu_median_us"]:.1f} us median', flush=True)
                if args.profile:
                    print(result['profile'])
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
