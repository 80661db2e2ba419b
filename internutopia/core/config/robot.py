"""Robot and controller configs (InternUtopia's ``internutopia.core.config.robot``)."""

from __future__ import annotations

from typing import Optional

from pydantic import SerializeAsAny

from internutopia.core.config.base import BaseCfg, Quat, Scale, TypedCfg, Vec3
from internutopia.core.config.sensor import SensorCfg


class ControllerCfg(TypedCfg):
    """A controller of a robot; ``sub_controllers`` are the lower-level controllers it drives."""

    name: str
    type: str
    sub_controllers: Optional[list[SerializeAsAny[ControllerCfg]]] = None


class RobotCfg(TypedCfg):
    """A robot of an episode. ``position``/``orientation`` (wxyz) are local to the env slot."""

    name: str
    type: str
    prim_path: Optional[str] = None
    usd_path: Optional[str] = None
    position: Vec3 = (0.0, 0.0, 0.0)
    orientation: Optional[Quat] = None
    scale: Optional[Scale] = None
    controllers: Optional[list[SerializeAsAny[ControllerCfg]]] = None
    sensors: Optional[list[SerializeAsAny[SensorCfg]]] = None


__all__ = ['BaseCfg', 'ControllerCfg', 'RobotCfg']
