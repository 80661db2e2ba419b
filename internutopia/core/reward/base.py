"""Rewards: configured by a task's :class:`~internutopia.core.config.RewardCfg`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from internutopia.core.config import RewardCfg, TaskCfg
from internutopia.core.registry import Registry
from internutopia.core.view import EnvView


class BaseReward:
    """A reward over every slot whose task config names it (one object per distinct reward config).

    Args:
        config: the reward's config.
        view: what the reward sees of the env; ``view.task(slot)`` is the task it rewards.
    """

    registry: Registry[type[BaseReward]] = Registry('reward')
    # Attributes of one slot's reward (InternUtopia's signature (task, settings)).
    task: Any
    state: Any
    settings: dict[str, Any]
    #: InternUtopia's name of the registry table.
    rewards = registry.table

    def __init__(self, config: Any, view: Any) -> None:
        if not isinstance(config, RewardCfg):  # InternUtopia's signature (task, settings): one slot's reward
            self.state = None
            self.task = config
            self.settings = view
            self.init_setting()
            return
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
        """Instantiate the reward class registered for ``config.type`` (an upstream-style one runs
        through a per-slot adapter)."""
        from internutopia.core.extension_style import is_per_slot

        reward_class = cls.registry.get(config.type, where)
        if is_per_slot(reward_class, BaseReward, ('init_setting', '_calc_next_state'), ('calc', 'reset'),
                       init_params=('settings', 'task')):
            from internutopia.core.reward.slot import SlotRewardAdapter

            return SlotRewardAdapter(config, view, reward_class)
        return reward_class(config, view)

    # -- one slot's reward (InternUtopia's way) ----------------------------------------------------
    def init_setting(self) -> None:
        """Read ``self.settings`` (called by ``__init__`` of one slot's reward)."""

    def reset(self) -> None:
        """Start a new episode (one slot's reward)."""
        self.state = None

    def _calc_next_state(self) -> Any:
        raise NotImplementedError(f'{type(self).__name__}._calc_next_state is not implemented')

    def reset_slot(self, slot: int, task: TaskCfg) -> None:
        """Start a new episode in ``slot``."""

    def calc(self, slots: Any = None) -> Any:
        """Rewards ``(len(slots),)`` for this step (one slot's reward: a float, no argument)."""
        raise NotImplementedError
