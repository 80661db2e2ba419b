"""Base class of every config: strict fields, validated ``update``, and ``type``-based subclassing.

Every config in internutopia rejects unknown fields, in the constructor and in :meth:`BaseCfg.update`,
so a misspelt ``physics_dt`` or an ``enable=False`` on a config without that field fails loudly
instead of being ignored.

Config families that carry a ``type`` (robots, controllers, sensors, tasks, metrics, objects,
rewards) resolve a plain mapping to the config subclass that declares that ``type`` as its default,
so YAML and JSON round-trip to the same classes:

>>> from internutopia.core.config import ControllerCfg
>>> class SpinCfg(ControllerCfg):
...     type: str = 'SpinController'
...     speed: float = 1.0
>>> cfg = ControllerCfg.model_validate({'name': 'spin', 'type': 'SpinController', 'speed': 2.0})
>>> type(cfg).__name__, cfg.speed
('SpinCfg', 2.0)
"""

from __future__ import annotations

import builtins
import math
import types
import typing
from contextvars import ContextVar
from typing import Annotated, Any, ClassVar, Protocol, TypeVar, Union, overload

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator


def _nonzero_quaternion(value: tuple[float, ...] | None) -> tuple[float, ...] | None:
    if value is not None and math.fsum(c * c for c in value) < 1e-12:
        raise ValueError(f'a wxyz quaternion must not be all zeros (it has no rotation to normalize); got {value}')
    return value


def _positive_scale(value: tuple[float, ...] | None) -> tuple[float, ...] | None:
    if value is not None and not all(c > 0 for c in value):
        raise ValueError(f'every scale component must be > 0; got {value}')
    return value


class _Named(Protocol):
    @property
    def name(self) -> str | None: ...


_Item = TypeVar('_Item', bound=_Named)


@overload
def unique_names(items: list[_Item], what: str) -> list[_Item]: ...
@overload
def unique_names(items: None, what: str) -> None: ...
def unique_names(items: list[_Item] | None, what: str) -> list[_Item] | None:
    """``items`` unchanged when their ``name``s are all different, else a ``ValueError`` listing the
    repeated names: two entries of one name would silently replace each other (a robot's
    controllers, sensors; a task's objects, metrics are looked up by name)."""
    if items:
        names = [item.name for item in items]
        repeated = sorted({name for name in names if names.count(name) > 1}, key=str)
        if repeated:
            raise ValueError(f'{what} names must be unique; repeated: {repeated}')
    return items


#: An xyz position (finite, like every float of a config).
Vec3 = tuple[float, float, float]
#: A wxyz quaternion; all zeros is rejected (MuJoCo would silently replace it).
Quat = Annotated[tuple[float, float, float, float], AfterValidator(_nonzero_quaternion)]
#: An xyz scale; every component > 0.
Scale = Annotated[tuple[float, float, float], AfterValidator(_positive_scale)]


def _numeric_mismatch(annotation: Any, value: Any) -> str | None:
    """Why ``value`` cannot stand where ``annotation`` wants a number (``None`` when it can).

    Pydantic's lax mode turns ``True`` into ``1`` and ``'8'`` into ``8``; a config must not: a
    bool or a string where a number belongs is a mistake (a misplaced flag, an unparsed value).
    Containers (tuples, lists, dicts, optionals, unions) are checked item by item.
    """
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return _numeric_mismatch(args[0], value)
    if origin is Union or origin is types.UnionType:
        if value is None:
            return None
        problems = [_numeric_mismatch(arm, value) for arm in args if arm is not type(None)]
        return None if any(p is None for p in problems) else problems[0]
    if annotation is int or annotation is float:
        kind = 'an integer' if annotation is int else 'a number'
        if isinstance(value, (bool, np.bool_)):
            return f'must be {kind}; got the bool {value!r}'
        if isinstance(value, (str, bytes)):
            return f'must be {kind}; got the text {value!r}'
        return None
    if origin in (tuple, list) and isinstance(value, (tuple, list)) and args:
        items = [args[0]] * len(value) if origin is list or args[-1] is Ellipsis else list(args)
        for k, (item, entry) in enumerate(zip(items, value, strict=False)):  # lengths: pydantic's check
            problem = _numeric_mismatch(item, entry)
            if problem is not None:
                return f'item {k} {problem}'
        return None
    if origin is dict and isinstance(value, dict) and len(args) == 2:
        for key, entry in value.items():
            problem = _numeric_mismatch(args[1], entry)
            if problem is not None:
                return f'[{key!r}] {problem}'
    return None


_Cfg = TypeVar('_Cfg', bound='BaseCfg')

_DIRECT_INIT: ContextVar[int | None] = ContextVar('_DIRECT_INIT', default=None)


class BaseCfg(BaseModel):
    """Strict pydantic model: unknown fields are errors, assignments are validated, every float is
    finite, and a number field takes no bool or string (see :func:`_numeric_mismatch`)."""

    model_config = ConfigDict(extra='forbid', validate_assignment=True, protected_namespaces=(), allow_inf_nan=False)
    #: Number fields that also take text (parsed by their own validators, e.g. ``'1/240'`` seconds).
    _text_numbers: ClassVar[tuple[str, ...]] = ()

    @field_validator('*', mode='before')
    @classmethod
    def _numbers_are_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or '')
        if field is None or (info.field_name in cls._text_numbers and isinstance(value, str)):
            return value
        problem = _numeric_mismatch(field.annotation, value)
        if problem is not None:
            raise ValueError(problem)
        return value

    def update(self: _Cfg, **changes: Any) -> _Cfg:
        """Return a validated copy with ``changes`` applied; ``self`` is left untouched.

        Raises:
            ValueError: a key is not a field of this config (the message lists the valid fields),
                or a value fails validation.
        """
        fields = type(self).model_fields
        unknown = sorted(set(changes) - set(fields))
        if unknown:
            raise ValueError(
                f'{type(self).__name__}.update(): unknown field(s) {unknown}; valid fields: {sorted(fields)}'
            )
        values = {name: getattr(self, name) for name in self.model_fields_set}
        values.update(changes)
        return type(self)(**values)


class TypedCfg(BaseCfg):
    """A config family keyed by ``type``; subclasses register themselves by their ``type`` default.

    Each direct subclass of ``TypedCfg`` (``RobotCfg``, ``ControllerCfg``, ...) is the root of a
    family with its own table of ``type`` -> config class.
    """

    type: str
    # (``builtins.type``: in the class body ``type`` is the field.)
    _family_table: ClassVar[dict[str, builtins.type[TypedCfg]]]
    #: Another field that may carry the type instead of ``type`` (InternUtopia's ``reward_type``).
    _type_alias: ClassVar[str | None] = None

    def __init__(self, **data: Any) -> None:
        # A class constructed by name stays that class; only mappings validated into a field
        # (YAML, JSON, nested dicts) are dispatched on their ``type``.
        token = _DIRECT_INIT.set(id(data))
        try:
            self.__pydantic_validator__.validate_python(data, self_instance=self)
        finally:
            _DIRECT_INIT.reset(token)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if TypedCfg in cls.__bases__:
            type.__setattr__(cls, '_family_table', {})
            return
        default = cls.model_fields['type'].default
        if isinstance(default, str):
            # The most derived class declaring a type wins, so user subclasses can refine ours.
            cls._family_table[default] = cls

    @classmethod
    def config_class_for(cls, type_name: str) -> builtins.type[TypedCfg] | None:
        """The config class registered for ``type_name`` in this family, if any."""
        return cls._family_table.get(type_name)

    @model_validator(mode='wrap')
    @classmethod
    def _dispatch_on_type(cls, data: Any, handler: Any) -> Any:
        type_name = data.get('type') if isinstance(data, dict) else None
        if type_name is None and isinstance(data, dict) and cls._type_alias:
            type_name = data.get(cls._type_alias)
        if isinstance(type_name, str) and _DIRECT_INIT.get() != id(data):
            target = cls._family_table.get(type_name) if hasattr(cls, '_family_table') else None
            if target is not None and target is not cls and issubclass(target, cls):
                return target.model_validate(data)
        return handler(data)
