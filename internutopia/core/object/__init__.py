"""Scene objects (cubes, meshes, ...) placed per episode in env-local coordinates."""

from collections import OrderedDict
from typing import Any

from internutopia.core.object.base import BaseObject


def init_objects(task_config: Any, scene: Any) -> OrderedDict:
    """The objects of ``task_config`` in the scene's slot, by name (InternUtopia's name; see
    :func:`internutopia.core.object.object.create_objects`)."""
    from internutopia.core.object.object import create_objects

    return create_objects(task_config, scene)


__all__ = ['BaseObject', 'init_objects']
