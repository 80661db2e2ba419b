"""Rewards: configured by a task's :class:`~internutopia.core.config.RewardCfg`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from internutopia.core.config import RewardCfg, TaskCfg
from internutopia.core.registry import Registry

if TYPE_CHECKING:
    from internutopia.core.runner import Runner


class BaseReward:
    """A reward over every slot of one task type."""

    registry: Registry[type['BaseReward']] = Registry('reward')

    def __init__(self, config: RewardCfg, runner: 'Runner') -> None:
        self.config = config
        self.settings = dict(config.reward_settings or {})
        self.runner = runner
        self.env_num = runner.env_num

    @classmethod
    def register(cls, name: str) -> Callable[[type['BaseReward']], type['BaseReward']]:
        """Class decorator registering a reward type under ``name``."""
        return cls.registry.register(name)

    @classmethod
    def create(cls, config: RewardCfg, runner: 'Runner', where: str = '') -> 'BaseReward':
        """Instantiate the reward class registered for ``config.type``."""
        return cls.registry.get(config.type, where)(config, runner)

    def reset_slot(self, slot: int, task: TaskCfg) -> None:
        """Start a new episode in ``slot``."""

    def calc(self, slots: np.ndarray) -> np.ndarray:
        """Rewards ``(len(slots),)`` for this step."""
        raise NotImplementedError
