"""``RotateControllerCfg``: turn the base in place (InternUtopia's module path)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ValidationInfo, field_validator

from internutopia.core.config import ControllerCfg
from internutopia.core.config.values import check_positive

#: What each speed and threshold measures (each must be > 0).
_UNITS = {'rotation_speed': 'rad/s', 'threshold': 'radians from the goal heading'}


class RotateControllerCfg(ControllerCfg):
    """Turns the base in place to ``[goal_quat_wxyz]`` through its ``move_by_speed`` sub-controller.

    ``None`` for ``rotation_speed`` or ``threshold`` (InternUtopia's defaults) takes InternUtopia's
    controller's fallbacks, 3.0 rad/s and 0.02 rad; leaving them out takes the defaults below. Each
    must be > 0 (a rotation at 0 rad/s, or a threshold of 0, never arrives).
    """

    type: str = 'RotateController'
    rotation_speed: float = 2.0
    threshold: float = 0.02
    _none_means: ClassVar[Mapping[str, Any]] = {'rotation_speed': 3.0, 'threshold': 0.02}

    @field_validator('rotation_speed', 'threshold')
    @classmethod
    def _positive(cls, value: float, info: ValidationInfo) -> Any:
        # (None is read through _none_means before this: InternUtopia's fallback.)
        return check_positive(value, info.field_name or '', _UNITS[info.field_name or ''])


__all__ = ['RotateControllerCfg']
