"""Rewards, computed for all slots of a task at once."""

from internutopia.core.reward.base import BaseReward

__all__ = ['BaseReward']
