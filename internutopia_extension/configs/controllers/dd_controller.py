"""``DifferentialDriveControllerCfg``: wheel speeds of a two-wheeled robot (InternUtopia's module path)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationInfo, field_validator

from internutopia.core.config import ControllerCfg
from internutopia.core.config.values import MAX_COORDINATE_M, check_positive


class DifferentialDriveControllerCfg(ControllerCfg):
    """Wheel speeds from ``[forward_speed, rotation_speed]`` for a two-wheeled robot.

    ``wheel_base`` (the distance between the wheels) and ``wheel_radius`` are metres, each > 0 and
    at most 100 km (the Jetbot's: 0.1125 and 0.03): the wheel speeds are divided by the radius.
    """

    type: str = 'DifferentialDriveController'
    wheel_base: float
    wheel_radius: float

    @field_validator('wheel_base', 'wheel_radius')
    @classmethod
    def _lengths_positive(cls, value: float, info: ValidationInfo) -> Any:
        return check_positive(value, info.field_name or '', 'metres', MAX_COORDINATE_M)


__all__ = ['DifferentialDriveControllerCfg']
