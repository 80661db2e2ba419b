"""The runners behind a ``vec_env.Env``: one local :class:`~internutopia.core.runner.Runner`, or many elsewhere.

``vec_env.Env`` checks its arguments, then calls a :class:`RunnerSet` with global slot ids;
the set runs them and assembles results over all its slots. :class:`LocalRunners` is one
runner in this process (every call goes straight to it); the Ray adapter
(:mod:`internutopia.core.distribution`) implements the same class over ``proc_num`` runner actors.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

import numpy as np

from internutopia.core.config import Config, TaskCfg
from internutopia.core.runner.guard import CallGuard
from internutopia.core.runner.observations import ObservedEntries
from internutopia.core.runner.runner import ArrayStep, Runner
from internutopia.core.runner.slots import SlotStatus

__all__ = ['LocalRunners', 'RunnerSet']


class RunnerSet(ABC):
    """What ``vec_env.Env`` asks of its runners, with global slot ids in ``0..env_num-1``.

    Arguments arrive checked by the env (reset ids in range and distinct, one action entry per
    slot); what only the runners can check (episode types, robot and controller names, action
    values) raises ``ValueError`` before any state changes.

    Attributes:
        env_num: slots in all.
        guard: one call at a time (:class:`~internutopia.core.runner.guard.CallGuard`): the env's
            ``close`` enters it too, so a close from another thread never releases the world
            under a running step.
    """

    env_num: int
    guard: CallGuard

    @abstractmethod
    def reset(self, slots: list[int], observe: bool = True) -> tuple[list[Any], list[TaskCfg | None]]:
        """Give ``slots`` the next episodes in order; ``(obs, task configs)`` aligned to ``slots``,
        ``None`` where the queue ran out. ``observe=False`` may leave every ``obs`` entry ``None``
        (for a caller that reads the observations as arrays)."""

    def reset_arrays(self, slots: list[int], only: ObservedEntries | None = None) -> tuple[dict[str, Any] | None, list[TaskCfg | None]]:
        """:meth:`reset` with the observations as arrays (see ``vec_env.Env.reset_arrays``)."""
        raise NotImplementedError(f'{type(self).__name__} has no array API; use reset()')

    @abstractmethod
    def step(self, actions: list[Any]) -> tuple[list, list, list, list, list]:
        """One step from ``env_num`` per-slot action entries; the five per-slot result lists."""

    def step_arrays(self, actions: dict[str, dict[str, Any]], observe: bool = True,
                    observe_only: ObservedEntries | None = None, repeat: int = 1,
                    restart: list[int] | None = None) -> ArrayStep:
        """One step from batched actions, results as arrays (see ``vec_env.Env.step_arrays``)."""
        raise NotImplementedError(f'{type(self).__name__} has no array API; use step()')

    @abstractmethod
    def observe(self, slots: list[int]) -> list[Any]:
        """Current observations of ``slots`` (``None`` for slots not running an episode)."""

    @abstractmethod
    def active_slots(self) -> list[int]:
        """Ids of the slots running an episode, sorted."""

    @abstractmethod
    def queue_len(self) -> int:
        """Episodes still in the queue."""

    @abstractmethod
    def active_task_configs(self) -> dict[int, TaskCfg]:
        """``{slot: TaskCfg}`` of the slots holding an episode (running, or ended and not yet reset)."""

    @abstractmethod
    def warm_up(self, steps: int) -> None:
        """Advance every world ``steps`` physics steps outside the episodes (see ``Runner.warm_up``)."""

    @abstractmethod
    def render(self, width: int, height: int) -> np.ndarray:
        """An overview image ``uint8 (height, width, 3)`` of the slots."""

    @abstractmethod
    def render_envs(self, slots: list[int], width: int, height: int) -> list[np.ndarray]:
        """One image ``uint8 (height, width, 3)`` per slot of ``slots``, each slot alone."""

    @abstractmethod
    def close(self) -> None:
        """Release every runner and world; no call may follow."""


def render_envs(runner: Runner, slots: list[int], width: int, height: int) -> list[np.ndarray]:
    """``runner``'s world drawn once per slot of ``slots``, each slot alone (its backend's
    ``render_envs``); ``NotImplementedError`` naming a backend that cannot."""
    draw = runner.backend.render_envs
    if draw is None:
        raise NotImplementedError(f'the {runner.backend.name!r} physics backend draws no per-env frames (render_envs)')
    return draw(runner.world, slots, width, height)


class LocalRunners(RunnerSet):
    """One :class:`~internutopia.core.runner.Runner` in this process; ``step`` is the runner's own.

    Args:
        config: the env's own copy of the config.
        episodes: optional replacement for ``config.task_configs``.
        runner_class: the runner to run (a subclass adds members, e.g. InternUtopia's).
    """

    def __init__(self, config: Config, episodes: Iterable[TaskCfg] | None = None, runner_class: type[Runner] = Runner) -> None:
        self.runner = runner_class(config, episodes)
        self.env_num = config.env_num
        self.guard = self.runner.guard
        # The step path goes straight to the runner: no call in between (the runner's bound methods
        # stand in for this class's, which have the same signatures).
        self.step = self.runner.step  # type: ignore[method-assign]
        self.step_arrays = self.runner.step_arrays  # type: ignore[method-assign]

    def reset(self, slots: list[int], observe: bool = True) -> tuple[list[Any], list[TaskCfg | None]]:
        if not observe:
            episodes = self.runner.reset(slots)
            return [None] * len(slots), [e.config if e is not None else None for e in episodes]
        episodes, observed = self.runner.reset_observed(slots)
        return [observed.get(slot) for slot in slots], [e.config if e is not None else None for e in episodes]

    def reset_arrays(self, slots: list[int], only: ObservedEntries | None = None) -> tuple[dict[str, Any] | None, list[TaskCfg | None]]:
        episodes, tree = self.runner.reset_observed(slots, arrays=True, only=only)
        return tree, [e.config if e is not None else None for e in episodes]

    def step(self, actions: list[Any]) -> tuple[list, list, list, list, list]:  # replaced per instance
        return self.runner.step(actions)

    def observe(self, slots: list[int]) -> list[Any]:
        status = self.runner.status
        active = [slot for slot in slots if status[slot] == SlotStatus.ACTIVE]
        observed = dict(zip(active, self.runner.observe(np.asarray(active, dtype=np.intp)), strict=True))
        return [observed.get(slot) for slot in slots]

    def active_slots(self) -> list[int]:
        return self.runner.active_slots().tolist()

    def queue_len(self) -> int:
        return len(self.runner.queue)

    def active_task_configs(self) -> dict[int, TaskCfg]:
        runner = self.runner
        return {slot: episode.config for slot, episode in enumerate(runner.episodes)
                if episode is not None and runner.status[slot] != SlotStatus.EMPTY}

    def warm_up(self, steps: int) -> None:
        self.runner.warm_up(steps)

    def render(self, width: int, height: int) -> np.ndarray:
        return self.runner.backend.render_overview(self.runner.world, width, height)

    def render_envs(self, slots: list[int], width: int, height: int) -> list[np.ndarray]:
        return render_envs(self.runner, slots, width, height)

    def close(self) -> None:
        self.runner.backend.release(self.runner.world)
        self.runner.close()
