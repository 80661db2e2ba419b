"""``MoveToPointBySpeedControllerCfg``: drive the base to a point (InternUtopia's module path)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from internutopia.core.config import ControllerCfg


class MoveToPointBySpeedControllerCfg(ControllerCfg):
    """Drives the base to ``[goal_xyz]`` (env-local) through its ``move_by_speed`` sub-controller.

    ``None`` for ``forward_speed``, ``rotation_speed`` or ``threshold`` (InternUtopia's defaults)
    takes InternUtopia's controller's fallbacks, 1.0 m/s, 8.0 rad/s and 0.02 m; leaving them out
    takes the defaults below.
    """

    type: str = 'MoveToPointBySpeedController'
    forward_speed: float = 1.0
    rotation_speed: float = 1.0
    threshold: float = 0.05
    _none_means: ClassVar[Mapping[str, Any]] = {'forward_speed': 1.0, 'rotation_speed': 8.0, 'threshold': 0.02}


__all__ = ['MoveToPointBySpeedControllerCfg']
