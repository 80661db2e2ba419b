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
import warnings
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from internutopia.core.episode_queue import Episode
from internutopia.core.runner import SlotStatus
from internutopia.core.runner.reads import RobotDescription
from internutopia.core.runner.runners import render_envs

if TYPE_CHECKING:
    from internutopia.core.config import Config


class QueueActor:
    """Holds the one :class:`~internutopia.core.episode_queue.EpisodeQueue` every runner pulls from.

    A runner's reset may take episodes itself (one for a slot whose episode failed to start) and
    put some back (an episode that failed to start, with tries left). Those calls name the runner
    and the reset (``holder``: ``(runner_id, ticket)``), and the queue keeps, for each runner, where
    every episode it touched in its latest reset went: so when a runner dies in a reset, the driver
    learns from :meth:`reclaim` which episodes died with it, and none is lost.
    """

    def __init__(self, extensions: Any, task_configs: bytes) -> None:
        from internutopia.core.distribution.extensions import install, unpack
        from internutopia.core.episode_queue import EpisodeQueue

        install(extensions)
        self._queue = EpisodeQueue(unpack(task_configs))
        #: Per runner id: the ticket of its latest reset, and for each episode index it took or
        #: put back in that reset, its last move (``(True, episode)``: taken, ``(False, None)``: put back).
        self._hands: dict[int, tuple[int, dict[int, tuple[bool, Episode | None]]]] = {}
        #: Per runner id, the latest reset reclaimed: calls from it or an earlier one come from an
        #: actor the driver gave up on (a hung one, still running until it is killed).
        self._reclaimed: dict[int, int] = {}

    def _given_up(self, holder: tuple[int, int] | None) -> bool:
        return holder is not None and holder[1] <= self._reclaimed.get(holder[0], -1)

    def _moves(self, holder: tuple[int, int] | None) -> dict[int, tuple[bool, Episode | None]] | None:
        if holder is None:
            return None
        runner_id, ticket = holder
        kept = self._hands.get(runner_id)
        if kept is None or kept[0] != ticket:
            kept = self._hands[runner_id] = (ticket, {})
        return kept[1]

    def take(self, runners: list[int], suspects: list[int] | None = None) -> list[Episode | None]:
        """The next episodes in order for a reset whose slots belong to ``runners`` (a runner id per
        slot), ``None`` for each one the queue cannot give. An episode of ``suspects`` (queue indices
        of episodes that were on a failed runner) goes to a runner that gets no other suspect in this
        reset: one that would is passed over, keeping its place at the front of the queue, unless
        nothing but suspects is left (see :class:`~internutopia.core.distribution.ledger.FailureLedger`)."""
        if not suspects:
            return [self._queue.next() for _ in runners]
        suspected, passed_over = set(suspects), []
        with_suspect: set[int] = set()
        out: list[Episode | None] = []
        for runner in runners:
            episode = self._queue.next()
            while episode is not None and episode.index in suspected and runner in with_suspect:
                passed_over.append(episode)
                episode = self._queue.next()
            if episode is None and passed_over:  # nothing but suspects left: this runner takes two
                episode = passed_over.pop(0)
            if episode is not None and episode.index in suspected:
                with_suspect.add(runner)
            out.append(episode)
        if passed_over:
            self._queue.put_back(passed_over)
        return out

    def next(self, holder: tuple[int, int] | None = None) -> Episode | None:
        """The next episode, or ``None``; ``holder``: the runner and reset taking it (see the class).
        ``None`` for a reset the driver reclaimed (its runner is being replaced)."""
        if self._given_up(holder):
            return None
        episode = self._queue.next()
        moves = self._moves(holder)
        if moves is not None and episode is not None:
            moves[episode.index] = (True, episode)
        return episode

    def put_back(self, episodes: list[Episode], holder: tuple[int, int] | None = None) -> None:
        """Return episodes to the front of the queue, in the given order; ``holder``: as for :meth:`next`.
        Ignored for a reset the driver reclaimed: it requeued what that reset held itself."""
        if self._given_up(holder):
            return
        self._queue.put_back(episodes)
        moves = self._moves(holder)
        if moves is not None:
            for episode in episodes:
                moves[episode.index] = (False, None)

    def reclaim(self, runner_id: int, ticket: int) -> tuple[list[Episode], list[int]]:
        """Runner ``runner_id`` died or hung in its reset ``ticket``: the episodes it took from the
        queue itself and still held, and the indices of those it put back (they are in the queue).
        Later calls from that reset (a hung runner still running) are refused (see :meth:`next`)."""
        self._reclaimed[runner_id] = max(ticket, self._reclaimed.get(runner_id, -1))
        kept = self._hands.pop(runner_id, None)
        if kept is None or kept[0] != ticket:
            return [], []
        held = [episode for taken, episode in kept[1].values() if taken and episode is not None]
        back = [index for index, (taken, _) in kept[1].items() if not taken]
        return held, back

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
    ``reset`` then pulls exactly those, ``None`` included, without another round trip. What the
    reset puts back stays here, first, until the reset is over (:meth:`clear`).
    """

    def __init__(self, handle: Any, runner_id: int | None = None) -> None:
        self._handle = handle
        self._preloaded: deque[Episode | None] = deque()
        self._runner_id = runner_id
        #: ``(runner_id, ticket)`` of the reset under way (see :class:`QueueActor`), else ``None``.
        self._holder: tuple[int, int] | None = None

    def preload(self, episodes: Iterable[Episode | None], ticket: int | None = None) -> None:
        self._preloaded = deque(episodes)
        self._holder = (self._runner_id, ticket) if ticket is not None and self._runner_id is not None else None

    def clear(self) -> None:
        """The reset is over: what it put back and did not take again goes to the queue actor's front."""
        left, holder = [e for e in self._preloaded if e is not None], self._holder
        self._preloaded.clear()
        self._holder = None
        if left:
            import ray

            ray.get(self._handle.put_back.remote(left, holder))

    def next(self) -> Episode | None:
        if self._preloaded:
            return self._preloaded.popleft()
        import ray

        return ray.get(self._handle.next.remote(self._holder))

    def put_back(self, episodes: Iterable[Episode]) -> None:
        episodes = list(episodes)
        if episodes and self._holder is not None:
            # (In a reset: at the front of this runner's own queue, so a slot whose episode failed
            # to start tries it again, as on one process, not another runner's put back at once.)
            self._preloaded.extendleft(reversed(episodes))
        elif episodes:
            import ray

            ray.get(self._handle.put_back.remote(episodes, self._holder))

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


#: The attribute of a runner's ``ValueError`` holding the warnings raised before it (``(category, message)``).
WARNED = 'runner_warnings'
_ACTION_PREFIX = re.compile(r'^action\[(\d+)\]')
_ENV_ID = re.compile(r'robots in env (\d+):')
_IN_ENV = re.compile(r'\bin env (\d+)\b')


class RunnerActor:
    """One :class:`~internutopia.core.runner.Runner` (one world of ``env_num`` slots) in a worker.

    Slot ids here are local (``0..env_num-1``); the driver maps them to global ids
    ``runner_id * env_num + local``. Error messages are rewritten to name global ids.
    """

    def __init__(self, extensions: Any, config: bytes, queue_handle: Any, runner_id: int) -> None:
        from internutopia.core.distribution.extensions import install, unpack
        from internutopia.core.runner import Runner

        #: Warnings raised here (``(category, message)``, global slot ids), sent to the driver
        #: with the next answer of ``check``, ``step`` or ``reset``: a worker's own output is not
        #: shown (``log_to_driver=False``), so the driver warns in its place. The first: the
        #: driver's extensions this worker could not import (an episode needing them then fails).
        self.warnings: list[tuple[type[Warning], str]] = [(RuntimeWarning, problem) for problem in install(extensions)]
        unpacked: Config = unpack(config)
        self.runner_id = runner_id
        self.offset = runner_id * unpacked.env_num
        self.queue = QueueProxy(queue_handle, runner_id)
        warnings.showwarning = self._keep_warning
        self.runner = Runner(unpacked, queue=self.queue)
        self.runner.results.keep_records = True  # drained by every step() and sent to the driver

    def _keep_warning(self, message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      file: Any = None, line: str | None = None) -> None:
        text = str(message)
        if _ACTION_PREFIX.match(text):  # (a message about one slot: its global id)
            text = _ACTION_PREFIX.sub(lambda m: f'action[{int(m.group(1)) + self.offset}]', text)
            text = _IN_ENV.sub(lambda m: f'in env {int(m.group(1)) + self.offset}', text)
        self.warnings.append((category, text))

    def _warnings(self) -> list[tuple[type[Warning], str]]:
        out, self.warnings = self.warnings, []
        return out

    def ready(self) -> dict[str, Any]:
        """Where this runner lives: ``{'runner_id', 'pid', 'host'}``."""
        return {'runner_id': self.runner_id, 'pid': os.getpid(), 'host': socket.gethostname()}

    def _global_message(self, exc: ValueError) -> ValueError:
        message = _ACTION_PREFIX.sub(lambda m: f'action[{int(m.group(1)) + self.offset}]', str(exc))
        message = _ENV_ID.sub(lambda m: f'robots in env {int(m.group(1)) + self.offset}:', message)
        return ValueError(message)

    def _invalid(self, exc: ValueError) -> ValueError:
        """``exc`` with global ids, carrying the warnings raised before it (:data:`WARNED`): the
        driver warns them with the error, as one process does, not with the next answer."""
        error = self._global_message(exc)
        setattr(error, WARNED, self._warnings())
        return error

    def check(self, actions: list[Any]) -> list[tuple[type[Warning], str]]:
        """Validate this runner's slice of an action list; changes nothing, not even which robot
        names were warned about (the step that follows warns them again). The warnings it raised
        (a check that raises carries them, see :meth:`_invalid`): the driver warns them only when
        another runner's slice is invalid, so no step follows."""
        warned = self.runner.actions._warned_robot_names
        before = set(warned)
        error: ValueError | None = None
        # (Caught here, not shown: Python's registry of shown warnings would hide the step's.)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            try:
                self.runner.parse_actions(actions)
            except ValueError as exc:
                error = exc
            finally:
                warned.intersection_update(before)
        for warning in caught:
            self._keep_warning(warning.message, warning.category, warning.filename, warning.lineno)
        if error is not None:
            raise self._invalid(error) from None
        return self._warnings()

    def prepare(self, episodes: list[Episode | None]) -> None:
        """Do ahead all a reset with ``episodes`` could fail on (``Runner.prepare``); changes no slot."""
        self.runner.prepare(episodes)

    def reset(self, slots: list[int], episodes: list[Episode | None], ticket: int | None = None) -> bytes:
        """Start ``episodes`` (taken by the driver) in local ``slots``; their observations, aligned,
        the records the reset wrote (episodes it abandoned, episodes that failed to start), the
        episode each slot holds now (one whose episode failed to start took the next) and the
        warnings (see :attr:`warnings`), packed. ``ticket`` names this reset to the queue actor
        for the episodes the runner takes or puts back itself (see :class:`QueueActor`)."""

        self.queue.preload(episodes, ticket)
        try:
            taken, observed = self.runner.reset_observed(slots)
        finally:
            self.queue.clear()
        records = self.runner.results.records
        self.runner.results.records = []
        return _packed(([observed.get(slot) for slot in slots], records, taken, self._warnings()))

    def observe(self, slots: list[int]) -> bytes:
        """Current observations of local ``slots`` (``None`` for slots not running an episode), packed."""
        import numpy as np

        status = self.runner.status
        active = [slot for slot in slots if status[slot] == int(SlotStatus.ACTIVE)]
        observed = dict(zip(active, self.runner.observe(np.asarray(active, dtype=np.intp)), strict=True))
        return _packed([observed.get(slot) for slot in slots])

    def step(self, actions: list[Any], parsed: bool = False) -> bytes:
        """One step of this world: the five result lists, the finished-episode records and the
        warnings (see :attr:`warnings`), packed; with ``parsed`` (a recording runs), each slot's
        commands as its controllers parsed them too (``Runner.parsed_commands``)."""
        commands = self.runner.parsed_commands(actions) if parsed else None  # (before the step: an episode may end)
        try:
            obs, reward, terminated, truncated, info = self.runner.step(actions)
        except ValueError as exc:
            raise self._invalid(exc) from None
        records = self.runner.results.records
        self.runner.results.records = []
        return _packed((obs, reward, terminated, truncated, info, records, self._warnings(), commands))

    def slot_controllers(self, slots: list[int]) -> list[dict[str, RobotDescription]]:
        """Each local slot's robots, described (``Runner.slot_controllers``)."""
        return self.runner.slot_controllers(slots)

    def warm_up(self, steps: int) -> None:
        """Physics steps outside the episodes (``Runner.warm_up``)."""
        self.runner.warm_up(steps)

    def render(self, width: int, height: int) -> Any:
        """An overview image of this runner's world."""
        return self.runner.backend.render_overview(self.runner.world, width, height)

    def render_envs(self, slots: list[int], width: int, height: int) -> list[Any]:
        """One image per slot of ``slots`` (this world's), each slot alone."""
        return render_envs(self.runner, slots, width, height)

    def abandon_running(self) -> bytes:
        """End this world's running episodes as abandoned (the env is closing): their records,
        packed (``EpisodeEnds.abandon_running``)."""
        self.runner.ends.abandon_running()
        records = self.runner.results.records
        self.runner.results.records = []
        return _packed(records)

    def close(self) -> None:
        self.runner.backend.release(self.runner.world)
        self.runner.close()
