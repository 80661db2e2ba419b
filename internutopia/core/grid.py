"""Where each env slot sits in the one physics world.

With ``N`` slots spaced ``s`` apart, ``cols = ceil(sqrt(N))`` and slot ``i`` has its origin at
``((i // cols) * s, (i % cols) * s, 0)``: slot 0 at the world origin, a near-square layout.

>>> slot_origins(3, 10.0)
array([[ 0.,  0.,  0.],
       [ 0., 10.,  0.],
       [10.,  0.,  0.]])
"""

from __future__ import annotations

import math

import numpy as np


def grid_columns(env_num: int) -> int:
    """Number of columns of the near-square grid of ``env_num`` slots."""
    return math.ceil(math.sqrt(env_num))


def slot_origins(env_num: int, offset: float) -> np.ndarray:
    """World-frame origins of the ``env_num`` slots, shape ``(env_num, 3)``."""
    cols = grid_columns(env_num)
    ids = np.arange(env_num)
    origins = np.zeros((env_num, 3))
    origins[:, 0] = (ids // cols) * offset
    origins[:, 1] = (ids % cols) * offset
    return origins
