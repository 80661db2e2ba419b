"""The Ray actors of a distributed env: one episode queue, ``proc_num`` runners.

Both are plain classes here; :mod:`internutopia.core.distribution.env` wraps them with
``ray.remote``. Everything a runner does is :class:`internutopia.core.runner.Runner`'s own code,
so one world behaves the same in an actor as in ``vec_env.Env``.
"""

from __future__ import annotations

import os
import pickle
import re
import socket
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from internutopia.core.episode_queue import Episode
from internutopia.core.runner import SlotStatus

if TYPE_CHECKING:
    from internutopia.core.config import Config


class QueueActor:
    """Holds the one :class:`~internutopia.core.episode_queue.EpisodeQueue` every runner pulls from."""

    def __init__(self, extensions: Any, task_configs: bytes) -> None:
        from internutopia.core.distribution.extensions import install, unpack
        from internutopia.core.episode_queue import EpisodeQueue

        install(extensions)
        self._queue = EpisodeQueue(unpack(task_configs))

    def take(self, count: int) -> list[Episode | None]:
        """The next ``count`` episodes in order, ``None`` for each one the queue cannot give."""
        return [self._queue.next() for _ in range(count)]

    def next(self) -> Episode | None:
        """The next episode, or ``None``."""
        return self._queue.next()

    def put_back(self, episodes: list[Episode]) -> None:
        """Return episodes to the front of the queue, in the given order."""
        self._queue.put_back(episodes)

    def size(self) -> int:
        """Episodes still to hand out."""
        return len(self._queue)

    def taken(self) -> int:
        """Distinct episodes handed out so far."""
        return self._queue.taken


class QueueProxy:
    """What a runner sees as its queue: ``next``/``put_back``/``len`` forwarded to the queue actor.

    The driver takes a reset's episodes from the queue actor itself (so they go to the slots in
    the caller's order and it knows where each one went) and preloads them here; the runner's
    ``reset`` then pulls exactly those, ``None`` included, without another round trip.
    """

    def __init__(self, handle: Any) -> None:
        self._handle = handle
        self._preloaded: deque[Episode | None] = deque()

    def preload(self, episodes: Iterable[Episode | None]) -> None:
        self._preloaded = deque(episodes)

    def clear(self) -> None:
        self._preloaded.clear()

    def next(self) -> Episode | None:
        if self._preloaded:
            return self._preloaded.popleft()
        import ray

        return ray.get(self._handle.next.remote())

    def put_back(self, episodes: Iterable[Episode]) -> None:
        episodes = list(episodes)
        if episodes:
            import ray

            ray.get(self._handle.put_back.remote(episodes))

    def __len__(self) -> int:
        import ray

        return ray.get(self._handle.size.remote())


def _packed(result: Any) -> bytes:
    """Results travel as one in-band pickle: the driver's arrays are then its own, writable copies
    (as from ``vec_env.Env``), not read-only views into Ray's object buffer. Protocol 4: for the
    many small arrays of per-slot observations it (de)serializes faster than protocol 5. A result
    holding an instance of a class the driver script defined (an episode's config, on a reset)
    goes by cloudpickle, which ships such classes by value; ``pickle.loads`` reads both."""
    try:
        return pickle.dumps(result, protocol=4)
    except (pickle.PicklingError, AttributeError, TypeError):
        import ray.cloudpickle as cloudpickle

        return cloudpickle.dumps(result, protocol=4)


_ACTION_PREFIX = re.compile(r'^action\[(\d+)\]')
_ENV_ID = re.compile(r'robots in env (\d+):')


class RunnerActor:
    """One :class:`~internutopia.core.runner.Runner` (one world of ``env_num`` slots) in a worker.

    Slot ids here are local (``0..env_num-1``); the driver maps them to global ids
    ``runner_id * env_num + local``. Error messages are rewritten to name global ids.
    """

    def __init__(self, extensions: Any, config: bytes, queue_handle: Any, runner_id: int) -> None:
        from internutopia.core.distribution.extensions import install, unpack
        from internutopia.core.runner import Runner

        install(extensions)
        unpacked: Config = unpack(config)
        self.runner_id = runner_id
        self.offset = runner_id * unpacked.env_num
        self.queue = QueueProxy(queue_handle)
        self.runner = Runner(unpacked, queue=self.queue)
        self.runner.results.keep_records = True  # drained by every step() and sent to the driver

    def ready(self) -> dict[str, Any]:
        """Where this runner lives: ``{'runner_id', 'pid', 'host'}``."""
        return {'runner_id': self.runner_id, 'pid': os.getpid(), 'host': socket.gethostname()}

    def _global_message(self, exc: ValueError) -> ValueError:
        message = _ACTION_PREFIX.sub(lambda m: f'action[{int(m.group(1)) + self.offset}]', str(exc))
        message = _ENV_ID.sub(lambda m: f'robots in env {int(m.group(1)) + self.offset}:', message)
        return ValueError(message)

    def check(self, actions: list[Any]) -> None:
        """Validate this runner's slice of an action list; changes nothing."""
        try:
            self.runner.parse_actions(actions)
        except ValueError as exc:
            raise self._global_message(exc) from None

    def prepare(self, episodes: list[Episode | None]) -> None:
        """Do ahead all a reset with ``episodes`` could fail on (``Runner.prepare``); changes no slot."""
        self.runner.prepare(episodes)

    def reset(self, slots: list[int], episodes: list[Episode | None]) -> bytes:
        """Start ``episodes`` (taken by the driver) in local ``slots``; their observations, aligned,
        the records the reset wrote (episodes it abandoned, episodes that failed to start) and the
        episode each slot holds now (one whose episode failed to start took the next), packed."""

        self.queue.preload(episodes)
        try:
            taken, observed = self.runner.reset_observed(slots)
        finally:
            self.queue.clear()
        records = self.runner.results.records
        self.runner.results.records = []
        return _packed(([observed.get(slot) for slot in slots], records, taken))

    def observe(self, slots: list[int]) -> bytes:
        """Current observations of local ``slots`` (``None`` for slots not running an episode), packed."""
        import numpy as np

        status = self.runner.status
        active = [slot for slot in slots if status[slot] == int(SlotStatus.ACTIVE)]
        observed = dict(zip(active, self.runner.observe(np.asarray(active, dtype=np.intp)), strict=True))
        return _packed([observed.get(slot) for slot in slots])

    def step(self, actions: list[Any]) -> bytes:
        """One step of this world: the five result lists and the finished-episode records, packed."""
        try:
            obs, reward, terminated, truncated, info = self.runner.step(actions)
        except ValueError as exc:
            raise self._global_message(exc) from None
        records = self.runner.results.records
        self.runner.results.records = []
        return _packed((obs, reward, terminated, truncated, info, records))

    def warm_up(self, steps: int) -> None:
        """Physics steps outside the episodes (``Runner.warm_up``)."""
        self.runner.warm_up(steps)

    def render(self, width: int, height: int) -> Any:
        """An overview image of this runner's world."""
        return self.runner.backend.render_overview(self.runner.world, width, height)

    def close(self) -> None:
        self.runner.backend.release(self.runner.world)
        self.runner.close()
