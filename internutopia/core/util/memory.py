"""Memory checks: refuse an ``env_num`` this machine cannot hold, before allocating it.

An env allocates per-slot state up front (the runner's bookkeeping when it is built, a row per
slot in every pack when a structure first appears), so a mistyped ``env_num=10**8`` would
otherwise grow until the kernel kills the process. :func:`check_slots_fit` turns that into an
error naming ``env_num`` and the memory it needs.

>>> check_slots_fit(4, 1000, 'a test')            # 4 kB: fits anywhere
>>> check_slots_fit(10**15, 1000, 'a test')       # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: env_num=1000000000000000 needs about ... GiB for a test (1000 bytes per slot) ...

The memory available is the system's, or less where a limit of the process leaves less: its
cgroup's (a container's memory limit), its address-space limit (``RLIMIT_AS``, ``ulimit -v``,
common on shared clusters) or its data limit (``RLIMIT_DATA``, ``ulimit -d``); the error names the
limit that binds (:func:`tightest_room`, :func:`available_bytes`).

What an env is estimated to take at its peak is the sum of four parts, each estimated where it is
known: the compiled kernels' runtime (:func:`jit_runtime_bytes`, once per process), the runtimes
its robots load on first use (ONNX Runtime for a walking policy; the code that loads one says so
with :func:`note_runtime_loaded`), the slots' bookkeeping, and what the world's structures take
(their compiled models, the compile's peak and every slot's physics state; the backend's world
estimates these from the built models).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from internutopia.core.util import jit
from internutopia.core.util.cgroups import cgroup_folders, read_int

#: A cgroup "limit" at or above this is no limit (cgroup v1 writes 2**63 rounded to a page).
_NO_LIMIT = 2 ** 60


@dataclass(frozen=True)
class MemoryRoom:
    """Bytes this process can still get under one limit: ``room``; ``what`` names the limit (as
    the error says it), ``limit`` its size in bytes (``None`` for the system's free memory)."""

    what: str
    room: int
    limit: int | None = None


def memory_rooms() -> list[MemoryRoom]:
    """The room under every limit this process has: the system's available memory, its cgroup's
    memory limit, ``RLIMIT_AS`` (against its address space in use) and ``RLIMIT_DATA`` (against
    its data segment in use); limits that are not set are left out."""
    rooms = []
    system = _system_available()
    if system is not None:
        rooms.append(MemoryRoom('the system (MemAvailable)', system))
    cgroup = cgroup_room()
    if cgroup is not None:
        rooms.append(MemoryRoom('its cgroup memory limit', cgroup))
    for name, flag, in_use in (('RLIMIT_AS', '-v', 'VmSize'), ('RLIMIT_DATA', '-d', 'VmData')):
        limit = _rlimit(name)
        if limit is None:
            continue
        used = _status_bytes(in_use)
        room = max(limit - (used or 0), 0)
        rooms.append(MemoryRoom(f'its {name} limit (ulimit {flag}) of {limit / 2 ** 30:.2f} GiB, {(used or 0) / 2 ** 30:.2f} '
                                f'GiB of it in use', room, limit))
    return rooms


def tightest_room() -> MemoryRoom | None:
    """The limit that leaves this process the least room (``None`` when none is known).

    >>> room = tightest_room()
    >>> room is None or room.room >= 0
    True
    """
    rooms = memory_rooms()
    return min(rooms, key=lambda r: r.room) if rooms else None


def available_bytes() -> int | None:
    """Memory this process can still get: the least room under every limit it has (see
    :func:`memory_rooms`); ``None`` if none is known."""
    room = tightest_room()
    return None if room is None else room.room


def _rlimit(name: str) -> int | None:
    """The soft limit ``resource.<name>`` in bytes, ``None`` when unlimited (or not on this system)."""
    try:
        import resource
    except ImportError:  # not a POSIX system
        return None
    which = getattr(resource, name, None)
    if which is None:
        return None
    soft, _ = resource.getrlimit(which)
    return None if soft == resource.RLIM_INFINITY or soft < 0 else int(soft)


def _status_bytes(field: str) -> int | None:
    """A ``kB`` field of ``/proc/self/status`` (``VmSize``: address space, ``VmData``: data
    segment, as ``RLIMIT_AS`` and ``RLIMIT_DATA`` count them), in bytes."""
    try:
        with open('/proc/self/status', encoding='ascii') as stream:
            for line in stream:
                if line.startswith(field + ':'):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _system_available() -> int | None:
    try:
        with open('/proc/meminfo', encoding='ascii') as stream:
            for line in stream:
                if line.startswith('MemAvailable:'):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf('SC_AVPHYS_PAGES') * os.sysconf('SC_PAGE_SIZE')
    except (ValueError, OSError, AttributeError):  # not a POSIX system
        return None


def cgroup_room() -> int | None:
    """Bytes left under the tightest memory limit of this process's cgroups (limit minus usage,
    at least 0), or ``None`` when no cgroup limits its memory."""
    rooms = []
    for folder, v2 in cgroup_folders('memory'):
        limit_name, usage_name = ('memory.max', 'memory.current') if v2 else ('memory.limit_in_bytes', 'memory.usage_in_bytes')
        limit = read_int(os.path.join(folder, limit_name))
        if limit is None or limit >= _NO_LIMIT:
            continue
        usage = read_int(os.path.join(folder, usage_name)) or 0
        rooms.append(max(limit - usage, 0))
    return min(rooms) if rooms else None


#: Resident bytes that importing numba adds to a process, and that loading the first compiled
#: kernel adds on top (LLVM's engine and the kernels' code). Measured on Linux x86-64 with numba
#: 0.68: 54 MB and 55 MB (docs/reliability.md).
NUMBA_IMPORT_BYTES = 54e6
JIT_ENGINE_BYTES = 55e6


def jit_runtime_bytes() -> float:
    """Bytes the compiled kernels' runtime will still add to this process: nothing once a kernel
    was loaded, or where kernels are switched off (``INTERNUTOPIA_JIT=0``, ``numpy_only``)."""
    imported = 'numba' in sys.modules  # asked before enabled(), which imports it
    if not jit.enabled():
        return 0.0
    if any(kernel.signatures for kernel in jit.KERNELS):
        return 0.0
    return JIT_ENGINE_BYTES + (0.0 if imported else NUMBA_IMPORT_BYTES)


#: Runtimes loaded into this process on first use by name, with the resident bytes each added
#: (:func:`note_runtime_loaded`).
_LOADED_RUNTIMES: dict[str, float] = {}


def note_runtime_loaded(name: str, added_bytes: float) -> None:
    """Record that a library an entity loads on first use (``'ONNX Runtime'``, say) was just
    loaded into this process, adding about ``added_bytes``; an env built before it counts it in
    its estimate (:func:`runtimes_loaded`). Once per name and process."""
    _LOADED_RUNTIMES.setdefault(name, float(added_bytes))


def runtimes_loaded() -> dict[str, float]:
    """The runtimes :func:`note_runtime_loaded` recorded so far in this process, by name (a copy)."""
    return dict(_LOADED_RUNTIMES)


def check_slots_fit(env_num: int, bytes_per_slot: float, what: str, fixed_bytes: float = 0.0) -> None:
    """Raise ``ValueError`` when ``fixed_bytes + env_num * bytes_per_slot`` exceeds the memory available now.

    Args:
        env_num: the slot count (named in the error, since that is what the user sets).
        bytes_per_slot: an estimate of the bytes one slot takes for ``what``.
        what: what is being allocated, for the message (``"the slots' bookkeeping"``).
        fixed_bytes: bytes ``what`` takes whatever the slot count (a copy of a compiled model).
    """
    needed = fixed_bytes + env_num * bytes_per_slot
    available = available_bytes()
    if available is None or needed <= available:
        return
    tightest = tightest_room()
    where = f' under {tightest.what}' if tightest is not None and tightest.room <= available else ''
    gib = 2 ** 30
    fits = max(int((available - fixed_bytes) // bytes_per_slot), 0)
    raise ValueError(f'env_num={env_num} needs about {needed / gib:.1f} GiB for {what} ({bytes_per_slot:.0f} bytes per slot) '
                     f'but this process has {available / gib:.1f} GiB available{where}: lower env_num '
                     f'(at most about {fits} here), raise that limit, or spread the slots over several workers '
                     '(Config.distribute)')


#: The least a Ray runner process of a distributed env takes on its own (its unique resident
#: bytes: Python, Ray's worker, MuJoCo and this package imported, a one-Jetbot world stepped):
#: 103-123 MB measured on Linux x86-64 (docs/distributed.md). Its slots' worlds come on top.
RUNNER_PROCESS_BYTES = 100e6


def check_runners_fit(proc_num: int, bytes_per_runner: float, what: str) -> None:
    """Raise ``ValueError`` when ``proc_num * bytes_per_runner`` exceeds the memory available now,
    naming ``proc_num`` (a distributed env's runner count), before anything is started.

    >>> check_runners_fit(2, 1e6, 'a test')
    >>> check_runners_fit(10**12, 1e8, 'a test')       # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: proc_num=1000000000000 needs about ... GiB for a test (about 100 MB per runner) ...
    """
    needed = proc_num * bytes_per_runner
    available = available_bytes()
    if available is None or needed <= available:
        return
    gib = 2 ** 30
    fits = int(available // bytes_per_runner)
    raise ValueError(f'proc_num={proc_num} needs about {needed / gib:.1f} GiB for {what} (about '
                     f'{bytes_per_runner / 1e6:.0f} MB per runner) but this process has {available / gib:.1f} GiB '
                     f'available: lower proc_num (at most about {fits} here) or run the runners on a cluster '
                     '(RayDistributionCfg.head_address)')


__all__ = ['JIT_ENGINE_BYTES', 'NUMBA_IMPORT_BYTES', 'RUNNER_PROCESS_BYTES', 'MemoryRoom', 'available_bytes', 'cgroup_room',
           'check_runners_fit', 'check_slots_fit',
           'jit_runtime_bytes', 'memory_rooms', 'note_runtime_loaded', 'runtimes_loaded', 'tightest_room']
