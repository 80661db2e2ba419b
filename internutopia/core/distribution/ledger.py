"""The driver's account of episodes that fail on Ray: their tries, their records, what goes back.

A distributed env counts, per episode, the tries that ended without a record: a reset that could
not load it, a runner that died or hung while running it. An episode that has had
``Config.episode_attempts`` of them is recorded as failed instead of going back to the queue, so
no episode can stall a run; one whose record is written needs no more counting.

A runner that fails takes every episode it ran with it, and which of them made it fail is not
known. So a runner's failure counts a try only for the episodes that can be blamed: the one it ran
alone, or those that were on a failed runner before (*suspects*). Its other episodes become
suspects, with no try counted, and the queue hands suspects out at most one per runner in a reset
(:meth:`~internutopia.core.distribution.actors.QueueActor.take`): the next failure names its
episode, and an episode that crashes its runner no longer takes the others sharing it down. An
episode runs at most ``Config.episode_attempts + 1`` times so.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from internutopia.core.episode_queue import Episode
from internutopia.core.results import ResultsWriter
from internutopia.core.runner.failures import EPISODE_ATTRIBUTE, STEP_RESULT_ATTRIBUTE, Attempts, failed_record

__all__ = ['FailureLedger']


class FailureLedger:
    """Tries and records of a distributed env's episodes (see the module docstring).

    Args:
        attempts: the tries allowed per episode (``Config.episode_attempts``).
        results: the env's results writer.
        raise_failed: whether a call that recorded a failed episode raises (``Config.episode_errors``).
    """

    def __init__(self, attempts: int, results: ResultsWriter, raise_failed: bool) -> None:
        self.attempts = Attempts(attempts)
        self.results = results
        self.raise_failed = raise_failed
        #: Queue indices of the episodes that were on a runner when it failed, not ended since.
        self.suspects: set[int] = set()

    def write(self, record: dict[str, Any]) -> None:
        """Write a runner's record; its episode has ended, so its tries need no more counting."""
        self.attempts.forget(record['episode_index'])
        self.suspects.discard(record['episode_index'])
        self.results.write(record)

    def lost(self, hit: Iterable[tuple[int | None, Episode]], error: BaseException) -> tuple[list[Episode], dict[int, dict]]:
        """Episodes (with their global slot, or ``None``) of one runner that died or hung: the ones
        to requeue (in index order; those out of tries are recorded as failed) and the ``info`` note
        of each slot. A try is counted for the episode the runner ran alone, or for those already
        suspects; the others become suspects (see the module docstring)."""
        hit = list(hit)
        blamed = {e.index for _, e in hit if e.index in self.suspects} or ({hit[0][1].index} if len(hit) == 1 else set())
        requeued: list[Episode] = []
        notes: dict[int, dict] = {}
        for slot, episode in hit:
            tries, again = self.attempts.fail(episode.index) if episode.index in blamed else (0, True)
            if again:
                requeued.append(episode)
                self.suspects.add(episode.index)
            else:
                self.suspects.discard(episode.index)
                self.results.write(failed_record(episode.index, slot, episode.config.type, episode.config.scene_asset_path,
                                                 error, attempts=tries, steps=0, stage='runner'))
            if slot is not None:
                notes[slot] = {('requeued_episode' if again else 'failed_episode'): episode.index}
        requeued.sort(key=lambda e: e.index)
        return requeued, notes

    def not_loaded(self, episodes: list[Episode | None], exc: BaseException) -> list[Episode]:
        """A reset failed before any slot changed: the episodes that go back to the queue. The one
        that failed (named by the error) counts a try; out of tries, it is recorded as failed and
        left out, and the error's message says so."""
        index = getattr(exc, EPISODE_ATTRIBUTE, None)
        back = [e for e in episodes if e is not None]
        culprit = next((e for e in back if e.index == index), None)
        if culprit is not None and isinstance(exc, Exception):
            tries, again = self.attempts.fail(culprit.index, culprit.refused is None)
            if not again:
                back.remove(culprit)
                self.suspects.discard(culprit.index)
                self.results.write(failed_record(culprit.index, None, culprit.config.type,
                                                 culprit.config.scene_asset_path, exc, attempts=tries, steps=0))
                if exc.args and isinstance(exc.args[0], str):
                    exc.args = (exc.args[0] + f'; episode {culprit.index} failed to load {tries} time(s) and is recorded '
                                'as failed (Config.episode_attempts); the next reset goes on with the next episode',
                                *exc.args[1:])
        return back

    def check(self, records: list[dict[str, Any]], call_result: Any = None) -> None:
        """With ``episode_errors='raise'``: raise for the first episode among ``records`` (those a
        complete call wrote) recorded as failed, carrying ``call_result``, what the call gave every
        slot (:func:`~internutopia.core.runner.failures.step_result_of`, as on one process)."""
        failed = [record for record in records if record.get('outcome') == 'failed']
        if failed and self.raise_failed:
            first = failed[0]
            error = RuntimeError(f"episode {first['episode_index']} failed in slot {first['slot']}: "
                                 f"{first['error_type']}: {first['error']} (recorded as failed)")
            if call_result is not None:
                setattr(error, STEP_RESULT_ATTRIBUTE, call_result)
            raise error
