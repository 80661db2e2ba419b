"""``RecoverControllerCfg``: put a robot back on its feet (InternUtopia's module path)."""

from __future__ import annotations

from pydantic import field_validator

from internutopia.core.config import ControllerCfg
from internutopia.core.config.values import MAX_COORDINATE_M, check_positive


class RecoverControllerCfg(ControllerCfg):
    """Puts a robot back on its feet: upright, at ``recover_height`` (m), keeping its x, y and heading.

    InternUtopia's recover controller drives H1's joints back to standing; here the base is set
    upright directly (the action is ignored: send ``[]``).
    """

    type: str = 'RecoverController'
    recover_height: float

    @field_validator('recover_height')
    @classmethod
    def _height_positive(cls, value: float) -> float:
        return check_positive(value, 'recover_height', 'metres above the slot floor', MAX_COORDINATE_M)


__all__ = ['RecoverControllerCfg']
