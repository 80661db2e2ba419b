"""What a :class:`~internutopia.core.distribution.runners.RayRunners` answers about its runners and slots.

A mixin of ``RayRunners`` (its books, pool and timeouts are ``RayRunners``'): the calls that ask
the runners something without running episodes (their info, observations, a rendering, warm-up
steps) and the driver's own view of the slots and the queue. A runner that dies or hangs in one of
them is replaced as in a step (:class:`~internutopia.core.distribution.recovery.RunnerRecovery`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.config import TaskCfg
from internutopia.core.distribution.calls import RunnerHung
from internutopia.core.episode_queue import Episode
from internutopia.core.runner import SlotStatus
from internutopia.core.runner.reads import RobotDescription

__all__ = ['RunnerQueries']


class RunnerQueries:
    """Questions to the runners, and the driver's view of slots and queue (mixed into ``RayRunners``)."""

    # (RayRunners' own, used here)
    _proc_num: int
    _local_num: int
    _episodes: list[Episode | None]
    _status: Any
    _closed: bool
    _queue_len_at_close: int
    _pool: Any
    _dist: Any
    _step_options: dict[str, Any]

    if TYPE_CHECKING:
        def _all_ready(self) -> None: ...
        def _wait_ready(self, runner_id: int) -> None: ...
        def _get_runner(self, ref: Any, deadline: float | None = None, runner_id: int | None = None) -> Any: ...
        def _runner_failed(self, runner_id: int, in_flight: Any = (), reason: BaseException | None = None) -> list[Episode]: ...
        def _slices(self, slots: list[int]) -> dict[int, list[int]]: ...

    @property
    def proc_num(self) -> int:
        """Number of runner actors."""
        return self._proc_num

    @property
    def actors(self) -> list[Any]:
        """The Ray actor handles of the runners, by runner id (replaced when one is restarted)."""
        return list(self._pool.actors)

    @property
    def queue_actor(self) -> Any:
        """The Ray actor handle of the episode queue."""
        return self._pool.queue

    @property
    def runner_restarts(self) -> list[int]:
        """How many times each runner was replaced (it died or hung), by runner id."""
        return self._pool.restarts

    def runner_info(self) -> list[dict[str, Any]]:
        """``{'runner_id', 'pid', 'host'}`` of each runner. A runner that died or does not answer
        within ``step_timeout_s`` is replaced (its episodes requeued, as in a step) and its
        successor's are given.

        Raises:
            RuntimeError: the env is closed (asking would start Ray again).
        """
        import ray

        self._check_open()
        self._all_ready()
        deadline = time.monotonic() + self._dist.step_timeout_s
        refs = [actor.ready.remote() for actor in self._pool.actors]
        out = []
        for r, ref in enumerate(refs):
            try:
                out.append(self._get_runner(ref, deadline, r))
            except (ray.exceptions.RayActorError, RunnerHung) as exc:
                self._runner_failed(r, reason=exc)
                self._wait_ready(r)
                out.append(self._pool.get(self._pool.actors[r].ready.remote(), f'runner {r}', startup=True))
        return out

    def active_slots(self) -> list[int]:
        return [int(s) for s in np.flatnonzero(self._status == SlotStatus.ACTIVE)]

    def slot_episodes(self) -> list[int | None]:
        """Queue index of the episode each active slot runs (``None`` for done and empty slots)."""
        return [e.index if e is not None and s == SlotStatus.ACTIVE else None
                for e, s in zip(self._episodes, self._status, strict=True)]

    def ship_parsed_actions(self, on: bool) -> None:
        """Whether the runners send back each step's commands as their controllers parsed them
        (``parsed_actions``, what a recording lays out); off, a step ships none."""
        self._step_options = {'parsed': True} if on else {}

    def slot_controllers(self, slots: list[int]) -> list[dict[str, RobotDescription]]:
        """Each global slot's robots, asked of their runners at once (``RunnerActor.slot_controllers``)."""
        self._check_open()
        self._all_ready()
        deadline = time.monotonic() + self._dist.step_timeout_s
        groups = self._slices(slots)  # (positions in slots, by runner)
        refs = {r: self._pool.actors[r].slot_controllers.remote([slots[k] % self._local_num for k in at])
                for r, at in groups.items()}
        out: list[Any] = [None] * len(slots)
        for r, at in groups.items():
            for k, robots in zip(at, self._get_runner(refs[r], deadline, r), strict=True):
                out[k] = robots
        return out

    def queue_len(self) -> int:
        import ray

        if self._closed:
            return self._queue_len_at_close  # (asking the gone queue actor would start Ray again)
        return ray.get(self._pool.queue.size.remote())

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError('this Env is closed')

    def active_task_configs(self) -> dict[int, TaskCfg]:
        return {g: e.config for g, (e, s) in enumerate(zip(self._episodes, self._status, strict=True))
                if e is not None and s != SlotStatus.EMPTY}

    def warm_up(self, steps: int) -> None:
        """Physics steps outside the episodes on every runner, concurrently. A runner that dies or
        takes longer than ``reset_timeout_s`` is replaced (its episodes requeued, as in a step)."""
        import ray

        self._all_ready()
        deadline = time.monotonic() + self._dist.reset_timeout_s
        refs = [actor.warm_up.remote(steps) for actor in self._pool.actors]
        for r, ref in enumerate(refs):
            try:
                self._get_runner(ref, deadline, r)
            except (ray.exceptions.RayActorError, RunnerHung) as exc:
                self._runner_failed(r, reason=exc)


    def observe(self, slots: list[int]) -> list[Any]:
        """Current observations of global ``slots`` (``None`` for slots not running an episode). A
        runner that dies or takes longer than ``step_timeout_s`` is replaced as in a step: its
        slots observe ``None`` and the next step reports them (``info[g]['runner_failed']``)."""
        return self._ask_slots('observe', slots)

    def render_envs(self, slots: list[int], width: int, height: int) -> list[Any]:
        """One image per global slot of ``slots``, each drawn by its runner (``Env.render_envs``).

        Raises:
            RuntimeError: a runner died or took longer than ``step_timeout_s``; it is replaced
                (its episodes requeued, reported by the next step, as in a step).
        """

        def lost(runner_id: int, exc: BaseException) -> None:
            raise RuntimeError(f'runner {runner_id} failed while rendering ({type(exc).__name__}); it was replaced, '
                               'its episodes requeued (the next step reports its slots)') from exc

        return self._ask_slots('render_envs', slots, width, height, lost=lost)

    def _ask_slots(self, method: str, slots: list[int], *args: Any,
                   lost: Callable[[int, BaseException], None] | None = None) -> list[Any]:
        """Runner method ``method`` on each runner's share of global ``slots`` (as its local ids,
        then ``args``), all concurrently: the answers, one per slot in ``slots``' order. A runner
        that dies or takes longer than ``step_timeout_s`` is replaced, then ``lost(runner_id,
        error)`` is called (without it, that runner's slots answer ``None``)."""
        import ray

        groups = self._slices(slots)
        self._all_ready()
        deadline = time.monotonic() + self._dist.step_timeout_s
        refs = {}
        for r, positions in groups.items():
            self._wait_ready(r)
            refs[r] = getattr(self._pool.actors[r], method).remote([slots[k] % self._local_num for k in positions], *args)
        out: list[Any] = [None] * len(slots)
        for r, positions in groups.items():
            try:
                answers = self._get_runner(refs[r], deadline, r)
            except (ray.exceptions.RayActorError, RunnerHung) as exc:
                self._runner_failed(r, reason=exc)
                if lost is not None:
                    lost(r, exc)
                continue
            for k, answer in zip(positions, answers, strict=True):
                out[k] = answer
        return out

    def render(self, width: int, height: int, runner_id: int = 0) -> Any:
        """An RGB image ``(height, width, 3)`` of runner ``runner_id``'s world (its ``env_num`` slots).

        Raises:
            RuntimeError: the runner died or took longer than ``step_timeout_s``; it is replaced
                (its episodes requeued, reported by the next step, as in a step).
        """
        import ray

        if isinstance(runner_id, (bool, np.bool_)) or not isinstance(runner_id, (int, np.integer)):
            raise ValueError(f'runner_id must be an int in 0..{self._proc_num - 1}; got {runner_id!r} (the third '
                             "argument of a distributed env's render is the runner id; give mode= by keyword)")
        if not 0 <= runner_id < self._proc_num:
            raise ValueError(f'runner_id {runner_id} is out of range; valid runner ids: 0..{self._proc_num - 1}')
        self._wait_ready(runner_id)
        ref = self._pool.actors[runner_id].render.remote(width, height)
        try:
            return self._get_runner(ref, time.monotonic() + self._dist.step_timeout_s, runner_id)
        except (ray.exceptions.RayActorError, RunnerHung) as exc:
            self._runner_failed(runner_id, reason=exc)
            raise RuntimeError(f'runner {runner_id} failed while rendering ({type(exc).__name__}); it was replaced, '
                               'its episodes requeued (the next step reports its slots)') from exc
