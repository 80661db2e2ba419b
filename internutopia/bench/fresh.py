"""Running one measurement in a fresh process (its own memory layout, threads, caches and GL state)."""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable
from typing import Any


def _worker(queue: Any, function: Callable[..., dict[str, Any]], args: tuple) -> None:
    try:
        queue.put(function(*args))
    except BaseException as exc:  # report, don't hang the parent
        queue.put({'error': f'{type(exc).__name__}: {exc}\n{traceback.format_exc()}'})


def run_in_fresh_process(function: Callable[..., dict[str, Any]], *args: Any, what: str) -> dict[str, Any]:
    """``function(*args)`` (a module-level function returning a dict) in a freshly spawned
    process; a ``RuntimeError`` saying that ``what`` failed, with the child's traceback, if it raised."""
    context = multiprocessing.get_context('spawn')
    queue = context.Queue()
    process = context.Process(target=_worker, args=(queue, function, args))
    process.start()
    result = queue.get()
    process.join()
    if 'error' in result:
        raise RuntimeError(f'{what} failed: {result["error"]}')
    return result


__all__ = ['run_in_fresh_process']
