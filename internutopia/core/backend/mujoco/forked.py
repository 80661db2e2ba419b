"""A world inherited through ``os.fork``: readable in the child, never stepped there, never a hang.

A pack steps its slots on a ``mujoco.batch.Batch``, whose thread pool a forked child does not
inherit (``fork`` copies the calling thread only). In the child, a batch of several threads that is
stepped waits for them forever, and one that is destroyed (at the child's exit, or when the env is
closed or collected there) joins threads that are not there: the child hung at exit, or aborted
with ``thread::join failed``, even when it never touched the env (a process forked by a server or
a test runner, ``multiprocessing`` with ``fork`` whose worker returns normally).

So each pack's batch is tracked, and in a forked child every inherited batch is kept, untouched,
until the process ends (:func:`~internutopia.core.util.inherited.keep_forever`), and the pack's calls that would run
on its thread pool (a batch of more than one thread: a world on more than one core) raise a ``RuntimeError`` that says what to do: build the env in the child, or
start the child with ``spawn``/``forkserver``. Its state stays readable (observations, renders).
Envs built in the child after the fork are the child's own and work as anywhere.
"""

from __future__ import annotations

import os
import weakref
from typing import Any

from internutopia.core.util.inherited import keep_forever

#: The batch calls that run on its thread pool (a forked child has none of its threads).
POOL_CALLS = frozenset({'step', 'forward', 'rollout', 'reset', 'set_const'})

_PACKS: weakref.WeakSet[Any] = weakref.WeakSet()


def guard_after_fork(pack: Any) -> None:
    """Note ``pack`` (a :class:`~.pack.Pack`, its ``batch`` made): a forked child guards its batch."""
    _PACKS.add(pack)


class InheritedBatch:
    """A ``mujoco.batch.Batch`` made in process ``pid`` and inherited through ``fork``: its arrays
    and per-slot reads work, its thread-pool calls (:data:`POOL_CALLS`) raise ``RuntimeError``."""

    def __init__(self, batch: Any, pid: int) -> None:
        object.__setattr__(self, '_batch', batch)
        object.__setattr__(self, '_pid', pid)

    def __getattr__(self, name: str) -> Any:
        if name in POOL_CALLS:
            raise RuntimeError(
                f'this env was built in process {self._pid}, and this process ({os.getpid()}) is a fork of it: '
                "the env's physics threads are not here, so it cannot step in this process; build the env "
                "after the fork (in this process), or start this process with the 'spawn' or 'forkserver' "
                "method (SubprocVecEnv(..., start_method='forkserver'))")
        return getattr(self._batch, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._batch, name, value)


def _after_fork_in_child() -> None:
    parent = os.getppid()
    for pack in list(_PACKS):
        batch = getattr(pack, 'batch', None)
        if batch is None or isinstance(batch, InheritedBatch):
            continue
        keep_forever(batch)  # (destroying it would join threads that are not in this process)
        if batch.nthread > 1:  # (a batch of the calling thread alone steps in the child as it did)
            pack.batch = InheritedBatch(batch, parent)
    _PACKS.clear()


if hasattr(os, 'register_at_fork'):  # (not on Windows, which does not fork)
    os.register_at_fork(after_in_child=_after_fork_in_child)


__all__ = ['POOL_CALLS', 'InheritedBatch', 'guard_after_fork']
