"""Scene objects (cubes, meshes, ...) placed per episode in env-local coordinates.

:mod:`.base` holds ``BaseObject`` (the base class and registry of object types); :mod:`.object` is
InternUtopia's module of it, with ``create_objects`` and ``init_objects``.
"""

from internutopia.core.object.base import BaseObject
from internutopia.core.object.object import init_objects

__all__ = ['BaseObject', 'init_objects']
