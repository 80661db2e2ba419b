"""Scene objects (cubes, meshes, ...) placed per episode in env-local coordinates."""

from internutopia.core.object.base import BaseObject

__all__ = ['BaseObject']
