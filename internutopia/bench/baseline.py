"""The process-pool baseline of the robot rows, run only where it fits in memory.

For each robot and camera setting the first pool measured gives the footprint of one worker
(its peak resident memory) and of the rest of its process tree (driver, fork server); when the
first ``env_num`` asked for is not 1, a one-worker pool of a few steps measures it first. Every
later pool is planned from those figures and the memory free at that moment
(:func:`internutopia.bench.memory.plan_pool`): run whole, scaled down to the workers that fit,
or skipped, and the progress line and the row's JSON say which and why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from internutopia.bench.alternative import measure_async
from internutopia.bench.fresh import DEFAULT_TIMEOUT_S
from internutopia.bench.memory import DEFAULT_SHARE, memory_budget, plan_pool

__all__ = ['AsyncBaseline', 'EMPTY']

#: A row's baseline fields when no pool ran (``--no-async``).
EMPTY: dict[str, Any] = {'async_env_steps_per_s': None, 'async_workers': 0, 'async_scaled': False, 'async_note': None,
                         'async_peak_memory_mb': None, 'async_worker_peak_mb': None, 'async_memory_needed_mb': None,
                         'async_memory_budget_mb': None}
#: Timed steps of the one-worker pool that measures a footprint.
PROBE_STEPS = 40


class AsyncBaseline:
    """Plans and measures the ``AsyncVectorEnv`` baseline of each robot row (see the module doc).

    Args:
        log: where progress lines go.
        share: the share of the free memory a pool may take.
        max_workers: at most this many workers per pool (``None``: memory decides).
        timeout_s: time limit of one pool's measurement.
        cores: the cores the plan counts (:func:`~internutopia.core.util.cpus.usable_cpus` when ``None``).
    """

    def __init__(self, log: Callable[[str], Any] = print, share: float = DEFAULT_SHARE, max_workers: int | None = None,
                 timeout_s: float | None = DEFAULT_TIMEOUT_S, cores: int | None = None) -> None:
        self.log = log
        self.share = share
        self.max_workers = max_workers
        self.timeout_s = timeout_s
        self.cores = cores
        #: (robot, camera) -> (peak MB of one worker, MB of the rest of the tree)
        self.footprints: dict[tuple[str, str], tuple[float, float]] = {}

    def _run(self, robot: str, workers: int, camera: str, steps: int, user_config: str | None) -> dict[str, Any]:
        result = measure_async(robot, workers, camera, steps, user_config, timeout_s=self.timeout_s)
        base = max(result['tree_peak_mb'] - result['workers_mb'], 0.0)
        known = self.footprints.get((robot, camera), (0.0, 0.0))
        self.footprints[(robot, camera)] = (max(known[0], result['worker_peak_mb']), max(known[1], base))
        return result

    def measure(self, robot: str, env_num: int, camera: str, steps: int, user_config: str | None = None) -> dict[str, Any]:
        """The baseline's fields of one row (keys of :data:`EMPTY`); failures are logged, not raised."""
        label = f'{robot} x{env_num} cameras {camera}: AsyncVectorEnv'
        out = dict(EMPTY)
        key = (robot, camera)
        try:
            if key not in self.footprints and env_num > 1:
                self.log(f'{label}: measuring one worker first ({PROBE_STEPS} steps) to plan the pool\'s memory')
                self._run(robot, 1, camera, PROBE_STEPS, user_config)
            budget = memory_budget(self.share)
            per_worker, base = self.footprints.get(key, (0.0, 0.0))
            plan = plan_pool(env_num, per_worker, base, budget, self.cores, self.max_workers)
            out.update({'async_note': plan.note, 'async_scaled': plan.scaled,
                        'async_memory_needed_mb': round(plan.needed_mb, 1) if per_worker else None,
                        'async_memory_budget_mb': round(budget.usable_mb, 1)})
            if plan.skipped:
                self.log(f'{label} {plan.note} (budget: {budget.describe()}); no ratio')
                return out
            if plan.scaled:
                self.log(f'{label} {plan.note}')
            result = self._run(robot, plan.workers, camera, steps, user_config)
        except Exception as exc:  # a pool that fails (or runs past its time limit) costs its row's ratio only
            self.log(f'{label} failed ({type(exc).__name__}: {str(exc).splitlines()[0]}); no ratio')
            out['async_note'] = f'failed: {type(exc).__name__}: {str(exc).splitlines()[0]}'
            return out
        per_worker, base = self.footprints[key]
        out.update({'async_env_steps_per_s': result['env_steps_per_s'], 'async_workers': result['workers'],
                    'async_peak_memory_mb': round(result['tree_peak_mb'], 1),
                    'async_worker_peak_mb': round(result['worker_peak_mb'], 1),
                    'async_memory_needed_mb': round(base + env_num * per_worker, 1)})
        self.log(f'{label} {result["env_steps_per_s"]:,.0f} env-steps/s with {result["workers"]} workers, '
                 f'process tree peak {result["tree_peak_mb"]:,.0f} MB ({result["processes"]} processes)')
        return out
