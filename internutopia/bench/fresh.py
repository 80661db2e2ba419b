"""Running one measurement in a fresh process (its own memory layout, threads, caches and GL state).

The process leads a process group of its own (whatever it starts joins it) and dies with the
benchmark; the benchmark kills its group when the measurement ends, fails, runs past its time
limit, or the benchmark itself ends (:mod:`internutopia.bench.processes`).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue as queue_module
import signal
import time
import traceback
from collections.abc import Callable
from typing import Any

from internutopia.bench import processes

#: Default time limit of one measurement (seconds); ``None`` or 0: none.
DEFAULT_TIMEOUT_S = 900.0


class MeasurementTimeout(RuntimeError):
    """A measurement ran past its time limit (its process tree was killed)."""


def _worker(queue: Any, function: Callable[..., dict[str, Any]], args: tuple) -> None:
    processes.become_group_leader()
    processes.die_with_parent()
    from internutopia.bench.pool import NoKernelNotices

    logging.getLogger('internutopia').addFilter(NoKernelNotices())  # (kernel notices would split the rows)
    try:
        queue.put(function(*args))
    except BaseException as exc:  # report, don't hang the parent
        queue.put({'error': f'{type(exc).__name__}: {exc}\n{traceback.format_exc()}'})


def _end(process: Any) -> None:
    """Kill ``process``'s group (its fork server and workers with it) and wait for it."""
    if process.pid is None:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        pass
    if process.is_alive():
        process.kill()
    process.join(5)
    processes.untrack(process.pid)


def run_in_fresh_process(function: Callable[..., dict[str, Any]], *args: Any, what: str,
                         timeout_s: float | None = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """``function(*args)`` (a module-level function returning a dict) in a freshly spawned process.

    Raises:
        RuntimeError: ``what`` failed, with the child's traceback if it raised, or the way it died.
        MeasurementTimeout: it ran longer than ``timeout_s`` seconds.
    """
    context = multiprocessing.get_context('spawn')
    queue = context.Queue()
    process = context.Process(target=_worker, args=(queue, function, args))
    processes.install_cleanup()
    process.start()
    assert process.pid is not None  # started
    processes.track_group(process.pid)  # the child makes itself the leader of this group
    processes.track_pid(process.pid)  # (and until it has, its group does not exist yet)
    began = time.monotonic()
    result: dict[str, Any] | None = None
    try:
        while result is None:
            try:
                result = queue.get(timeout=1.0)
            except queue_module.Empty:
                if not process.is_alive():
                    try:  # it may have put its result just before it ended
                        result = queue.get(timeout=1.0)
                    except queue_module.Empty:
                        code = process.exitcode
                        how = f'killed by signal {-code}' if code is not None and code < 0 else f'exit status {code}'
                        raise RuntimeError(f'{what} failed: its process ended without a result ({how}'
                                           + ('; SIGKILL: perhaps out of memory' if code == -9 else '') + ')') from None
                elif timeout_s and time.monotonic() - began > timeout_s:
                    raise MeasurementTimeout(f'{what} ran past its time limit of {timeout_s:.0f} s; its processes '
                                             'were killed') from None
        process.join(30)
    finally:
        _end(process)
    if 'error' in result:
        raise RuntimeError(f'{what} failed: {result["error"]}')
    return result


__all__ = ['DEFAULT_TIMEOUT_S', 'MeasurementTimeout', 'run_in_fresh_process']
