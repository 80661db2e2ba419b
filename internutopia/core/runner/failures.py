"""Episodes that fail: counting their tries, finding the slots a group call failed for, recording them.

An episode fails when its scene, task, robots, metrics or reward raise while it is loaded or
started, or when its task, metrics, reward, controllers or observations raise while it runs. The
runner ends such an episode on its own slot (every other slot carries on) and writes one record
for it, ``"outcome": "failed"`` with the error's type and message. An episode that fails to load
or start goes back to the queue and is tried again, at most ``Config.episode_attempts`` times in
all, then recorded as failed; so a broken episode never comes back forever.

>>> record = failed_record(3, 1, 'FiniteStepTask', None, ValueError('bad'), attempts=2, steps=0)
>>> record['outcome'], record['error_type'], record['error'], record['attempts']
('failed', 'ValueError', 'bad', 2)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ['Attempts', 'SlotFailures', 'each_slot', 'failed_record', 'slots_that_fail', 'step_result_of', 'tag_episode']

#: Attribute set on an exception to say which episode (its queue index) it came from.
EPISODE_ATTRIBUTE = 'internutopia_episode_index'
#: Attribute set on an exception raised after a step was complete (``episode_errors='raise'``): the
#: step's per-slot results, which the caller's observers still see (a recording's frames).
STEP_RESULT_ATTRIBUTE = 'internutopia_step_result'


def step_result_of(exc: BaseException) -> Any:
    """The per-slot results of the complete step ``exc`` was raised after, or ``None``."""
    return getattr(exc, STEP_RESULT_ATTRIBUTE, None)


def tag_episode(exc: BaseException, index: int) -> BaseException:
    """Mark ``exc`` as raised while loading episode ``index`` (kept when it is pickled: Ray)."""
    try:
        setattr(exc, EPISODE_ATTRIBUTE, index)
    except (AttributeError, TypeError):  # pragma: no cover - an exception type with __slots__
        pass
    return exc


class Attempts:
    """How many times each episode (by queue index) failed to load or start so far.

    Only episodes that failed and have not yet started or been given up are held, so the
    table stays as small as the number of episodes failing at once.

    Args:
        limit: tries allowed per episode (``Config.episode_attempts``).
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._failed: dict[int, int] = {}

    def fail(self, index: int, retryable: bool = True) -> tuple[int, bool]:
        """One more failed try of episode ``index``: ``(tries so far, whether it may be tried again)``;
        never again when not ``retryable`` (an entry that is no episode: it would fail the same)."""
        tries = self._failed.get(index, 0) + 1
        if tries >= self.limit or not retryable:
            self._failed.pop(index, None)
            return tries, False
        self._failed[index] = tries
        return tries, True

    def forget(self, index: int) -> None:
        """Episode ``index`` needs no more counting (it started, or its record is written)."""
        if self._failed:
            self._failed.pop(index, None)

    def __len__(self) -> int:
        return len(self._failed)


def failed_record(index: int, slot: int | None, task_type: str, scene: str | None, error: BaseException, *,
                  attempts: int, steps: int, stage: str = 'reset', metrics: Any = None) -> dict[str, Any]:
    """The results record of an episode that failed: its index, slot, task type and scene, the
    error's type and message, the tries it had, its steps, where it failed (``'reset'`` or ``'step'``)
    and its metrics when they could still be read."""
    record = {'episode_index': index, 'slot': slot, 'task_type': task_type, 'scene': scene, 'outcome': 'failed',
              'error_type': type(error).__name__, 'error': str(error), 'stage': stage, 'attempts': attempts,
              'steps': steps, 'terminated': False, 'truncated': False}
    if metrics is not None:
        record['metrics'] = metrics
    return record


class SlotFailures(Exception):
    """Raised by a group call that ran each of its slots on its own (a per-slot adapter running
    one upstream-style instance per slot) when some of them raised: ``errors`` are those slots'
    errors, ``result`` what the call returns, its failed slots' entries left at their defaults.

    The call ran every other slot once and must not run them again (their hooks keep state: a
    metric counting its updates, a task counting its steps), so the runner takes ``errors`` and
    ``result`` as they are instead of calling it again slot by slot (:func:`slots_that_fail`).
    """

    def __init__(self, errors: dict[int, Exception], result: Any = None) -> None:
        first_slot, first = next(iter(errors.items()))
        super().__init__(f'env {first_slot}: {type(first).__name__}: {first}'
                         + (f' (and {len(errors) - 1} more env(s))' if len(errors) > 1 else ''))
        self.errors = errors
        self.result = result

    def __reduce__(self) -> Any:
        return type(self), (self.errors, self.result)


def each_slot(slots: Any, call: Callable[[int, int], None], result: Any = None) -> None:
    """``call(index, slot)`` for each of ``slots``, once each, whatever the others raise; then a
    :class:`SlotFailures` of the slots that raised (with ``result``, the others' results), if any:
    a per-slot adapter's group call, whose slots keep state between calls and must not be re-run."""
    errors: dict[int, Exception] = {}
    for index, slot in enumerate(np.asarray(slots).tolist()):
        try:
            call(index, slot)
        except Exception as exc:  # this slot's episode fails; the others' calls stand (each ran once)
            errors[slot] = exc
    if errors:
        raise SlotFailures(errors, result)


def slots_that_fail(call: Callable[[np.ndarray], Any], slots: np.ndarray) -> dict[int, Exception]:
    """After ``call(slots)`` raised: call it for each slot alone and return the slots it fails
    for, with their errors. A group call is one call for many slots; this finds whose data broke
    it, so only those slots' episodes end. (A call that also fails for every slot alone fails them
    all.)"""
    failed: dict[int, Exception] = {}
    for slot in slots.tolist():
        try:
            call(np.array([slot], dtype=slots.dtype))
        except Exception as exc:  # an extension's error: it ends this slot's episode only
            failed[slot] = exc
    return failed
