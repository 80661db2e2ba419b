"""``PoseMixin``: world, env and local poses of things in one env slot (InternUtopia's mixin).

InternUtopia places env ``i`` at an offset in one Isaac Sim stage, so a pose has three frames:
*world* (the stage), *env* (the slot's origin; what configs and observations use) and *local*
(the parent prim's). Here each slot is its own simulation drawn at its grid origin
(``docs/contract.md``), so world = env + the slot's origin, and local is relative to the body a
thing is attached to (the env frame for a robot's root). Positions are ``(3,)`` arrays,
orientations ``wxyz`` ``(4,)`` arrays.

A class using the mixin implements ``_env_pose()`` and, when it can be moved,
``_set_env_pose(position, orientation)``, and sets ``offset`` (its slot's origin).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class PoseMixin:
    """Pose getters and setters in the world, env and local frames; see the module docstring."""

    #: InternUtopia's table of env offsets by env id (filled by the per-slot objects made here).
    env_offset_map: dict[str, list[float]] = {}

    env_id: Any = None
    offset: Any = None

    # -- what a class provides -----------------------------------------------------------------
    def _env_pose(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _set_env_pose(self, position: np.ndarray | None, orientation: np.ndarray | None) -> None:
        raise ValueError(f'{type(self).__name__} cannot be moved (it is fixed in its slot)')

    def _local_pose(self) -> tuple[np.ndarray, np.ndarray]:
        return self._env_pose()

    def _set_local_pose(self, position: np.ndarray | None, orientation: np.ndarray | None) -> None:
        self._set_env_pose(position, orientation)

    # -- InternUtopia's API --------------------------------------------------------------------
    def unwrap(self) -> Any:
        """The object this one wraps (itself here: there is no Isaac Sim prim underneath)."""
        return self

    def get_env_id(self) -> Any:
        """The env id (slot) this thing is in."""
        return self.env_id

    def get_offset(self) -> list[float]:
        """The slot's origin in the world frame."""
        return [float(v) for v in self._origin()]

    def _origin(self) -> np.ndarray:
        return np.zeros(3) if self.offset is None else np.asarray(self.offset, dtype=float)

    def get_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """Position and orientation in the env frame (relative to the slot's origin)."""
        position, orientation = self._env_pose()
        return np.array(position, dtype=float), np.array(orientation, dtype=float)

    def set_pose(self, position: Sequence[float] | None = None, orientation: Sequence[float] | None = None) -> None:
        """Teleport to a pose in the env frame (``None`` keeps that part)."""
        self._set_env_pose(_vector(position, 3, 'position', self), _vector(orientation, 4, 'orientation', self))

    def get_world_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """Position and orientation in the world frame (the env frame shifted by the slot's origin)."""
        position, orientation = self.get_pose()
        return position + self._origin(), orientation

    def set_world_pose(self, position: Sequence[float] | None = None, orientation: Sequence[float] | None = None) -> None:
        """Teleport to a pose in the world frame (``None`` keeps that part)."""
        world_position = _vector(position, 3, 'position', self)
        self._set_env_pose(None if world_position is None else world_position - self._origin(), _vector(orientation, 4, 'orientation', self))

    def get_local_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """Position and orientation relative to the parent (the env frame for a root)."""
        position, orientation = self._local_pose()
        return np.array(position, dtype=float), np.array(orientation, dtype=float)

    def set_local_pose(self, translation: Sequence[float] | None = None, orientation: Sequence[float] | None = None) -> None:
        """Teleport to a pose relative to the parent (``None`` keeps that part)."""
        self._set_local_pose(_vector(translation, 3, 'translation', self), _vector(orientation, 4, 'orientation', self))


def _vector(value: Any, size: int, what: str, owner: Any) -> np.ndarray | None:
    """``value`` as ``size`` finite floats (``None`` stays); a ``ValueError`` naming ``owner`` (its
    ``name`` and env) and ``what`` otherwise."""
    if value is None:
        return None
    array = np.asarray(value, dtype=float).reshape(-1)
    if array.shape != (size,) or not np.all(np.isfinite(array)):
        name = getattr(owner, 'name', None)
        who = f'{name!r} in env {getattr(owner, "env_id", "?")}: ' if name is not None else ''
        raise ValueError(f'{who}{what} must be {size} finite numbers; got {value!r}')
    return array


__all__ = ['PoseMixin']
