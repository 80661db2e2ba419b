"""InternUtopia's ``internutopia.core.object.object``: ``BaseObject`` and ``create_objects``.

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


__all__ = ['BaseObject', 'create_objects']
