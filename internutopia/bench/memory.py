"""How much memory a baseline's process pool may take, and how many workers fit in it.

A process pool costs one whole process per env (``AsyncVectorEnv``: an interpreter, the robot
model, its own physics data): about 385 MB per H1 worker, so 64 of them want about 24 GB. Before
a pool starts, :func:`plan_pool` compares what it would need (its measured per-worker footprint
times the workers, plus the driver and fork server) with what this machine can give
(:func:`memory_budget`: the kernel's ``MemAvailable``, and the free part of the cgroup's limit
when the benchmark runs in a container), and runs it whole, runs fewer workers, or skips it.

>>> budget = MemoryBudget(available_mb=4000.0, cgroup_free_mb=None, total_mb=8000.0, share=0.5)
>>> plan = plan_pool(64, per_worker_mb=385.0, base_mb=150.0, budget=budget, cores=2)
>>> plan.workers, plan.scaled
(4, True)
>>> plan_pool(64, per_worker_mb=385.0, base_mb=150.0, budget=budget, cores=8).skipped
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from internutopia.core.util.cpus import usable_cpus

__all__ = ['MemoryBudget', 'PoolPlan', 'cgroup_free_mb', 'memory_budget', 'plan_pool']

#: Share of the free memory a baseline may take by default (the machine may be shared).
DEFAULT_SHARE = 0.5


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding='utf-8') as stream:
            text = stream.read().strip()
    except OSError:
        return None
    return None if text in ('', 'max') else int(text)


def _meminfo_mb(key: str) -> float | None:
    try:
        with open('/proc/meminfo', encoding='utf-8') as stream:
            for line in stream:
                if line.startswith(key + ':'):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def cgroup_free_mb() -> float | None:
    """Memory left under this process's cgroup limit (MB): v2 ``memory.max - memory.current``, or
    v1 ``memory.limit_in_bytes - memory.usage_in_bytes``; ``None`` without a limit."""
    for limit_file, usage_file in (('/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory.current'),
                                   ('/sys/fs/cgroup/memory/memory.limit_in_bytes',
                                    '/sys/fs/cgroup/memory/memory.usage_in_bytes')):
        limit = _read_int(limit_file)
        if limit is None or limit >= 2 ** 60:  # no limit ("max", or v1's page-rounded 2**63)
            continue
        usage = _read_int(usage_file) or 0
        return max(limit - usage, 0) / 2 ** 20
    return None


@dataclass(frozen=True)
class MemoryBudget:
    """What a baseline may use: ``share`` of the smaller of ``available_mb`` (the kernel's
    ``MemAvailable``) and ``cgroup_free_mb`` (``None`` without a cgroup limit)."""

    available_mb: float
    cgroup_free_mb: float | None
    total_mb: float | None
    share: float = DEFAULT_SHARE

    @property
    def usable_mb(self) -> float:
        free = self.available_mb if self.cgroup_free_mb is None else min(self.available_mb, self.cgroup_free_mb)
        return self.share * free

    def describe(self) -> str:
        """One line: where the figure comes from."""
        text = f'{self.usable_mb:,.0f} MB ({self.share:.0%} of {self.available_mb:,.0f} MB available'
        if self.cgroup_free_mb is not None:
            text += f', {self.cgroup_free_mb:,.0f} MB left under the cgroup limit'
        return text + ')'


def memory_budget(share: float = DEFAULT_SHARE) -> MemoryBudget:
    """The memory budget of a baseline now (see :class:`MemoryBudget`)."""
    available = _meminfo_mb('MemAvailable')
    if available is None:  # no /proc: psutil where installed, else no limit known
        try:
            import psutil

            available = psutil.virtual_memory().available / 2 ** 20
        except ImportError:
            available = math.inf
    return MemoryBudget(available_mb=float(available), cgroup_free_mb=cgroup_free_mb(),
                        total_mb=_meminfo_mb('MemTotal'), share=share)


@dataclass(frozen=True)
class PoolPlan:
    """How a pool of ``env_num`` workers runs: ``workers`` of them (0: skipped), and why."""

    env_num: int
    workers: int
    needed_mb: float
    usable_mb: float
    note: str | None = None

    @property
    def scaled(self) -> bool:
        return 0 < self.workers < self.env_num

    @property
    def skipped(self) -> bool:
        return self.workers == 0


def plan_pool(env_num: int, per_worker_mb: float, base_mb: float, budget: MemoryBudget, cores: int | None = None,
              max_workers: int | None = None) -> PoolPlan:
    """Workers of a pool for ``env_num`` envs that fit in ``budget``.

    All ``env_num`` when they fit. Otherwise as many as fit, if that is at least ``cores`` (a
    pool's throughput is bounded by the cores: ``cores`` or more workers give it the throughput
    ``env_num`` would, or more, since fewer processes switch less); with fewer, the pool is
    skipped. ``max_workers`` caps the workers (a shorter run) under the same rule.

    Args:
        env_num: the envs (one worker each) the pool is for.
        per_worker_mb: peak memory of one worker, measured.
        base_mb: the rest of the pool's process tree (its driver, fork server), measured.
        budget: what the pool may take.
        cores: the cores this process may use (:func:`~internutopia.core.util.cpus.usable_cpus` when ``None``).
        max_workers: an upper bound on the workers (``None``: none).
    """
    cores = cores or usable_cpus()
    needed = base_mb + env_num * per_worker_mb
    usable = budget.usable_mb
    fit = env_num if per_worker_mb <= 0 else max(0, int((usable - base_mb) // per_worker_mb))
    workers = min(env_num, fit, max_workers or env_num)
    floor = min(env_num, cores)
    if workers == env_num:
        return PoolPlan(env_num, env_num, needed, usable)
    if workers < floor:
        return PoolPlan(env_num, 0, needed, usable,
                        f'skipped: {env_num} workers need about {needed:,.0f} MB ({per_worker_mb:,.0f} MB each), '
                        f'and the {floor} the cores need to be busy do not fit in the budget of {usable:,.0f} MB')
    why = (f'about {needed:,.0f} MB for {env_num} ({per_worker_mb:,.0f} MB each) is more than the budget of '
           f'{usable:,.0f} MB' if workers == fit else f'--async-max-workers {max_workers}')
    return PoolPlan(env_num, workers, needed, usable,
                    f'scaled down to {workers} of {env_num} workers: {why}; {workers} workers keep the '
                    f'{cores} cores busy, and its env-steps/s is taken for the full pool\'s')
