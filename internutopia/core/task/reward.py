"""InternUtopia's ``internutopia.core.task.reward``: ``BaseReward`` and ``create_reward``.

``BaseReward`` is this package's reward base class (:mod:`internutopia.core.reward.base`):
subclass it either way (``docs/extensions.md``).
"""

from __future__ import annotations

from typing import Any

from internutopia.core.reward.base import BaseReward


def create_reward(reward_config: Any, task: Any) -> BaseReward:
    """A per-slot reward object (``cls(task, settings)``) for a per-slot task object ``task``.

    Raises:
        ValueError: the type is not registered, or its class serves every slot at once (a reward
            of this package needs its own task type; give a per-slot task a per-slot reward).
    """
    from internutopia.core.extension_style import is_per_slot

    reward_class = BaseReward.registry.get(reward_config.type)
    if not is_per_slot(reward_class, BaseReward, ('init_setting', '_calc_next_state'), ('calc', 'reset'),
                       init_params=('settings', 'task')):
        raise ValueError(f'reward {reward_config.type!r} serves every slot of its own task type at once; an '
                         'upstream-style (per-slot) task needs a per-slot reward class (calc() returning a float)')
    return reward_class(task, dict(reward_config.reward_settings or {}))


__all__ = ['BaseReward', 'create_reward']
