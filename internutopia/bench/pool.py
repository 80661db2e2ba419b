"""``AsyncVectorEnv`` whose workers die with the benchmark.

:func:`async_vector_env` is ``gymnasium.vector.AsyncVectorEnv`` with a worker that first ties
itself to its parent (:func:`internutopia.bench.processes.die_with_parent`: the kernel's death
signal and a watchdog), and whose workers the benchmark kills when it ends, whatever ends it
(:func:`internutopia.bench.processes.install_cleanup`). Workers start from a fork server on
Linux (a clean process, no GL state inherited): the fork server ends when its parent does, and
the workers with it.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from internutopia.bench import processes

__all__ = ['NoKernelNotices', 'async_vector_env', 'guarded_worker', 'pool_memory', 'time_steps']


class NoKernelNotices(logging.Filter):
    """Drops the compiled kernels' "preparing / compiled (and cached) / loaded kernel ..." notices:
    every measuring process and every worker of a pool would print its own, between the
    benchmark's result rows."""

    def filter(self, record: logging.LogRecord) -> bool:
        return 'kernel' not in str(record.msg)


def guarded_worker(*args: Any) -> None:
    """Gymnasium's worker loop, in a process that dies with its parent (its kernel notices kept quiet)."""
    processes.die_with_parent()
    logging.getLogger('internutopia').addFilter(NoKernelNotices())
    from gymnasium.vector.async_vector_env import _async_worker

    _async_worker(*args)


def async_vector_env(env_fns: Sequence[Callable[[], Any]], **kwargs: Any) -> Any:
    """An ``AsyncVectorEnv`` over ``env_fns`` (keyword arguments as gymnasium's) whose workers
    never outlive the benchmark; close it as usual."""
    import gymnasium as gym

    class GuardedAsyncVectorEnv(gym.vector.AsyncVectorEnv):
        def close_extras(self, timeout: float | None = None, terminate: bool = False) -> None:
            try:
                super().close_extras(timeout=timeout, terminate=terminate)
            finally:
                for process in self.processes:
                    if process.pid is not None:
                        processes.untrack(process.pid)

    processes.install_cleanup()
    kwargs.setdefault('context', 'forkserver' if sys.platform.startswith('linux') else 'spawn')
    vector = GuardedAsyncVectorEnv(list(env_fns), worker=guarded_worker, **kwargs)
    for process in vector.processes:
        assert process.pid is not None  # started
        processes.track_pid(process.pid)
    return vector


def pool_memory(vector: Any) -> dict[str, Any]:
    """Peak memory of a pool (MB): ``worker_peak_mb`` (its largest worker), ``workers_mb`` (all
    workers) and ``tree_peak_mb`` (this process and every descendant: driver, fork server,
    workers), with ``processes`` (how many processes that tree has). Call it before ``close()``."""
    worker_peaks = [processes.process_peak_mb(p.pid) or 0.0 for p in vector.processes]
    tree = processes.own_tree_peak_mb()
    return {'worker_peak_mb': max(worker_peaks, default=0.0), 'workers_mb': float(sum(worker_peaks)),
            'tree_peak_mb': tree['tree_peak_mb'], 'processes': tree['processes']}


def time_steps(vector: Any, steps: int, warm: int = 2) -> float:
    """Env-steps per second of ``vector`` (reset, ``warm`` untimed steps, then ``steps`` timed),
    with one zero action per env (the camera cases' envs ignore their actions)."""
    import numpy as np

    actions = np.zeros(vector.num_envs, dtype=np.int64)
    vector.reset()
    for _ in range(warm):
        vector.step(actions)
    began = time.perf_counter()
    for _ in range(steps):
        vector.step(actions)
    return vector.num_envs * steps / (time.perf_counter() - began)
