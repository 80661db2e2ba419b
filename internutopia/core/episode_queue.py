"""The queue of episodes that env slots pull from on ``reset``.

Each episode is a private deep copy of the user's ``TaskCfg``, so the env never mutates what the
user passed in and one ``TaskCfg`` object can be listed many times. The one exception is a
:class:`Fresh` entry: an episode a sampler built for the env alone (see :class:`~internutopia.core.config.fresh_episodes.FreshEpisodes`),
taken as it is.

>>> from internutopia.core.config import TaskCfg
>>> task = TaskCfg(type='SingleInferenceTask')
>>> queue = EpisodeQueue([task, task])
>>> first = queue.next(); first.index, first.config is task
(0, False)
>>> queue.next().index, queue.next(), len(queue)
(1, None, 0)

An episode's :attr:`Episode.seed` is what its own random draws key on (a walking task's pushes):
its index, or with the queue started from a ``seed`` (a Gymnasium env's ``reset(seed=...)``) a
hash of that seed and its index, so the same episode draws the same in any slot, beside any
episodes, and other draws for another seed:

>>> EpisodeQueue([task]).next().seed, EpisodeQueue([task], seed=7).next().seed == EpisodeQueue([task], seed=7).next().seed
(0, True)
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Hashable, Iterable, Iterator, Sized
from dataclasses import dataclass
from typing import Protocol

from internutopia.core.config import TaskCfg


@dataclass(frozen=True)
class Episode:
    """One episode taken from the queue: its position in the queue and its own config copy.

    ``family`` (``None`` for a user's ``TaskCfg``) is the
    :attr:`~internutopia.core.config.fresh_episodes.FreshEpisodes.family` of an
    episode a sampler built: every episode of a family has the same types, files and structure,
    so a reset checks them once per family.
    """

    index: int
    config: TaskCfg
    family: Hashable | None = None
    #: Why the queue's entry at ``index`` is not an episode (it is not a ``TaskCfg``); ``None``
    #: for a real one. Such an entry still takes its index and is handed out, with a stand-in
    #: ``config`` naming the entry's Python type, so that the reset that draws it records it as
    #: failed (once: retrying cannot help) instead of losing it.
    refused: str | None = None
    #: The seed of the queue that handed it out (``None``: a queue started without one).
    queue_seed: int | None = None

    @property
    def seed(self) -> int:
        """What the episode's own random draws key on, an int in ``[0, 2**63)``: its ``index``, or
        a hash of the queue's seed and its index (:func:`episode_seed`)."""
        return episode_seed(self.queue_seed, self.index)


def episode_seed(queue_seed: int | None, index: int) -> int:
    """The seed of a queue's episode ``index``: ``index`` itself for a queue without a seed, else
    a hash of both in ``[0, 2**63)`` (stable across processes and Python's hash seed).

    >>> episode_seed(None, 3), episode_seed(5, 3) == episode_seed(5, 3) != episode_seed(6, 3)
    (3, True)
    """
    if queue_seed is None:
        return index
    digest = hashlib.blake2b(f'{queue_seed}:{index}'.encode(), digest_size=8).digest()
    return int.from_bytes(digest, 'little') >> 1


@dataclass(frozen=True)
class Fresh:
    """An entry of a queue's source that is one of
    :class:`~internutopia.core.config.fresh_episodes.FreshEpisodes`: taken without a copy.

    >>> from internutopia.core.config import TaskCfg
    >>> from internutopia.core.config.fresh_episodes import FreshEpisodes
    >>> batch = FreshEpisodes([TaskCfg(type='SingleInferenceTask')], family='demo')
    >>> queue = EpisodeQueue(Fresh(task, family) for task, family in zip(batch, batch.families))
    >>> episode = queue.next(); episode.config is batch[0], episode.family
    (True, 'demo')
    """

    config: TaskCfg
    family: Hashable


class EpisodeSource(Protocol):
    """What a runner draws its episodes from: an :class:`EpisodeQueue`, or a proxy of one that
    lives in another process (the Ray driver's, shared by many runners)."""

    def next(self) -> Episode | None: ...

    def put_back(self, episodes: Iterable[Episode]) -> None: ...

    def __len__(self) -> int: ...


class EpisodeQueue:
    """Hands out episodes in order, each once. Accepts a list or any iterator of ``TaskCfg``.

    An iterator lets training run forever (e.g. ``itertools.cycle(task_configs)`` or a generator
    that samples new episodes); a list is consumed once. An entry that is not a ``TaskCfg`` is
    handed out too, marked :attr:`Episode.refused`: the reset that draws it records it as failed.
    ``seed`` (an int >= 0, or ``None``) is what the episodes' own seeds mix with (:attr:`Episode.seed`).

    >>> queue = EpisodeQueue(iter([{'type': 'SingleInferenceTask'}]))
    >>> queue.next().refused
    'task_configs[0] is a dict, expected a TaskCfg'
    """

    def __init__(self, task_configs: Iterable[TaskCfg | Fresh], seed: int | None = None) -> None:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f'seed must be None or an int >= 0; got {seed!r}')
        #: The seed the episodes' own seeds mix with (:attr:`Episode.seed`); ``None``: their indices.
        self.seed = seed
        self._source: Iterator[TaskCfg | Fresh] = iter(task_configs)
        self._returned: deque[Episode] = deque()
        self._next_index = 0
        self._length_hint = len(task_configs) if isinstance(task_configs, Sized) else None

    def next(self) -> Episode | None:
        """The next episode, or ``None`` when the queue has run out."""
        if self._returned:
            return self._returned.popleft()
        try:
            task = next(self._source)
        except StopIteration:
            return None
        index, seed = self._next_index, self.seed
        if type(task) is Fresh and isinstance(task.config, TaskCfg):  # built for the env alone: no copy
            episode = Episode(index, task.config, task.family, queue_seed=seed)
        elif not isinstance(task, TaskCfg):
            entry = task.config if type(task) is Fresh else task
            episode = Episode(index, TaskCfg.model_construct(type=type(entry).__name__),
                              refused=f'task_configs[{index}] is a {type(entry).__name__}, expected a TaskCfg', queue_seed=seed)
        else:
            episode = Episode(index, task.model_copy(deep=True), queue_seed=seed)
        self._next_index += 1
        return episode

    def put_back(self, episodes: Iterable[Episode]) -> None:
        """Return episodes to the front of the queue, in the given order (e.g. after a failure)."""
        self._returned.extendleft(reversed(list(episodes)))

    @property
    def taken(self) -> int:
        """How many distinct episodes have been handed out so far."""
        return self._next_index

    def __len__(self) -> int:
        """Episodes still to hand out (for an endless iterator: only those put back)."""
        if self._length_hint is None:
            return len(self._returned)
        return self._length_hint - self._next_index + len(self._returned)
