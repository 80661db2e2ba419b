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
"""

from __future__ import annotations

import os


def available_bytes() -> int | None:
    """Memory the system can give this process now (``MemAvailable``), or ``None`` if unknown."""
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


def check_slots_fit(env_num: int, bytes_per_slot: float, what: str) -> None:
    """Raise ``ValueError`` when ``env_num * bytes_per_slot`` exceeds the memory available now.

    Args:
        env_num: the slot count (named in the error, since that is what the user sets).
        bytes_per_slot: an estimate of the bytes one slot takes for ``what``.
        what: what is being allocated, for the message (``"the slots' bookkeeping"``).
    """
    needed = env_num * bytes_per_slot
    available = available_bytes()
    if available is None or needed <= available:
        return
    gib = 2 ** 30
    fits = int(available // bytes_per_slot)
    raise ValueError(f'env_num={env_num} needs about {needed / gib:.1f} GiB for {what} ({bytes_per_slot:.0f} bytes per slot) '
                     f'but this machine has {available / gib:.1f} GiB available: lower env_num (at most about {fits} here) '
                     'or spread the slots over several workers (Config.distribute)')


__all__ = ['available_bytes', 'check_slots_fit']
