"""InternUtopia's ``internutopia.core.task.reward``: ``BaseReward`` (:mod:`internutopia.core.reward.base`) and the per-slot factories
(:mod:`internutopia.per_slot.reward`). Subclass ``BaseReward`` either way: one object for every slot, or InternUtopia's
one object per slot (``docs/extensions.md``)."""

from internutopia.core.reward.base import BaseReward
from internutopia.per_slot.reward import create_reward

__all__ = ['BaseReward', 'create_reward']
