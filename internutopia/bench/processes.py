"""Child processes that never outlive the benchmark, and the memory of a process tree.

The benchmark starts processes of its own: a fresh process per measurement
(:mod:`internutopia.bench.fresh`) and, for the baselines, a fork server and ``AsyncVectorEnv``
workers. None of them may survive the benchmark, however it ends: a normal exit, an exception, a
measurement that runs past its time limit, Ctrl-C, ``SIGTERM``, or ``SIGKILL`` (the kernel's
out-of-memory killer, or a user's ``kill -9``). Four mechanisms, each covering what the others
cannot:

- **process groups**: each measurement's process makes itself the leader of a new process group
  (:func:`become_group_leader`), and whatever it starts (the fork server, the workers) inherits
  the group, so one ``killpg`` ends the whole tree;
- **cleanup on exit and on signals**: :func:`install_cleanup` makes the benchmark kill every
  group and process it started (:func:`track_group`, :func:`track_pid`) at exit and on
  ``SIGTERM``/``SIGHUP``/``SIGINT`` before it ends;
- **death signal** (Linux): :func:`die_with_parent` asks the kernel (``prctl(PR_SET_PDEATHSIG)``)
  to send ``SIGKILL`` to a child the moment its parent dies, which covers a parent killed by
  ``SIGKILL``, whose handlers never run;
- **a watchdog thread** in each child, which ends it when its parent is gone (the parent's id
  changes): the same on systems without ``prctl`` (macOS).
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Iterable
from types import FrameType
from typing import Any

__all__ = ['become_group_leader', 'children_of', 'die_with_parent', 'install_cleanup', 'kill_tracked',
           'process_peak_mb', 'tree_peak_mb', 'track_group', 'track_pid', 'uninstall_cleanup', 'untrack']

#: ``prctl`` option that sets the signal a process gets when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1
#: How often a child's watchdog checks that its parent is still there (seconds).
WATCHDOG_PERIOD_S = 0.5

_groups: set[int] = set()
_pids: set[int] = set()
_installed = False
_atexit_registered = False
#: The signals :func:`install_cleanup` takes over, and the handlers it found there (given back by :func:`uninstall_cleanup`).
_CLEANUP_SIGNALS = ('SIGTERM', 'SIGHUP', 'SIGINT')
_replaced: dict[int, Any] = {}


def die_with_parent() -> None:
    """In a child process: end it (``SIGKILL``) as soon as its parent dies, whatever kills the parent.

    On Linux the kernel sends the signal (``PR_SET_PDEATHSIG``); everywhere, a daemon thread
    polls the parent's id and ends the process when it changes (the parent died and the process
    was handed to another). A parent that died before this call is caught at once.
    """
    parent = os.getppid()
    if sys.platform.startswith('linux'):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - a libc without prctl: the watchdog still runs
            pass

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(1)
            time.sleep(WATCHDOG_PERIOD_S)

    if os.getppid() != parent or parent == 1:  # the parent died before the death signal was set
        os._exit(1)
    threading.Thread(target=watch, name='die-with-parent', daemon=True).start()


def become_group_leader() -> None:
    """In a child process: lead a new process group, which everything it starts inherits, so the
    benchmark ends the whole tree with one ``killpg`` (and a terminal's Ctrl-C reaches only the
    benchmark, which then ends the tree itself)."""
    if hasattr(os, 'setpgid'):
        try:
            os.setpgid(0, 0)
        except OSError:  # pragma: no cover - already a session or group leader
            pass


def track_group(pgid: int) -> None:
    """Kill process group ``pgid`` when the benchmark ends (see :func:`install_cleanup`)."""
    _groups.add(pgid)


def track_pid(pid: int) -> None:
    """Kill process ``pid`` when the benchmark ends (see :func:`install_cleanup`)."""
    _pids.add(pid)


def untrack(pid: int) -> None:
    """Forget ``pid`` (and the group it leads): it ended and was waited for."""
    _groups.discard(pid)
    _pids.discard(pid)


def kill_tracked() -> int:
    """``SIGKILL`` every tracked process group and process; return how many were still there."""
    killed = 0
    for pgid in list(_groups):
        try:
            os.killpg(pgid, signal.SIGKILL)
            killed += 1
        except (ProcessLookupError, PermissionError):
            pass
        _groups.discard(pgid)
    for pid in list(_pids):
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except (ProcessLookupError, PermissionError):
            pass
        _pids.discard(pid)
    return killed


def _on_signal(signum: int, frame: FrameType | None) -> None:
    kill_tracked()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    # End as the signal would have: its default action, raised again.
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def install_cleanup() -> None:
    """In the benchmark's own process: kill every tracked child at exit and on ``SIGTERM``,
    ``SIGHUP`` and ``SIGINT`` (which then goes on as ``KeyboardInterrupt``). Idempotent; only
    from the main thread (signal handlers live there). :func:`uninstall_cleanup` gives the
    process its handlers back."""
    global _installed, _atexit_registered
    if _installed:
        return
    if not _atexit_registered:
        atexit.register(kill_tracked)
        _atexit_registered = True
    if threading.current_thread() is threading.main_thread():
        for name in _CLEANUP_SIGNALS:
            if hasattr(signal, name):
                number = getattr(signal, name)
                _replaced[number] = signal.getsignal(number)
                signal.signal(number, _on_signal)
    _installed = True


def uninstall_cleanup() -> None:
    """Give back the signal handlers :func:`install_cleanup` replaced (the ends of the benchmark
    tools' ``main``: one called in a script's or a test's own process leaves its Ctrl-C handling
    as it found it, so that an env made there afterwards holds Ctrl-C over its calls again).
    Tracked processes are still killed at exit. Does nothing when nothing is installed."""
    global _installed
    if not _installed:
        return
    if threading.current_thread() is threading.main_thread():
        for number, handler in _replaced.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)
        _replaced.clear()
    _installed = False


# ------------------------------------------------------------------------------------------------
# the memory of a process tree
def children_of(pid: int) -> list[int]:
    """Every descendant of ``pid`` (children, their children, ...), from ``/proc``, or ``psutil``
    where there is no ``/proc``; ``[]`` when neither is available."""
    if os.path.isdir('/proc'):
        parents: dict[int, list[int]] = {}
        for entry in os.listdir('/proc'):
            if not entry.isdigit():
                continue
            try:
                with open(f'/proc/{entry}/stat', encoding='utf-8') as stream:
                    # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
                    ppid = int(stream.read().rsplit(')', 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            parents.setdefault(ppid, []).append(int(entry))
        out, todo = [], [pid]
        while todo:
            for child in parents.get(todo.pop(), []):
                out.append(child)
                todo.append(child)
        return out
    try:  # pragma: no cover - systems without /proc
        import psutil

        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except Exception:  # pragma: no cover
        return []


def process_peak_mb(pid: int) -> float | None:
    """Peak resident memory of process ``pid`` in MB (``VmHWM``), ``None`` when it cannot be read."""
    try:
        with open(f'/proc/{pid}/status', encoding='utf-8') as stream:
            for line in stream:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    try:  # pragma: no cover - systems without /proc: the current resident size, not the peak
        import psutil

        return float(psutil.Process(pid).memory_info().rss) / 2 ** 20
    except Exception:  # pragma: no cover
        return None


def tree_peak_mb(pids: Iterable[int]) -> float:
    """The sum of the peak resident memory of ``pids`` (MB): the memory a process tree held at
    its peak, when its processes peak together (as a pool's workers do, each holding its env)."""
    return float(sum(value for value in (process_peak_mb(pid) for pid in pids) if value is not None))


def own_tree_peak_mb() -> dict[str, Any]:
    """This process and its descendants: ``{'processes': n, 'tree_peak_mb': sum of peaks}``."""
    pids = [os.getpid(), *children_of(os.getpid())]
    return {'processes': len(pids), 'tree_peak_mb': tree_peak_mb(pids)}
