"""What :class:`~internutopia.core.distribution.runners.RayRunners` does when a runner dies or hangs.

A mixin of ``RayRunners`` (its slot books, ledger, pool and queue actor are ``RayRunners``'):
the episodes the runner was running, and those of a reset it held (handed to it, or taken from the
queue itself), go back to the front of the queue (each at most ``Config.episode_attempts`` times
in all, then recorded as failed); the episodes a reset was replacing are recorded as abandoned
here, since their records died with the runner; the runner is replaced, and a reset it failed in
runs again on the new one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from internutopia.core.distribution.calls import RunnerHung
from internutopia.core.episode_queue import Episode
from internutopia.core.runner import SlotStatus, check_episode
from internutopia.core.runner.failures import EPISODE_ATTRIBUTE

__all__ = ['RunnerRecovery', 'check_taken']

logger = logging.getLogger('internutopia.core.distribution.runners')


def check_taken(episodes: list[Episode | None]) -> None:
    """Check each episode taken from the queue for a reset (its types and files), before any
    runner changes; the error of one that fails carries its queue index."""
    for episode in episodes:
        if episode is not None:
            try:
                check_episode(episode)
            except Exception as exc:
                setattr(exc, EPISODE_ATTRIBUTE, episode.index)
                raise


class RunnerRecovery:
    """Requeueing, recording and replacing after a runner failed (mixed into ``RayRunners``)."""

    # (RayRunners' own, used here)
    _local_num: int
    _episodes: list[Episode | None]
    _status: Any
    _steps: Any
    _started_at: Any
    _failures: dict[int, dict[str, Any]]
    _ledger: Any
    _pool: Any
    _dist: Any

    if TYPE_CHECKING:
        def _unwrap(self, call: Any) -> Any: ...
        def _get_runner(self, ref: Any, deadline: float | None = None, runner_id: int | None = None) -> Any: ...
        def _wait_ready(self, runner_id: int) -> None: ...
        def _submit_reset(self, runner_id: int, local: list[int], episodes: list[Episode | None]) -> tuple[int, Any]: ...

    def _runner_failed(self, runner_id: int, in_flight: Iterable[Episode | None] = (),
                       reason: BaseException | None = None) -> list[Episode]:
        """Requeue what runner ``runner_id`` was running (and ``in_flight``), note it, restart the
        runner. An episode out of tries (``Config.episode_attempts``) is recorded as failed instead."""
        import ray

        what = reason if reason is not None else RuntimeError(f'runner {runner_id} died')
        lo, hi = runner_id * self._local_num, (runner_id + 1) * self._local_num
        hit: list[tuple[int | None, Episode]] = []
        for g in range(lo, hi):
            episode = self._episodes[g]
            if self._status[g] == SlotStatus.ACTIVE and episode is not None:
                hit.append((g, episode))
            self._status[g] = SlotStatus.EMPTY
            self._episodes[g] = None
        hit.extend((None, e) for e in in_flight if e is not None)
        requeued, notes = self._ledger.lost(hit, what)
        for slot, note in notes.items():
            self._failures[slot] = {'runner_failed': True, 'runner_id': runner_id, **note}
        if requeued:
            ray.get(self._pool.queue.put_back.remote(requeued))
        logger.warning('runner %d failed (%s); requeued episodes %s; starting a new runner',
                       runner_id, what, [e.index for e in requeued])
        self._pool.restart(runner_id)
        return requeued

    def _lost_in_reset(self, runner_id: int, slots: list[int], ticket: int, handed: list[Episode | None],
                       reason: BaseException) -> None:
        """Runner ``runner_id`` died or hung in the reset ``ticket`` of global ``slots`` with the
        episodes ``handed``: everything it did there is lost with it, records included. The
        episodes those slots were running were being reset, so they are abandoned (recorded here);
        the episodes of the reset it still held (handed, or taken from the queue itself, less those
        it put back) and its other running episodes are requeued (or recorded as failed, out of
        tries); the runner is replaced."""
        import ray

        for g in slots:
            if self._status[g] == SlotStatus.ACTIVE and self._episodes[g] is not None:
                self._ledger.write(self._abandoned_record(g, f'runner {runner_id} failed during the reset that abandoned '
                                                             f'this episode ({type(reason).__name__}): its metrics were not read'))
            self._status[g] = SlotStatus.EMPTY
            self._episodes[g] = None
            self._failures.pop(g, None)
        held, back = self._unwrap(lambda: ray.get(self._pool.queue.reclaim.remote(runner_id, ticket)))
        gone = set(back) | {e.index for e in held}
        in_flight = [e for e in handed if e is not None and e.index not in gone] + held
        self._runner_failed(runner_id, in_flight, reason=reason)

    def _abandoned_record(self, g: int, why: str) -> dict[str, Any]:
        """The record of global slot ``g``'s running episode, abandoned where its runner could not
        write it (no metrics; ``why`` says so)."""
        episode = self._episodes[g]
        assert episode is not None, f'slot {g} runs no episode'
        return {'episode_index': episode.index, 'slot': g, 'task_type': episode.config.type,
                'scene': episode.config.scene_asset_path, 'metrics': None, 'steps': int(self._steps[g]),
                'terminated': False, 'truncated': False,
                'wall_time_s': round(time.perf_counter() - float(self._started_at[g]), 6), 'outcome': 'abandoned',
                'metrics_error': why}

    def _reset_again(self, runner_id: int, slots: list[int]) -> Any:
        """After runner ``runner_id`` failed in a reset of global ``slots``: the same reset on its new
        actor, with the next episodes of the queue (those of the failed reset are at its front)."""
        import ray

        lost = (ray.exceptions.RayActorError, RunnerHung)
        local = [g % self._local_num for g in slots]
        mine: list[Episode | None] = self._take(slots)
        try:
            check_taken(mine)
            self._wait_ready(runner_id)  # (its own start-up timeout: the reset's time starts after it)
            deadline = time.monotonic() + self._dist.reset_timeout_s
            self._get_runner(self._pool.actors[runner_id].prepare.remote(mine), deadline, runner_id)  # a new world
        except lost as exc:
            self._runner_failed(runner_id, mine, reason=exc)
            raise RuntimeError(f'runner {runner_id} failed twice while resetting slots {slots}: {exc}') from exc
        except Exception as exc:
            self._give_back(mine, exc)
            raise
        ticket, ref = self._submit_reset(runner_id, local, mine)
        try:
            return self._get_runner(ref, deadline, runner_id)
        except lost as exc:
            self._lost_in_reset(runner_id, slots, ticket, mine, exc)
            raise RuntimeError(f'runner {runner_id} failed twice while resetting slots {slots}: {exc}') from exc

    def _take(self, slots: list[int]) -> list[Episode | None]:
        """The next episodes of the queue for global ``slots``, in order, suspects spread one per
        runner (:meth:`QueueActor.take <internutopia.core.distribution.actors.QueueActor.take>`)."""
        import ray

        runners = [g // self._local_num for g in slots]
        suspects = sorted(self._ledger.suspects)
        return self._unwrap(lambda: ray.get(self._pool.queue.take.remote(runners, suspects)))

    def _give_back(self, episodes: list[Episode | None], exc: BaseException) -> None:
        """A reset failed before any slot changed: its episodes go back to the queue (but one out
        of tries, see :meth:`FailureLedger.not_loaded`)."""
        import ray

        ray.get(self._pool.queue.put_back.remote(self._ledger.not_loaded(episodes, exc)))
