"""One measurement of ours against the limit, in a fresh process.

:func:`measure_ours` starts a clean interpreter (``spawn``), builds the case's env there, and
returns every figure of one run: the paired timing (:mod:`internutopia.bench.paired`), start-up to
the first observation, peak memory, and (when asked) the cost of resetting one slot. A fresh
process per run makes the start-up and memory figures the user's, and makes repeated runs
(``--repeat``) independent: each gets its own memory layout, thread pool and caches.
"""

from __future__ import annotations

import itertools
import resource
import time
from typing import Any

import numpy as np

from internutopia.bench.cases import get_case
from internutopia.bench.fresh import DEFAULT_TIMEOUT_S, run_in_fresh_process
from internutopia.bench.memory import memory_budget
from internutopia.bench.paired import summarize, time_pairs

__all__ = ['available_memory_mb', 'measure_ours', 'peak_memory_mb']

#: Pairs timed and thrown away first: the limit's first replay starts its batch's threads.
WARM_PAIRS = 2


def _measure(case_name: str, env_num: int, cameras: str, api: str, steps: int, chunk: int,
             user_config: str | None, with_resets: bool, backend: str | None = None, device: str | None = None) -> dict[str, Any]:
    from internutopia.core.vec_env import Env
    from internutopia.limit import PhysicsLimit
    from internutopia_extension import import_extensions

    case = get_case(case_name, user_config)
    started = time.perf_counter()
    import_extensions()
    config = case.config(env_num, cameras)
    if backend is not None:  # --backend: the case's own config, on another physics backend
        config.simulator = config.simulator.model_copy(update={'backend': backend, 'device': device})
    import_s = time.perf_counter() - started
    started = time.perf_counter()
    env = Env(config)
    env.reset()
    startup_s = time.perf_counter() - started
    if api == 'dict':
        actions = case.dict_actions(env_num)

        def step() -> None:
            env.step(actions)
    else:
        batched = case.array_action(env_num)

        def step() -> None:
            env.step_arrays(batched)
    for _ in range(max(10, steps // 10)):
        step()
    memory_mb = peak_memory_mb()  # before the limit's batches exist in this process
    if backend == 'warp':  # its limit: raw mujoco_warp stepping of the same models
        from internutopia.core.backend.warp.limit import WarpLimit

        limit: Any = WarpLimit(env.runner.world)
    else:
        limit = PhysicsLimit(env.runner.world)
    chunk = max(1, min(chunk, steps))
    time_pairs(step, limit, WARM_PAIRS, chunk)
    ours, theirs, clean = time_pairs(step, limit, max(1, steps // chunk), chunk)
    del limit
    out: dict[str, Any] = summarize(ours, theirs, clean)
    out.update({'chunk': chunk, 'startup_s': startup_s, 'import_s': import_s,
                'peak_memory_mb': memory_mb})
    if with_resets:
        out.update(_measure_resets(env, env_num, out['ours_step_s']))
        # A structure change compiles a new one-slot model and makes its pack while the old pack still exists.
        out['peak_memory_with_rebuild_mb'] = peak_memory_mb()
    env.close()
    return out


def _measure_resets(env: Any, env_num: int, step_s: float) -> dict[str, float]:
    """Cost of resetting one slot: same structure (state write) and new structure (rebuild)."""
    from internutopia.core.episode_queue import EpisodeQueue

    runner = env.runner
    template = env.config.task_configs[0]
    resets = min(4, env_num)
    other = template.model_copy(update={'scene_position': (0.0, 0.0, 0.001)})
    # The queue is spent by now; feed the resets directly: `resets` of the same structure, then a new one.
    runner.queue = EpisodeQueue(itertools.chain([template] * resets, [other]))
    timings = []
    for slot in range(resets):
        began = time.perf_counter()
        env.reset([slot])
        timings.append(time.perf_counter() - began)
    same_s = float(np.median(timings))
    began = time.perf_counter()
    env.reset([0])  # 'other': a new structure
    new_s = time.perf_counter() - began
    return {'reset_same_structure_ms': same_s * 1e3, 'reset_same_structure_steps': same_s / step_s,
            'reset_new_structure_ms': new_s * 1e3, 'reset_new_structure_steps': new_s / step_s}


def available_memory_mb() -> float:
    """Memory available for new processes, in MB: the kernel's ``MemAvailable``, or what is left
    under the cgroup's limit when that is less (:mod:`internutopia.bench.memory`)."""
    budget = memory_budget(share=1.0)
    return budget.usable_mb


def peak_memory_mb() -> float:
    """Peak resident memory of this process in MB (``VmHWM``; ``ru_maxrss`` would include the
    parent's peak, which survives the fork and exec that start a worker)."""
    try:
        with open('/proc/self/status', encoding='utf-8') as stream:
            for line in stream:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_ours(case: str, env_num: int, cameras: str, api: str, steps: int, chunk: int,
                 user_config: str | None = None, with_resets: bool = False, backend: str | None = None,
                 device: str | None = None, timeout_s: float | None = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """Measure one run of a case in a fresh process.

    Args:
        case: a name in :data:`~internutopia.bench.cases.CASES` (ignored with ``user_config``).
        env_num: slots.
        cameras: a camera setting (key of :data:`~internutopia.bench.cases.CAMERAS`).
        api: ``'dict'`` (``env.step``) or ``'array'`` (``env.step_arrays``).
        steps: timed steps of ours (the limit times as many), in chunks of ``chunk`` steps.
        chunk: steps per timed chunk.
        user_config: a YAML config to run instead of a registered case.
        with_resets: also measure the cost of resetting one slot.
        backend, device: run the case on this physics backend and device (``None``: the case's own).
        timeout_s: time limit; past it the process is killed and ``MeasurementTimeout`` raised.

    Returns:
        the figures of :func:`~internutopia.bench.paired.summarize` (median pair ratio, its
        quartiles, each side's median seconds per step), the pair ratios, ``startup_s``,
        ``peak_memory_mb`` and, with ``with_resets``, the reset costs.
    """
    return run_in_fresh_process(_measure, case, env_num, cameras, api, steps, chunk, user_config, with_resets, backend, device,
                                what=f'benchmark case {case} x{env_num} cameras {cameras} {api}', timeout_s=timeout_s)
