"""Reward configs (InternUtopia's ``internutopia.core.config.task.reward``)."""

from __future__ import annotations

from typing import Any, Optional

from internutopia.core.config.base import TypedCfg


class RewardCfg(TypedCfg):
    """A reward of a task; ``reward_settings`` are the reward's own parameters."""

    type: str
    reward_settings: Optional[dict[str, Any]] = None


__all__ = ['RewardCfg']
