"""``MoveToPointBySpeedControllerCfg``: drive the base to a point (InternUtopia's module path)."""

from __future__ import annotations

from internutopia.core.config import ControllerCfg


class MoveToPointBySpeedControllerCfg(ControllerCfg):
    """Drives the base to ``[goal_xyz]`` (env-local) through its ``move_by_speed`` sub-controller."""

    type: str = 'MoveToPointBySpeedController'
    forward_speed: float = 1.0
    rotation_speed: float = 1.0
    threshold: float = 0.05


__all__ = ['MoveToPointBySpeedControllerCfg']
