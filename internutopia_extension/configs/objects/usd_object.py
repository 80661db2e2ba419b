"""``UsdObjCfg``: an object loaded from a USD or MJCF file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import field_validator

from internutopia.core.config import ObjectCfg
from internutopia.core.config.files import AssetPath


class UsdObjCfg(ObjectCfg):
    """An object loaded from a file: USD (``.usd``/``.usda``/``.usdc``/``.usdz``) or MJCF (``.xml``).

    The file is loaded like a scene (``scene_to_spec``: units, colours and collision rules are the
    same), scaled by ``scale`` and wrapped into one body named ``body``. ``collider=False`` makes
    every geom visual only. ``dynamic=True`` gives the body a free joint (the whole file moves as one
    rigid body; ``mass`` in kg rescales its densities), otherwise it is a static mocap body whose
    pose is state. Ground planes inside the file are dropped (the scene has the ground).
    """

    type: str = 'UsdObject'
    usd_path: AssetPath
    collider: bool = True
    dynamic: bool = False
    #: InternUtopia's ``UsdObject`` reads ``collider`` by its truth value: ``None`` is no collider.
    _none_means: ClassVar[Mapping[str, Any]] = {'collider': False}
    mass: float | None = None

    @field_validator('mass')
    @classmethod
    def _mass_positive(cls, value: float | None) -> float | None:
        if value is not None and not value > 0:
            raise ValueError(f'mass must be > 0 kg or None (the file\'s own masses); got {value}')
        return value

    @field_validator('usd_path')
    @classmethod
    def _path_extension(cls, value: str) -> str:
        allowed = ('.usd', '.usda', '.usdc', '.usdz', '.xml')
        if not value.lower().endswith(allowed):
            raise ValueError(f'usd_path must name a {"/".join(allowed)} file; got {value!r}')
        return value


__all__ = ['UsdObjCfg']
