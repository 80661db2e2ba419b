"""Rewards: configured by a task's :class:`~internutopia.core.config.RewardCfg`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from internutopia.core.config import RewardCfg, TaskCfg
from internutopia.core.registry import Registry
from internutopia.core.view import EnvView


class BaseReward:
    """A reward over every slot whose task config names it (one object per distinct reward config).

    Classes written InternUtopia's way (one object per slot and episode, ``calc()`` returning a
    float) subclass it too; the per-slot layer (:mod:`internutopia.per_slot`) runs them.

    Args:
        config: the reward's config.
        view: what the reward sees of the env; ``view.task(slot)`` is the task it rewards.
    """

    registry: Registry[type[BaseReward]] = Registry('reward')
    #: InternUtopia's name of the registry table.
    rewards = registry.table

    def __init__(self, config: RewardCfg, view: EnvView) -> None:
        self.config = config
        self.settings = dict(config.reward_settings or {})
        self.view = view
        self.env_num = view.env_num

    @classmethod
    def register(cls, name: str) -> Callable[[type[BaseReward]], type[BaseReward]]:
        """Class decorator registering a reward type under ``name``."""
        return cls.registry.register(name)

    @classmethod
    def create(cls, config: RewardCfg, view: EnvView, where: str = '') -> BaseReward:
        """The reward object for ``config``, serving every slot whose task config names it."""
        return cls.registry.maker(config.type, where)(config, view)

    def reset_slot(self, slot: int, task: TaskCfg) -> None:
        """Start a new episode in ``slot``."""

    def calc(self, slots: np.ndarray) -> np.ndarray:
        """Rewards ``(len(slots),)`` for this step."""
        raise NotImplementedError
