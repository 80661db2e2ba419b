"""``RotateControllerCfg``: turn the base in place (InternUtopia's module path)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from internutopia.core.config import ControllerCfg


class RotateControllerCfg(ControllerCfg):
    """Turns the base in place to ``[goal_quat_wxyz]`` through its ``move_by_speed`` sub-controller.

    ``None`` for ``rotation_speed`` or ``threshold`` (InternUtopia's defaults) takes InternUtopia's
    controller's fallbacks, 3.0 rad/s and 0.02 rad; leaving them out takes the defaults below.
    """

    type: str = 'RotateController'
    rotation_speed: float = 2.0
    threshold: float = 0.02
    _none_means: ClassVar[Mapping[str, Any]] = {'rotation_speed': 3.0, 'threshold': 0.02}


__all__ = ['RotateControllerCfg']
