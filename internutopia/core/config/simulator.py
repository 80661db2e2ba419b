"""Simulator settings: :class:`SimConfig` (step lengths, rendering, the physics backend by name) and
InternUtopia's :class:`Simulator` enum."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from enum import Enum
from typing import Any, ClassVar

import numpy as np
from pydantic import field_validator

from internutopia.core.config.base import BaseCfg
from internutopia.core.config.values import MAX_RENDER_PERIOD, MAX_STEPS, PHYSICS_DT_RANGE
from internutopia.core.plugins import load_extensions

#: Names ``SimConfig.backend`` accepts; :func:`internutopia.core.backend.register_backend` adds to it.
_BACKEND_NAMES: set[str] = {'mujoco'}


def register_backend_name(name: str) -> None:
    """Accept ``name`` as a ``SimConfig.backend`` (called by ``internutopia.core.backend.register_backend``)."""
    _BACKEND_NAMES.add(name)


def _positive_seconds(value: Any, field: str) -> float:
    """A step length in seconds: a finite number > 0, or text such as ``'0.01'`` or ``'1/240'``
    (InternUtopia accepts both)."""
    if isinstance(value, str):
        numerator, slash, denominator = value.partition('/')
        try:
            seconds = float(numerator) / float(denominator) if slash else float(numerator)
        except (ValueError, ZeroDivisionError):
            raise ValueError(f'{field} must be a number of seconds or a fraction like "1/240"; got {value!r}') from None
    elif (isinstance(value, (bool, np.bool_, np.timedelta64, np.datetime64))
          or not isinstance(value, (int, float, np.integer, np.floating))):
        raise ValueError(f'{field} must be a number of seconds or a fraction like "1/240"; got {value!r}')
    else:
        seconds = float(value)
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f'{field} must be a finite number of seconds > 0; got {value!r}')
    low, high = PHYSICS_DT_RANGE
    if field == 'physics_dt' and not low <= seconds <= high:
        raise ValueError(f'physics_dt (the simulated time of one env step) must be within [{low:g}, {high:g}] seconds; '
                         f'got {value!r}')
    return seconds


class Simulator(Enum):
    """Physics backends by name (InternUtopia's enum; ``SimConfig.backend`` takes the value of a
    registered one)."""

    MUJOCO = 'mujoco'
    #: InternUtopia's only backend; not available in this package (see docs/contract.md).
    ISAACSIM = 'isaac_sim'


class SimConfig(BaseCfg):
    """Simulator settings. ``backend`` picks the physics engine: ``'mujoco'`` (built in) or one an
    extension registered (``internutopia.core.backend.register_backend``).

    ``physics_dt`` is the simulated time of one env step (InternUtopia's default, 1/60 s), within
    [1e-6, 1] s; robots that need finer physics (the G1's servos) run that step in substeps.
    ``rendering_dt`` and ``rendering_interval`` set how often cameras render; ``rendering_dt`` is
    > 0 and at most 1e9 physics steps.

    ``rendering_lod`` draws cameras and the overview with decimated visual meshes (rendering only;
    see ``docs/rendering.md``). Physics models are compiled without their visual-only geoms, for a
    fraction of the memory and the same motion; what draws (cameras, the overview, the window of
    ``headless=False``) draws a full model compiled for it (``docs/reliability.md``). A structure
    with a sensor that reads geometry (a rangefinder) keeps them. ``rendering_threads`` is the
    number of render threads (GL contexts) per camera image size; ``None`` picks one per core.

    ``device`` is where a device backend steps (``backend='warp'``): ``'cpu'``, ``'cuda'`` or
    ``'cuda:N'``; ``None`` picks the first GPU, else the CPU. The MuJoCo backend runs on the CPU
    and ignores it.
    """

    physics_dt: float = 1 / 60
    rendering_dt: float = 1 / 60
    rendering_interval: int | None = None
    use_fabric: bool = False
    headless: bool = True
    native: bool = False
    webrtc: bool = False
    backend: str = 'mujoco'
    device: str | None = None
    rendering_lod: bool = True
    rendering_threads: int | None = None
    _text_numbers: ClassVar[tuple[str, ...]] = ('physics_dt', 'rendering_dt')
    #: ``None`` as InternUtopia reads it: a step length Isaac Sim's ``World`` is given as ``None``
    #: is its default, 1/60 s; the switches are read by their truth value there (``None`` is off).
    _none_means: ClassVar[Mapping[str, Any]] = {
        'physics_dt': 1 / 60, 'rendering_dt': 1 / 60,
        'use_fabric': False, 'headless': False, 'webrtc': False, 'native': False,
    }

    @field_validator('physics_dt', 'rendering_dt', mode='before')
    @classmethod
    def _dt_positive(cls, value: Any, info: Any) -> float:
        seconds = _positive_seconds(value, info.field_name)
        # The render clock counts physics steps per render in an integer (RenderClock.period). On
        # construction physics_dt is checked first; an assignment sees the other field's value.
        other = info.data.get('rendering_dt' if info.field_name == 'physics_dt' else 'physics_dt')
        if isinstance(other, float):
            physics, rendering = (seconds, other) if info.field_name == 'physics_dt' else (other, seconds)
            if rendering / physics > MAX_RENDER_PERIOD:
                raise ValueError(f'rendering_dt / physics_dt must be at most {MAX_RENDER_PERIOD:.0e} '
                                 f'(physics steps per render); got rendering_dt {rendering:g} s with physics_dt '
                                 f'{physics:g} s')
        return seconds

    @field_validator('backend')
    @classmethod
    def _backend_known(cls, value: str) -> str:
        if value not in _BACKEND_NAMES:
            load_extensions()  # an extension may register it
        if value not in _BACKEND_NAMES:
            raise ValueError(f'unknown physics backend {value!r}; registered backends: {sorted(_BACKEND_NAMES)}')
        return value

    @field_validator('device')
    @classmethod
    def _device_name(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r'cpu|cuda(:\d+)?', value):
            raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N' (a GPU's index), or None; got {value!r}")
        return value

    @field_validator('rendering_interval')
    @classmethod
    def _interval_positive(cls, value: int | None) -> int | None:
        if value is not None and not 0 <= value <= MAX_STEPS:
            raise ValueError(f'rendering_interval must be 0..{MAX_STEPS:_} (render every N physics steps; 0, as in '
                             f'InternUtopia, every step) or None; got {value}')
        return value

    @field_validator('rendering_threads')
    @classmethod
    def _threads_positive(cls, value: int | None) -> int | None:
        if value is not None and not 1 <= value <= 64:
            raise ValueError(f'rendering_threads must be 1..64 render threads, or None (one per core); got {value}')
        return value


__all__ = ['SimConfig', 'Simulator', 'register_backend_name']
