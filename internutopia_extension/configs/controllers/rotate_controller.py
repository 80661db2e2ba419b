"""``RotateControllerCfg``: turn the base in place (InternUtopia's module path)."""

from __future__ import annotations

from internutopia.core.config import ControllerCfg


class RotateControllerCfg(ControllerCfg):
    """Turns the base in place to ``[goal_quat_wxyz]`` through its ``move_by_speed`` sub-controller."""

    type: str = 'RotateController'
    rotation_speed: float = 2.0
    threshold: float = 0.02


__all__ = ['RotateControllerCfg']
