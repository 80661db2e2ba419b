"""``MoveToPointBySpeedControllerCfg``: drive the base to a point (InternUtopia's module path)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ValidationInfo, field_validator

from internutopia.core.config import ControllerCfg
from internutopia.core.config.values import check_positive

#: What each speed and threshold measures (each must be > 0).
_UNITS = {'forward_speed': 'm/s', 'rotation_speed': 'rad/s',
          'threshold': 'metres from the goal'}


class MoveToPointBySpeedControllerCfg(ControllerCfg):
    """Drives the base to ``[goal_xyz]`` (env-local) through its ``move_by_speed`` sub-controller.

    ``None`` for ``forward_speed``, ``rotation_speed`` or ``threshold`` (InternUtopia's defaults)
    takes InternUtopia's controller's fallbacks, 1.0 m/s, 8.0 rad/s and 0.02 m; leaving them out
    takes the defaults below. Each
    must be > 0 (a speed of 0, or a threshold of 0, never arrives).
    """

    type: str = 'MoveToPointBySpeedController'
    forward_speed: float = 1.0
    rotation_speed: float = 1.0
    threshold: float = 0.05
    _none_means: ClassVar[Mapping[str, Any]] = {'forward_speed': 1.0, 'rotation_speed': 8.0, 'threshold': 0.02}

    @field_validator('forward_speed', 'rotation_speed', 'threshold')
    @classmethod
    def _positive(cls, value: float, info: ValidationInfo) -> Any:
        # (None is read through _none_means before this: InternUtopia's fallback.)
        return check_positive(value, info.field_name or '', _UNITS[info.field_name or ''])


__all__ = ['MoveToPointBySpeedControllerCfg']
