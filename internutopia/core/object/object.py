"""InternUtopia's ``internutopia.core.object.object``: ``BaseObject``, ``create_objects`` and ``init_objects``.

``BaseObject`` is this package's object base class (:mod:`internutopia.core.object.base`). The env
places a slot's objects from its task config; ``create_objects`` gives them as bodies of the slot.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from internutopia.core.object.base import BaseObject


def create_objects(task_config: Any, scene: Any) -> OrderedDict[str, Any]:
    """The objects of ``task_config`` in the scene's slot, as :class:`~internutopia.core.robot.rigid_body.IRigidBody`, by name."""
    return OrderedDict((obj.name, scene.get(obj.name)) for obj in task_config.objects)


def init_objects(task_config: Any, scene: Any) -> OrderedDict:
    """The objects of ``task_config`` in the scene's slot, by name (InternUtopia's name; see
    :func:`internutopia.core.object.object.create_objects`)."""
    return create_objects(task_config, scene)


__all__ = ['BaseObject', 'create_objects', 'init_objects']
