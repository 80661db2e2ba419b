"""Scene object configs (InternUtopia's ``internutopia.core.config.object``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ValidationInfo, field_validator

from internutopia.core.config.base import BaseCfg, Quat, Scale, TypedCfg, Vec3
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


def _or_default(config: Any, name: str) -> tuple[float, ...]:
    value = getattr(config, name, None)
    if value is None:
        cls = type(config)
        if not isinstance(config, BaseCfg):  # (a config of InternUtopia's kind: ObjectCfg's meaning)
            value = _NONE_DEFAULTS[name]
        elif name in cls.none_meanings():
            value = cls._none_for(name)  # (a copy; FIELD_DEFAULT: the class's default)
        else:  # (a class whose validation rejects None, e.g. the cubes' scale)
            raise ValueError(f'object {getattr(config, "name", "?")!r} ({cls.__name__}): {name} must not be None')
    return tuple(float(v) for v in value)


_NONE_DEFAULTS: Mapping[str, tuple[float, ...]] = ObjectCfg._none_means


def object_orientation(config: Any) -> tuple[float, ...]:
    """The wxyz ``orientation`` of an object config, ``None`` read as its class's validation reads it
    (identity for :class:`ObjectCfg`; ``ValueError`` where the class rejects ``None``). For readers of
    a config built without validation (``model_copy(update=...)``, ``model_construct``), which may
    hold ``None``; the config is not changed.

    >>> object_orientation(ObjectCfg.model_construct(name='box', type='Box', orientation=None))
    (1.0, 0.0, 0.0, 0.0)
    """
    return _or_default(config, 'orientation')


def object_scale(config: Any) -> tuple[float, ...]:
    """The ``scale`` of an object config, ``None`` read as its class says (``(1, 1, 1)`` for
    :class:`ObjectCfg`); see :func:`object_orientation`.

    >>> object_scale(ObjectCfg(name='box', type='Box').model_copy(update={'scale': None}))
    (1.0, 1.0, 1.0)
    """
    return _or_default(config, 'scale')


__all__ = ['ObjectCfg', 'object_orientation', 'object_scale']
