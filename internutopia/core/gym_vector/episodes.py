"""Where the Gymnasium envs get their episodes: a list cycled forever, or a seeded sampler."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, cast

import numpy as np

from internutopia.core.config import TaskCfg
from internutopia.core.config.fresh_episodes import FreshEpisodes
from internutopia.core.episode_queue import Fresh
from internutopia.core.plugins import load_extensions
from internutopia.core.runner import check_task_list

#: A sampler of episodes: called with the env's seeded generator, returns one ``TaskCfg`` or several.
EpisodeSampler = Callable[[np.random.Generator], TaskCfg | Iterable[TaskCfg]]

class EpisodeSource:
    """A restartable stream of ``TaskCfg`` episodes for the Gymnasium envs.

    ``episodes`` may be:

    * ``None``: ``default`` (a config's ``task_configs``);
    * a list or tuple of ``TaskCfg``;
    * a sampler: a callable ``f(rng)`` returning one ``TaskCfg`` or an iterable of them, called
      again whenever the previous batch is used up (``rng`` is a ``numpy.random.Generator``); a
      :class:`~internutopia.core.config.fresh_episodes.FreshEpisodes` batch is taken without a copy;
    * any other iterable or iterator of ``TaskCfg`` (used as it is: it cannot be restarted).

    With ``endless=True`` lists are cycled, so the stream never runs dry. :meth:`stream` starts the
    sequence over (for lists and samplers), so the same seed gives the same episodes.
    """

    def __init__(self, episodes: Any, default: Sequence[TaskCfg] = (), endless: bool = True) -> None:
        self.endless = endless
        self._list: list[TaskCfg] | None = None
        self._sampler: EpisodeSampler | None = None
        self._iterator: Iterator[TaskCfg] | None = None
        if episodes is None:
            episodes = list(default)
        if isinstance(episodes, TaskCfg):
            episodes = [episodes]
        if isinstance(episodes, (list, tuple)):
            if not episodes:
                raise ValueError('episodes must hold at least one TaskCfg')
            for index, task in enumerate(episodes):
                if not isinstance(task, TaskCfg):
                    raise TypeError(f'episodes[{index}] is a {type(task).__name__}, expected a TaskCfg')
            self._list = list(episodes)
        elif callable(episodes) and not hasattr(episodes, '__iter__'):
            self._sampler = episodes
        elif hasattr(episodes, '__iter__'):
            self._iterator = iter(episodes)
        else:
            raise TypeError('episodes must be a list of TaskCfg, an iterable of TaskCfg or a sampler f(rng) -> TaskCfg; '
                            f'got {type(episodes).__name__}')

    @property
    def restartable(self) -> bool:
        """Whether :meth:`stream` starts the sequence over (lists and samplers) or continues (iterators)."""
        return self._iterator is None

    @property
    def listed(self) -> list[TaskCfg] | None:
        """The episodes of a list source (``None`` for samplers and iterators)."""
        return self._list

    @property
    def first(self) -> TaskCfg | None:
        """The first episode of a list source (``None`` for samplers and iterators)."""
        return self._list[0] if self._list else None

    def stream(self, rng: np.random.Generator) -> Iterator[TaskCfg]:
        """A new iterator over the episodes; samplers draw from ``rng``. (Typed as ``vec_env.Env``
        and :class:`~internutopia.core.episode_queue.EpisodeQueue` take it: a sampler's
        ``FreshEpisodes`` come as :class:`~internutopia.core.episode_queue.Fresh` entries, which
        the queue takes too.)"""
        if self._list is not None:
            return itertools.cycle(self._list) if self.endless else iter(self._list)
        if self._sampler is not None:
            return cast('Iterator[TaskCfg]', self._sample(self._sampler, rng))
        assert self._iterator is not None  # neither a list nor a sampler: an iterator
        return self._iterator

    @staticmethod
    def _sample(sampler: EpisodeSampler, rng: np.random.Generator) -> Iterator[TaskCfg | Fresh]:
        while True:
            drawn = sampler(rng)
            if isinstance(drawn, TaskCfg):
                yield drawn
                continue
            if isinstance(drawn, FreshEpisodes):  # built for the queue alone: handed over uncopied
                if not drawn:
                    raise ValueError('the episode sampler returned no episodes')
                if len(drawn.families) != len(drawn):
                    raise ValueError(f'the episode sampler returned {len(drawn)} FreshEpisodes with {len(drawn.families)} families')
                for task, family in zip(drawn, drawn.families, strict=True):
                    yield Fresh(task, family)
                continue
            count = 0
            for task in drawn:
                count += 1
                yield task
            if not count:
                raise ValueError('the episode sampler returned no episodes')

def _seed_generator(seed: Any) -> np.random.Generator:
    """The episode source's generator for a reset's ``seed`` (an int, or a list of ints and
    ``None``), or a ``ValueError`` naming ``seed`` when it is not one."""
    values = list(seed) if isinstance(seed, (list, tuple)) else [seed]
    for value in values:
        if value is not None and (isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0):
            raise ValueError(f'seed must be a non-negative int, or a list of them (None where an env has none); got {seed!r}')
    return np.random.default_rng(_seed_values(seed) if isinstance(seed, (list, tuple)) else seed)


def _seed_values(seed: Any) -> list[int] | None:
    """The ints of a checked reset ``seed`` (an int, or a list of ints and ``None``), in order;
    ``None`` for a list of ``None`` only (a fresh random seed)."""
    values = [int(s) for s in seed if s is not None] if isinstance(seed, (list, tuple)) else [int(seed)]
    return values or None


def _queue_seed(seed: Any) -> int:
    """The seed of the episode queue a reset's ``seed`` (checked by :func:`_seed_generator`)
    starts: what the episodes' own draws mix with
    (:attr:`~internutopia.core.episode_queue.Episode.seed`), so that with a list of episodes, the
    same for every seed, the draws inside them (a walking task's pushes) still follow the seed.
    The same for ``s`` and ``[s]``; a list of ``None`` only gives a fresh random one, as it gives
    the generator."""
    words = np.random.SeedSequence(_seed_values(seed)).generate_state(2, np.uint32)
    return (int(words[0]) | int(words[1]) << 32) >> 1


def unseeded_env(env_class: Callable[..., Any], config: Any, source: EpisodeSource) -> Any:
    """``env_class(config, episodes=...)`` (a ``vec_env.Env``) running ``source``'s episodes drawn
    from fresh entropy, as a Gymnasium env built without a seed does; its episode queue's seed is
    drawn from the same entropy, so that the draws inside listed episodes (a walking task's pushes
    without a ``push_seed``) differ from run to run as the episodes' order does, instead of
    following the episodes' indices, the same in every run."""
    rng = np.random.default_rng()
    env = env_class(config, episodes=source.stream(rng))
    env.runner.queue.seed = int(rng.integers(2 ** 63))
    return env

# What the episodes a vector env is handed must be: one robot in all of them, and never running dry.

def check_started(slots: Sequence[int], configs: Sequence[Any]) -> None:
    """A ``RuntimeError`` naming the slots that got no episode (``None`` task config) on a reset."""
    empty = [slot for slot, config in zip(slots, configs, strict=True) if config is None]
    if empty:
        raise RuntimeError(f'the episode source ran out of episodes (env(s) {empty} got none); a Gymnasium env '
                           'needs an endless source: a list (it is cycled) or a sampler f(rng) -> TaskCfg')

def pick_robot(task: TaskCfg, robot: str | None) -> str:
    """The robot to drive: ``robot`` if the episode has it, else the episode's only robot.

    >>> from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
    >>> from internutopia_extension.configs.tasks import FiniteStepTaskCfg
    >>> pick_robot(FiniteStepTaskCfg(robots=[JetbotRobotCfg()]), None)
    'jetbot'
    """
    names = [r.name for r in task.robots]
    if robot is not None:
        if robot not in names:
            raise ValueError(f'robot {robot!r} is not in the episode; its robots: {names}')
        return robot
    if len(names) != 1:
        raise ValueError(f'the episode has {len(names)} robots {names}; name the one to drive with robot=')
    return names[0]

def check_robot(slot: int | str, task: TaskCfg, robot: str) -> None:
    """A ``ValueError`` if the episode of env ``slot`` (or the episode called ``slot``) lacks the
    robot the vector env drives."""
    names = [r.name for r in task.robots]
    if robot not in names:
        where = f'env {slot}: its episode' if isinstance(slot, int) else slot
        raise ValueError(f'{where} has no robot {robot!r} (robots: {names}); every episode '
                         'of a Gymnasium env must have the same robot')


def check_episode_list(episodes: Sequence[TaskCfg], robot: str | None, field: str = 'episodes') -> None:
    """Every episode of a list source checked up front, as ``vec_env.Env`` checks its
    ``task_configs``: registered types, and the robot the spaces are built for (``robot``, else
    the first episode's only robot) in each. A ``ValueError`` (``TypeError``) naming the episode
    (as ``field[index]``)."""
    load_extensions()  # (the registered types the list names)
    check_task_list(list(episodes))
    name = pick_robot(episodes[0], robot)
    for index, task in enumerate(episodes):
        check_robot(f'{field}[{index}]', task, name)
