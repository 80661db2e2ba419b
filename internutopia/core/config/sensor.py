"""Sensor configs (InternUtopia's ``internutopia.core.config.sensor``)."""

from __future__ import annotations

from internutopia.core.config.base import BaseCfg, TypedCfg


class SensorCfg(TypedCfg):
    """A sensor mounted on a robot. ``enable=False`` removes a built-in sensor entirely (it costs
    nothing); a sensor class written InternUtopia's way is built whatever ``enable`` says, as
    InternUtopia builds every configured sensor, and reads ``enable`` itself."""

    name: str
    type: str
    prim_path: str | None = None
    enable: bool = True


__all__ = ['BaseCfg', 'SensorCfg']
