"""``MoveAlongPathPointsControllerCfg``: follow a path of points (InternUtopia's module path)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from internutopia.core.config import ControllerCfg


class MoveAlongPathPointsControllerCfg(ControllerCfg):
    """Follows ``[[p0, p1, ...]]`` (env-local points) through a ``move_to_point`` sub-controller.

    ``name`` defaults to ``'move_along_path'``, as InternUtopia's. ``None`` for ``forward_speed``,
    ``rotation_speed`` or ``threshold`` (InternUtopia's defaults) takes InternUtopia's controller's
    fallbacks, 1.0 m/s, 8.0 rad/s and 0.02 m; leaving them out takes the defaults below.
    """

    name: str = 'move_along_path'
    type: str = 'MoveAlongPathPointsController'
    forward_speed: float = 1.0
    rotation_speed: float = 1.0
    threshold: float = 0.1
    _none_means: ClassVar[Mapping[str, Any]] = {'forward_speed': 1.0, 'rotation_speed': 8.0, 'threshold': 0.02}


__all__ = ['MoveAlongPathPointsControllerCfg']
