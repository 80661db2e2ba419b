"""The queue of episodes that env slots pull from on ``reset``.

Each episode is a private deep copy of the user's ``TaskCfg``, so the env never mutates what the
user passed in and one ``TaskCfg`` object can be listed many times.

>>> from internutopia.core.config import TaskCfg
>>> task = TaskCfg(type='SingleInferenceTask')
>>> queue = EpisodeQueue([task, task])
>>> first = queue.next(); first.index, first.config is task
(0, False)
>>> queue.next().index, queue.next(), len(queue)
(1, None, 0)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sized
from dataclasses import dataclass
from typing import Protocol

from internutopia.core.config import TaskCfg


@dataclass(frozen=True)
class Episode:
    """One episode taken from the queue: its position in the queue and its own config copy."""

    index: int
    config: TaskCfg


class EpisodeSource(Protocol):
    """What a runner draws its episodes from: an :class:`EpisodeQueue`, or a proxy of one that
    lives in another process (the Ray driver's, shared by many runners)."""

    def next(self) -> Episode | None: ...

    def put_back(self, episodes: Iterable[Episode]) -> None: ...

    def __len__(self) -> int: ...


class EpisodeQueue:
    """Hands out episodes in order, each once. Accepts a list or any iterator of ``TaskCfg``.

    An iterator lets training run forever (e.g. ``itertools.cycle(task_configs)`` or a generator
    that samples new episodes); a list is consumed once.
    """

    def __init__(self, task_configs: Iterable[TaskCfg]) -> None:
        self._source: Iterator[TaskCfg] = iter(task_configs)
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
        if not isinstance(task, TaskCfg):
            raise TypeError(f'episode {self._next_index} of task_configs is a {type(task).__name__}, expected a TaskCfg')
        episode = Episode(self._next_index, task.model_copy(deep=True))
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
