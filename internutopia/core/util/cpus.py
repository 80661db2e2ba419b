"""How many CPUs this process may use: the default thread count of the physics, the cameras and
a local Ray.

``os.cpu_count()`` counts the machine's CPUs, not the ones a process may run on. On a cluster node
a job is confined to a few of them (Slurm's ``--cpus-per-task``, ``taskset``, Docker's
``--cpuset-cpus``: the CPU affinity) or given a share of their time (Docker's ``--cpus``, a
Kubernetes CPU limit: the cgroup's CPU quota); a physics thread pool sized by the machine then
runs dozens of threads on two cores (64 carried H1s stepped 2.2 times slower with 32 threads and
3.2 times slower with 128 than with 2, on 2 cores). :func:`usable_cpus` is the least of the CPUs
in the affinity mask and the quota rounded up.

>>> 1 <= usable_cpus() <= (os.cpu_count() or 1)
True
"""

from __future__ import annotations

import math
import os

from internutopia.core.util.cgroups import cgroup_folders, read_int, read_text


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask), fewer where a cgroup CPU quota
    allows less time than that (a quota of 1.5 CPUs counts as 2); at least 1."""
    count = _affinity_count()
    quota = cgroup_cpu_quota()
    if quota is not None:
        count = min(count, max(1, math.ceil(quota)))
    return max(1, count)


def _affinity_count() -> int:
    process_cpu_count = getattr(os, 'process_cpu_count', None)  # (Python 3.13: the affinity mask)
    if process_cpu_count is not None:
        return process_cpu_count() or 1
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # (not Linux)
        return os.cpu_count() or 1


def cgroup_cpu_quota() -> float | None:
    """The tightest CPU quota of this process's cgroups in CPUs (quota over period: ``1.5`` is one
    and a half CPUs of time), ``None`` where none is set (v2 ``cpu.max``; v1
    ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``)."""
    quotas = []
    for folder, v2 in cgroup_folders('cpu'):
        if v2:
            text = read_text(os.path.join(folder, 'cpu.max'))
            fields = text.split() if text else []
            if len(fields) != 2 or fields[0] == 'max':
                continue
            try:
                quota, period = int(fields[0]), int(fields[1])
            except ValueError:
                continue
        else:
            v1_quota = read_int(os.path.join(folder, 'cpu.cfs_quota_us'))
            v1_period = read_int(os.path.join(folder, 'cpu.cfs_period_us'))
            if v1_quota is None or v1_period is None or v1_quota < 0:  # (-1: no quota)
                continue
            quota, period = v1_quota, v1_period
        if quota > 0 and period > 0:
            quotas.append(quota / period)
    return min(quotas) if quotas else None


__all__ = ['cgroup_cpu_quota', 'usable_cpus']
