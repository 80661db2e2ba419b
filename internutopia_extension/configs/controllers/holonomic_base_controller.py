"""``HolonomicBaseControllerCfg``: a robot's base driven as a holonomic body (H1's ``move_by_speed``)."""

from __future__ import annotations

import math

from pydantic import Field

from internutopia.core.config import ControllerCfg


class HolonomicBaseControllerCfg(ControllerCfg):
    """Moves a robot's pelvis/base as a holonomic body at ``[forward, lateral, yaw_rate]``.

    The base is welded to a mocap target that moves at the commanded velocity, so the robot
    still collides with the scene; the joints hold their standing pose.
    """

    type: str = 'HolonomicBaseController'
    #: Commands beyond these are clamped (never zeroed): 3.3 m/s is Unitree's top speed for H1.
    max_linear_speed: float = Field(3.3, gt=0.0, allow_inf_nan=False)
    max_yaw_rate: float = Field(math.pi, gt=0.0, allow_inf_nan=False)


__all__ = ['HolonomicBaseControllerCfg']
