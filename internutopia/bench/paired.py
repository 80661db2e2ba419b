"""Paired timing: ours and the physics limit in alternating short chunks, one ratio per pair.

A shared machine speeds up and slows down from one millisecond to the next (other processes, the
CPU's clock, the hypervisor). Timing each side once, or keeping each side's best of a few long
rounds, lets one lucky or unlucky stretch decide the ratio. Here the run is cut into many chunks
of a few tens of steps. Each chunk is timed twice, back to back: first ours runs it (recording the
controls its controllers apply), then the limit replays the same chunk from the same start state
(:class:`internutopia.limit.PhysicsLimit`). Both halves of a pair see nearly the same machine, so
their ratio is nearly free of its drift; a disturbance that hits one half spoils one pair, and the
median over the pairs ignores it. Each step is timed on its own, and the steps during which the
kernel took a core from the process (on either side) are left out of their pair when enough
others remain. The interquartile range of the pair ratios says how steady the machine was.

>>> import numpy as np
>>> summary = summarize(np.array([1.0, 1.0, 2.0, 1.0]), np.array([0.8, 0.9, 0.9, 0.85]))
>>> [round(summary[key], 4) for key in ('ratio', 'ratio_q1', 'ratio_q3')]
[0.825, 0.7125, 0.8625]
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ['ChunkReplay', 'involuntary_switches', 'summarize', 'time_calls', 'time_pairs']

#: Fewest clean pairs a summary is taken from (see time_pairs); with fewer, every pair counts.
MIN_CLEAN = 5


class ChunkReplay:
    """Base of a limit for :func:`time_pairs` that needs nothing of ours' chunk: it runs a chunk of
    its own in :meth:`replay` (seconds per step); recording ours' controls is a no-op."""

    def start_round(self, steps: int) -> None:
        pass

    def record(self, step: int) -> None:
        pass

    def replay(self) -> float:
        raise NotImplementedError


def involuntary_switches() -> int:
    """How many times the kernel took a core away from any thread of this process so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw


def time_pairs(step: Callable[[], Any], limit: Any, pairs: int, chunk: int,
               clock: Callable[[], float] = time.perf_counter,
               switches: Callable[[], int] = involuntary_switches) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Time ``pairs`` pairs of ``chunk`` steps: ours (``step()``), then the limit's replay of them.

    When the limit times its steps one by one (``replay_steps``, as
    :class:`~internutopia.limit.PhysicsLimit` does), a pair compares the steps during which
    neither side was preempted (the kernel took no core from the process), when they are at least
    half the chunk: on a busy machine a preemption then spoils a step or two, not the pair.
    Other limits (``replay()``, one time per chunk) make a pair clean when no preemption hit it.

    Args:
        step: one step of ours (``env.step`` or ``env.step_arrays`` with a fixed action).
        limit: a :class:`~internutopia.limit.PhysicsLimit` of the env's world, or anything with
            its ``start_round``, ``record`` and ``replay`` (or ``replay_steps``).
        pairs: number of pairs.
        chunk: steps per chunk.
        clock: seconds now (tests pass a fake clock).
        switches: the process's count of involuntary context switches (tests pass a fake).

    Returns:
        ``(ours, limit, clean)``: seconds per step of each pair's two halves, and whether the pair
        is clean (see above), arrays of shape ``(pairs,)``. Our time is the sum of the ``step()``
        calls alone: recording the controls for the replay after each step is the limit's
        bookkeeping and stays out of it.
    """
    ours, theirs = np.empty(pairs), np.empty(pairs)
    clean = np.empty(pairs, dtype=bool)
    by_step = hasattr(limit, 'replay_steps')
    ours_steps = np.empty(chunk)
    ours_clean = np.empty(chunk, dtype=bool)
    for pair in range(pairs):
        limit.start_round(chunk)
        first = switches()
        for k in range(chunk):
            before = switches()
            began = clock()
            step()
            ours_steps[k] = clock() - began
            ours_clean[k] = switches() == before
            limit.record(k)
        if by_step:
            limit_steps, limit_clean = limit.replay_steps(clock, switches)
            both = ours_clean & limit_clean
            clean[pair] = 2 * np.count_nonzero(both) >= chunk
            use = both if clean[pair] else slice(None)
            ours[pair], theirs[pair] = ours_steps[use].mean(), limit_steps[use].mean()
        else:
            ours[pair] = ours_steps.mean()
            theirs[pair] = limit.replay()
            clean[pair] = switches() == first
    return ours, theirs, clean


def summarize(ours: np.ndarray, limit: np.ndarray, clean: np.ndarray | None = None) -> dict[str, Any]:
    """Median and interquartile range of the pair ratios ``limit / ours`` (ours' speed as a share
    of the limit's), and the median seconds per step of each side.

    With ``clean`` (from :func:`time_pairs`), only the clean pairs count (those compared over
    steps during which the process kept its cores), when there are at least :data:`MIN_CLEAN` of
    them (and a quarter of all pairs);
    otherwise every pair does. ``used`` says which, and ``ratios`` lists the ratios counted.
    """
    use = np.ones(len(ours), dtype=bool) if clean is None else np.asarray(clean, dtype=bool)
    if np.count_nonzero(use) < max(MIN_CLEAN, len(ours) // 4):
        use = np.ones(len(ours), dtype=bool)
    ratios = limit[use] / ours[use]
    q1, median, q3 = np.percentile(ratios, [25, 50, 75])
    return {'ratio': float(median), 'ratio_q1': float(q1), 'ratio_q3': float(q3),
            'ours_step_s': float(np.median(ours[use])), 'limit_step_s': float(np.median(limit[use])),
            'pairs': len(ours), 'clean_pairs': len(ours) if clean is None else int(np.count_nonzero(clean)),
            'used': 'all' if use.all() else 'clean', 'ratios': ratios.tolist()}


def time_calls(spent: dict[str, float], owner: Any, name: str, label: str, calls: dict[str, int] | None = None) -> None:
    """Make ``owner.name`` (a method or function attribute) add the seconds of each call to
    ``spent[label]``: an instance attribute wrapping it (the class is untouched). For timing the
    parts of a step in situ; each wrap adds a Python call and two clock reads to its part.
    ``calls``, when given, counts the calls by label too.

    >>> class Step:
    ...     def physics(self):
    ...         return 42
    >>> step, spent = Step(), {}
    >>> time_calls(spent, step, 'physics', 'physics')
    >>> step.physics(), list(spent)
    (42, ['physics'])
    """
    function = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - began
            if calls is not None:
                calls[label] = calls.get(label, 0) + 1
    setattr(owner, name, timed)
