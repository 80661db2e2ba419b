"""A goal in a robot's yaw frame (x ahead, y left), without trigonometric functions.

The heading of a wxyz quaternion is ``atan2(s, c)`` with ``s = w*z + x*y`` and
``c = 0.5 - (y*y + z*z)`` (:func:`~internutopia.core.util.math.quat_to_yaw`); its cosine and sine
are ``c / r`` and ``s / r`` with ``r = sqrt(c*c + s*s)``, so rotating a world offset into the yaw
frame takes a square root and two divisions instead of an ``atan2``, a ``cos`` and a ``sin``. (A
base pointing straight up or down has no heading: ``r == 0`` counts as yaw 0.)

Three versions of the same arithmetic, in the same order, so that they agree to the bit: one
slot in Python floats (:func:`goal_in_yaw_frame`), all rows in numpy (:func:`goals_in_yaw_frame`
without numba), and all rows in one compiled loop (the same function with numba), the vector
envs' per-step path (``goal_vector``, :mod:`internutopia.core.gym_vector.features`).

>>> quarter = np.array([np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)])  # facing +y
>>> [round(v, 9) for v in goal_in_yaw_frame((1.0, 3.0, 0.0), (1.0, 1.0, 0.5), quarter)]
[2.0, 0.0]
>>> goals_in_yaw_frame(np.array([[1.0, 3.0, 0.0]]), np.array([[1.0, 1.0, 0.5]]), quarter[None]).round(9).tolist()
[[2.0, 0.0]]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from internutopia.core.util.jit import Kernel


def goal_in_yaw_frame(goal: Any, position: Any, orientation: Any) -> list[float]:
    """``[ahead, left]``: the xy offset from ``position`` to ``goal`` in the yaw frame of the wxyz
    ``orientation`` (one robot, Python floats)."""
    w, x, y, z = (float(v) for v in orientation[:4])
    dx, dy = float(goal[0]) - float(position[0]), float(goal[1]) - float(position[1])
    sine, cosine = w * z + x * y, 0.5 - (y * y + z * z)
    norm = math.sqrt(cosine * cosine + sine * sine)
    c, s = (cosine / norm, sine / norm) if norm > 0.0 else (1.0, 0.0)
    return [c * dx + s * dy, c * dy - s * dx]


def _rows(goal: np.ndarray, position: np.ndarray, orientation: np.ndarray, out: np.ndarray) -> None:
    """:func:`goal_in_yaw_frame` of every row, written into ``out`` (compiled by numba)."""
    for i in range(goal.shape[0]):
        w, x, y, z = orientation[i, 0], orientation[i, 1], orientation[i, 2], orientation[i, 3]
        dx = goal[i, 0] - position[i, 0]
        dy = goal[i, 1] - position[i, 1]
        sine = w * z + x * y
        cosine = 0.5 - (y * y + z * z)
        norm = math.sqrt(cosine * cosine + sine * sine)
        c, s = 1.0, 0.0
        if norm > 0.0:
            c = cosine / norm
            s = sine / norm
        out[i, 0] = c * dx + s * dy
        out[i, 1] = c * dy - s * dx


_kernel = Kernel(_rows)


def _numpy_rows(goal: np.ndarray, position: np.ndarray, orientation: np.ndarray, out: np.ndarray) -> None:
    w, x, y, z = orientation[:, 0], orientation[:, 1], orientation[:, 2], orientation[:, 3]
    dx, dy = goal[:, 0] - position[:, 0], goal[:, 1] - position[:, 1]
    sine, cosine = w * z + x * y, 0.5 - (y * y + z * z)
    norm = np.sqrt(cosine * cosine + sine * sine)
    level = norm > 0.0
    safe = np.where(level, norm, 1.0)
    c, s = np.where(level, cosine / safe, 1.0), np.where(level, sine / safe, 0.0)
    out[:, 0] = c * dx + s * dy
    out[:, 1] = c * dy - s * dx


def goals_in_yaw_frame(goal: np.ndarray, position: np.ndarray, orientation: np.ndarray) -> np.ndarray:
    """``(n, 2)``: :func:`goal_in_yaw_frame` of ``n`` rows of ``(n, >=2)`` goals and positions and
    ``(n, 4)`` orientations, in one compiled pass when numba is available."""
    goal, position, orientation = (np.ascontiguousarray(a, dtype=np.float64) for a in (goal, position, orientation))
    out = np.empty((len(goal), 2))
    (_kernel.compiled_or(_numpy_rows))(goal, position, orientation, out)
    return out


def warm() -> None:
    """Compile (or load) the kernel now, ahead of a first step."""
    empty = np.zeros((0, 3))
    _kernel.warm(empty, empty, np.zeros((0, 4)), np.zeros((0, 2)))


__all__ = ['goal_in_yaw_frame', 'goals_in_yaw_frame', 'warm']
