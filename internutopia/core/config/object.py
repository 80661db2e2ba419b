"""Scene object configs (InternUtopia's ``internutopia.core.config.object``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ValidationInfo, field_validator

from internutopia.core.config.base import Quat, Scale, TypedCfg, Vec3
from internutopia.core.config.values import check_entity_name, checked_pose


class ObjectCfg(TypedCfg):
    """A scene object of an episode, placed in env-local coordinates.

    ``label`` is the object's semantic class in camera annotations (segmentation, 2D boxes,
    landmarks); ``None`` (the default) labels it by its ``name`` (see ``docs/perception.md``).
    """

    name: str
    type: str
    prim_path: str | None = None
    position: Vec3 = (0.0, 0.0, 0.0)
    orientation: Quat = (1.0, 0.0, 0.0, 0.0)
    scale: Scale = (1.0, 1.0, 1.0)
    label: str | None = None
    #: ``None`` as InternUtopia's objects read it: no rotation, no scaling (its ``UsdObject`` leaves
    #: the pose and scale unset). A ``None`` position is an error: InternUtopia adds the slot's
    #: offset to it before anything is built.
    _none_means: ClassVar[Mapping[str, Any]] = {'orientation': (1.0, 0.0, 0.0, 0.0), 'scale': (1.0, 1.0, 1.0)}

    @field_validator('name')
    @classmethod
    def _usable_name(cls, name: str) -> str:
        return check_entity_name(name, 'object')

    @field_validator('position', 'orientation', 'scale')
    @classmethod
    def _pose_in_range(cls, value: Any, info: ValidationInfo) -> Any:
        # (Also for a subclass that redeclares the field with a plain tuple type.)
        return checked_pose(value, info.field_name or '')


__all__ = ['ObjectCfg']
