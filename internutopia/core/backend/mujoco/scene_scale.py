"""A scene's scale: the factor from a scene file's units to metres, per axis.

>>> effective_scene_scale((1, 1, 1), 0.01).tolist()   # a centimetre stage at scale 1: its own units
[0.01, 0.01, 0.01]
>>> effective_scene_scale(2.0, 0.01).tolist()         # a scale given: it wins
[2.0, 2.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def as_scale(scale: float | Sequence[float] | np.ndarray) -> np.ndarray:
    """``scale`` as three finite positive numbers; ``ValueError`` otherwise."""
    s = np.asarray(scale, dtype=float).reshape(-1)
    if s.size == 1:
        s = np.repeat(s, 3)
    if s.size != 3 or not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise ValueError(f'scene scale must be one or three finite positive numbers, got {scale!r}')
    return s


def effective_scene_scale(scale: float | Sequence[float] | np.ndarray, meters_per_unit: float) -> np.ndarray:
    """Per-axis factor from stage units to metres: ``scale`` unless it is (1, 1, 1), else ``meters_per_unit``."""
    s = as_scale(scale)
    if np.allclose(s, 1.0, rtol=0.0, atol=1e-12):
        return np.full(3, float(meters_per_unit))
    return s


__all__ = ['as_scale', 'effective_scene_scale']
