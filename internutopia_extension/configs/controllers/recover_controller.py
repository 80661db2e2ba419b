"""``RecoverControllerCfg``: put a robot back on its feet (InternUtopia's module path)."""

from __future__ import annotations

from internutopia.core.config import ControllerCfg


class RecoverControllerCfg(ControllerCfg):
    """Puts a robot back on its feet: upright, at ``recover_height`` (m), keeping its x, y and heading.

    InternUtopia's recover controller drives H1's joints back to standing; here the base is set
    upright directly (the action is ignored: send ``[]``).
    """

    type: str = 'RecoverController'
    recover_height: float


__all__ = ['RecoverControllerCfg']
