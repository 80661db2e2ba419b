"""``HolonomicBaseControllerCfg``: a robot's base driven as a holonomic body (H1's ``move_by_speed``)."""

from __future__ import annotations

from internutopia.core.config import ControllerCfg


class HolonomicBaseControllerCfg(ControllerCfg):
    """Moves a robot's pelvis/base as a holonomic body at ``[forward, lateral, yaw_rate]``.

    The base is welded to a mocap target that moves at the commanded velocity, so the robot
    still collides with the scene; the joints hold their standing pose.
    """

    type: str = 'HolonomicBaseController'


__all__ = ['HolonomicBaseControllerCfg']
