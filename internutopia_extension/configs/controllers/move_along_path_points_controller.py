"""``MoveAlongPathPointsControllerCfg``: follow a path of points (InternUtopia's module path)."""

from __future__ import annotations

from internutopia.core.config import ControllerCfg


class MoveAlongPathPointsControllerCfg(ControllerCfg):
    """Follows ``[[p0, p1, ...]]`` (env-local points) through a ``move_to_point`` sub-controller."""

    type: str = 'MoveAlongPathPointsController'
    forward_speed: float = 1.0
    rotation_speed: float = 1.0
    threshold: float = 0.1


__all__ = ['MoveAlongPathPointsControllerCfg']
