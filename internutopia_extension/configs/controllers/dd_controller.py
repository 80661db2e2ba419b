"""``DifferentialDriveControllerCfg``: wheel speeds of a two-wheeled robot (InternUtopia's module path)."""

from __future__ import annotations

from internutopia.core.config import ControllerCfg


class DifferentialDriveControllerCfg(ControllerCfg):
    """Wheel speeds from ``[forward_speed, rotation_speed]`` for a two-wheeled robot."""

    type: str = 'DifferentialDriveController'
    wheel_base: float
    wheel_radius: float


__all__ = ['DifferentialDriveControllerCfg']
