"""How a running episode ends (the runner's collaborator): its metrics, one record in the results
file, its slot done, whatever ended it: its task (terminated or truncated), a reset that
abandoned it, a simulation that diverged (the slot then back at its start state), or an
extension's error on a step (a failed record).
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from internutopia.core.runner.failures import failed_record
from internutopia.core.runner.outcomes import Advance
from internutopia.core.runner.slots import SlotStatus

logger = logging.getLogger(__name__)

_ACTIVE = int(SlotStatus.ACTIVE)  # a plain int for per-slot comparisons (enum lookups are slow)


class MetricsFailed(Exception):
    """Raised by :meth:`EpisodeEnds.finish` when an episode's metrics raise as it ends (a
    metric's ``calc()``, a task's ``calculate_metrics()``): ``error`` is theirs. The slot is left
    running, for :meth:`EpisodeEnds.fail_running` to end as failed."""

    def __init__(self, slot: int, error: Exception) -> None:
        super().__init__(f'env {slot}: {type(error).__name__}: {error}')
        self.slot = slot
        self.error = error


class EpisodeEnds:
    """Ends the running episodes of a runner's slots (see the module docstring).

    Args:
        runner: the :class:`~internutopia.core.runner.runner.Runner` it serves (its table, terms,
            results file and the errors of the episodes recorded as failed in a call).
    """

    def __init__(self, runner: Any) -> None:
        self.runner = runner

    def finish(self, slot: int, terminated: bool, truncated: bool, outcome: str | None = None) -> dict[str, Any]:
        """End ``slot``'s episode and write its record; ``outcome`` marks one that did not end by
        its task: ``'diverged'`` (its simulation blew up) or ``'abandoned'`` (reset while running)."""
        table = self.runner.table
        metrics_error: Exception | None = None
        try:
            metrics = self.runner.terms.episode_metrics(slot)
        except Exception as exc:
            if outcome != 'abandoned':
                raise MetricsFailed(slot, exc) from exc
            # An episode reset before it ended: metrics written for finished episodes may not
            # compute on it (InternUtopia never asks them then); the reset goes on regardless.
            metrics, metrics_error = None, exc
        # The slot is done before its record goes out: a failing write never leaves it running.
        table.set_status(slot, SlotStatus.DONE)
        record = table.record(slot, metrics=metrics, steps=int(table.steps[slot]), terminated=terminated,
                              truncated=truncated, wall_time_s=round(time.perf_counter() - float(table.started_at[slot]), 6))
        if outcome is not None:
            record['outcome'] = outcome
        if metrics_error is not None:
            record['metrics_error'] = f'{type(metrics_error).__name__}: {metrics_error}'
        try:
            self.runner.results.write(record)
        except BaseException:  # Ctrl-C inside a metric's conversion: nothing was written
            if outcome is None:  # so the episode ends (once) on a later step, as its task says again
                table.set_status(slot, SlotStatus.ACTIVE)
            raise
        return metrics

    def abandon_running(self) -> None:
        """End every episode still running as abandoned, each with its record (as a reset of its
        slot would): the env is closing, and every episode handed out ends with one record. One
        slot's failure (its metrics, the write) is logged and leaves the others' records be."""
        for slot in self.runner.table.active_slots().tolist():
            try:
                self.finish(slot, False, False, outcome='abandoned')
            except Exception:  # noqa: BLE001 - a close goes on whatever one record does
                logger.exception('env %d: the record of the episode abandoned at close failed', slot)

    def finish_each(self, slots: Any, terminated: np.ndarray, truncated: np.ndarray,
                    outcome: str | None = None) -> tuple[dict[int, Any], dict[int, Exception]]:
        """:meth:`finish` for each of ``slots``: their metrics by slot, and the errors of those whose
        metrics raised (each left running for :meth:`fail_running`, which ends it with a failed
        record); the other slots end as their tasks said, whatever one slot's metrics do."""
        metrics: dict[int, Any] = {}
        raised: dict[int, Exception] = {}
        for slot in slots:
            try:
                metrics[slot] = self.finish(slot, bool(terminated[slot]), bool(truncated[slot]), outcome)
            except MetricsFailed as failure:
                raised[slot] = failure.error
        return metrics, raised

    def restore_start_states(self, slots: Any) -> None:
        """Put each of ``slots`` back at its episode's start state, controllers and sensors reset
        (after a divergence: no NaN or runaway command stays behind for a slot's next episode),
        with one forward pass for them all (a pass per slot costs a pass over every world of a
        Warp pack each: quadratic when a step diverges many slots, or overflows a pack's buffers).
        Raises the first error a slot's placing raised, once every other slot is restored."""
        slots = [int(slot) for slot in slots]
        if not slots:
            return
        table = self.runner.table
        steps = table.steps[slots].copy()
        try:
            self.runner._place_episodes(slots, [table.episodes[slot] for slot in slots])
        finally:
            table.steps[slots] = steps
            for slot in slots:
                table.set_status(slot, SlotStatus.DONE)
            self.runner.world.forward(np.asarray(slots, dtype=np.intp))

    def fail_running(self, done: Advance, failed: dict[int, Exception], metrics_raised: Any = ()) -> None:
        """End the running episodes of ``failed`` slots as failed (one record each, the slot is
        done: ``terminated`` on this step, ``info`` says why); no other slot is touched. The slots
        of ``metrics_raised`` failed in their metrics, which are not asked again."""
        table = self.runner.table
        for slot, exc in failed.items():
            if table.status[slot] != _ACTIVE:
                continue
            metrics = None
            if slot not in metrics_raised:
                try:
                    metrics = self.runner.terms.episode_metrics(slot)
                except Exception:
                    metrics = None  # the metric may be what failed
            table.set_status(slot, SlotStatus.DONE)
            episode = table.episodes[slot]
            assert episode is not None  # (an active slot)
            self.runner.results.write(failed_record(episode.index, slot, episode.config.type, episode.config.scene_asset_path,
                                                    exc, attempts=1, steps=int(table.steps[slot]), stage='step', metrics=metrics))
            self.runner._failed_errors.append(exc)
            done.terminated[slot] = True
            done.truncated[slot] = False
            done.reward[slot] = 0.0
            done.metrics[slot] = metrics if metrics is not None else {}
            done.failed[slot] = f'{type(exc).__name__}: {exc}'


__all__ = ['EpisodeEnds', 'MetricsFailed']
