"""Config classes of the cube objects: ``DynamicCubeCfg`` (a rigid box) and ``VisualCubeCfg`` (drawn only)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import field_validator, model_validator

from internutopia.core.config import ObjectCfg
from internutopia.core.config.base import NONE_REJECTED
from internutopia.core.config.values import SCALE_RANGE


def _check_color(value: tuple[float, ...] | None) -> tuple[float, ...] | None:
    if value is None:
        return value
    if len(value) not in (3, 4) or any(not 0.0 <= c <= 1.0 for c in value):
        raise ValueError(f'color must be 3 (rgb) or 4 (rgba) numbers in [0, 1]; got {tuple(value)}')
    return tuple(float(c) for c in value)


def _check_scale(value: tuple[float, float, float]) -> tuple[float, float, float]:
    low, high = SCALE_RANGE
    if any(not s > 0 for s in value) or any(not low <= s <= high for s in value):
        raise ValueError(f'scale must be three positive numbers (metres) within [{low:g}, {high:g}]; '
                         f'got {tuple(value)}')
    return value


class _BoxCfg(ObjectCfg):
    """Fields shared by the box-sized objects (cubes, the table): full ``scale`` in metres and an
    optional rgb(a) ``color``, both checked.

    It declares no ``type``, so it is not an object type of its own.
    """

    color: tuple[float, ...] | None = None
    scale: tuple[float, float, float] = (0.1, 0.1, 0.1)
    #: InternUtopia's cubes make an array of a ``None`` scale and fail on it.
    _none_means: ClassVar[Mapping[str, Any]] = {'scale': NONE_REJECTED}

    @field_validator('color')
    @classmethod
    def _color_rgba(cls, value: tuple[float, ...] | None) -> tuple[float, ...] | None:
        return _check_color(value)

    @field_validator('scale')
    @classmethod
    def _scale_positive(cls, value: tuple[float, float, float]) -> tuple[float, float, float]:
        return _check_scale(value)


class DynamicCubeCfg(_BoxCfg):
    """A rigid box with a free joint: it falls, slides and can be pushed.

    ``scale`` is the box's full size in metres (x, y, z), as in InternUtopia (a unit cube scaled).
    ``mass`` in kg; else ``density`` in kg/m^3 (default 1000). ``color`` is rgb or rgba in [0, 1].
    ``collider=False`` makes it pass through everything (it still falls).
    """

    type: str = 'DynamicCube'
    mass: float | None = None
    density: float | None = None
    collider: bool = True
    #: InternUtopia's ``DynamicCube`` always collides (it never reads ``collider``), and makes an
    #: array of a ``None`` orientation and fails on it.
    _none_means: ClassVar[Mapping[str, Any]] = {'collider': True, 'orientation': NONE_REJECTED}

    @field_validator('mass')
    @classmethod
    def _mass_positive(cls, value: float | None) -> float | None:
        if value is not None and not value > 0:
            raise ValueError(f'mass must be > 0 kg or None (density 1000 kg/m^3); got {value}')
        return value

    @field_validator('density')
    @classmethod
    def _density_positive(cls, value: float | None) -> float | None:
        if value is not None and not value > 0:
            raise ValueError(f'density must be > 0 kg/m^3 or None (1000); got {value}')
        return value

    @model_validator(mode='after')
    def _simulable(self) -> DynamicCubeCfg:
        # MuJoCo refuses a moving body whose mass or inertia is below its mjMINVAL (1e-15).
        mass = self.mass if self.mass is not None else (self.density or 1000.0) * math.prod(self.scale)
        if min(self.scale) < 1e-3 or mass < 1e-6:
            raise ValueError(f'a DynamicCube must be at least 1 mm on every side and 1 mg in mass to be simulated; '
                             f'got scale {tuple(self.scale)}, mass {mass:g} kg')
        return self


class VisualCubeCfg(_BoxCfg):
    """A box that is only drawn: no collision (``contype = conaffinity = 0``), no dynamics.

    It is a mocap body, so its pose is state: episodes that move it reuse the compiled world.
    ``scale`` is its full size in metres.
    """

    type: str = 'VisualCube'


__all__ = ['DynamicCubeCfg', 'VisualCubeCfg']
