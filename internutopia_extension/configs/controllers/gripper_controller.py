"""``GripperControllerCfg``: open and close a parallel gripper (InternUtopia's module path)."""

from __future__ import annotations

from internutopia.core.config import ControllerCfg


class GripperControllerCfg(ControllerCfg):
    """Opens and closes a parallel gripper: ``['open']`` or ``['close']``."""

    type: str = 'GripperController'


__all__ = ['GripperControllerCfg']
