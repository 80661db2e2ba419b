"""Base class of every config: checked values, validated ``update``, unknown keys reported, and
``type``-based subclassing.

Unknown keys follow InternUtopia, never silently (see :mod:`internutopia.core.config.unknown_keys`):
most classes ignore them, ``ControllerCfg``, ``TaskCfg``, ``RewardCfg`` and ``DistributionCfg``
keep them as attributes, each with a warning that names the key and the nearest declared one;
strict mode (and ``internutopia validate``) makes them errors.

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

``None`` (InternUtopia types most of its fields ``Optional``) is read through one table per class,
``_none_means``: where InternUtopia's code gives ``None`` a meaning, the table says which value it
stands for, and that value replaces it when the config is built or a field is assigned, so nothing
downstream ever sees ``None``. ``None`` for any other field that does not declare ``None`` is an
error naming the field and what it takes (InternUtopia would fail on it later, or read it as
something no one means, such as a robot named ``'None'``):

>>> from internutopia.core.config import SimConfig
>>> SimConfig(headless=None).headless
False
>>> SimConfig(backend=None)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for SimConfig
backend
  backend must not be None: give a string; left out, it is 'mujoco' ...
"""

from __future__ import annotations

import builtins
import copy
import functools
import inspect
import types
import typing
import weakref
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, TypeVar, Union, overload

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from internutopia.core.config.unknown_keys import current_mode, error_message, warn_unknown
from internutopia.core.config.values import (
    Quat,
    Scale,
    Vec3,
    expected_values,
    numeric_mismatch,
    tuple_length_problem,
    wants_numbers,
)


class _Named(Protocol):
    @property
    def name(self) -> str | None: ...


_Item = TypeVar('_Item', bound=_Named)


def _name_or_type(item: Any) -> Any:
    """The name an entry goes by: its ``name``, or its ``type`` where it has none (a metric's)."""
    return item.name if item.name is not None else getattr(item, 'type', None)


@overload
def unique_names(items: list[_Item], what: str) -> list[_Item]: ...
@overload
def unique_names(items: None, what: str) -> None: ...
def unique_names(items: list[_Item] | None, what: str) -> list[_Item] | None:
    """``items`` unchanged when the names they go by are all different, else a ``ValueError``
    listing the repeated names: two entries of one name would silently replace each other (a
    robot's controllers, sensors; a task's objects, metrics are looked up by name). An entry
    without a name goes by its type (a metric is reported under it)."""
    if items:
        names = [_name_or_type(item) for item in items]
        repeated = sorted({name for name in names if names.count(name) > 1}, key=str)
        if repeated:
            unnamed = any(item.name is None for item in items)
            raise ValueError(f'{what} names must be unique; repeated: {repeated}'
                             + (' (an entry without a name goes by its type: give each of them a name)' if unnamed else ''))
    return items


_Cfg = TypeVar('_Cfg', bound='BaseCfg')

#: Key of the validation context that marks the mapping a class was constructed from by name.
_DIRECT_INIT_KEY = 'internutopia_direct_init'


#: ``class -> (its fields dict, its keys)``: computed once per class (again if its fields change).
_KNOWN_KEYS: dict[builtins.type[BaseModel], tuple[dict, frozenset[str]]] = {}


def known_keys(cls: builtins.type[BaseModel]) -> frozenset[str]:
    """The keys a config class declares: its field names and their aliases."""
    fields = cls.model_fields
    cached = _KNOWN_KEYS.get(cls)
    if cached is not None and cached[0] is fields:
        return cached[1]
    keys = set(fields)
    for field in fields.values():
        for alias in (field.alias, field.validation_alias):
            if isinstance(alias, str):
                keys.add(alias)
    _KNOWN_KEYS[cls] = (fields, frozenset(keys))
    return _KNOWN_KEYS[cls][1]


def _errors_of(exc: ValidationError, left_out: frozenset[str] = frozenset()) -> list[InitErrorDetails]:
    """``exc``'s errors, re-raisable in another ``ValidationError`` (type and message kept), less the
    'missing' errors of the keys in ``left_out`` (reported otherwise)."""
    out: list[InitErrorDetails] = []
    for error in exc.errors():
        if error['type'] == 'missing' and len(error['loc']) == 1 and error['loc'][0] in left_out:
            continue
        message = error['msg'].removeprefix('Value error, ')
        out.append(InitErrorDetails(type=PydanticCustomError(error['type'], '{message}', {'message': message}),
                                    loc=error['loc'], input=error.get('input')))
    return out


def _unknown_key_errors(owner: str, unknown: dict[str, Any], known: frozenset[str],
                        hints: dict[str, str]) -> list[InitErrorDetails]:
    """One ``extra_forbidden`` error per unknown key, naming the nearest declared keys (or saying
    its hint)."""
    return [InitErrorDetails(type=PydanticCustomError('extra_forbidden', '{message}',
                                                      {'message': error_message(owner, key, known, hints.get(key))}),
                             loc=(key,), input=value) for key, value in unknown.items()]


class _Meaning:
    """A marker in a ``_none_means`` table (its repr is its name)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


#: In a ``_none_means`` table: ``None`` stands for the field's default (a subclass's own default, if
#: it declares one).
FIELD_DEFAULT: Any = _Meaning('FIELD_DEFAULT')
#: In a ``_none_means`` table: ``None`` is an error for this field (drops a base class's entry).
NONE_REJECTED: Any = _Meaning('NONE_REJECTED')
#: What :meth:`BaseCfg._none_for` answers for a field where ``None`` is an error.
_REJECT: Any = _Meaning('REJECT')


@functools.lru_cache(maxsize=1024)
def _takes_none(annotation: Any) -> bool:
    """Whether a field of type ``annotation`` holds ``None`` as a value of its own."""
    if annotation is Any or annotation is object or annotation is None or annotation is type(None):
        return True
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _takes_none(args[0])
    if origin is Union or origin is types.UnionType:
        return any(_takes_none(arg) for arg in args)
    if origin is typing.Literal:
        return None in args
    return False


def takes_none(annotation: Any) -> bool:
    """Whether a field of type ``annotation`` holds ``None`` as a value of its own (``X | None``, ``Any``)."""
    try:
        return _takes_none(annotation)
    except TypeError:  # an unhashable annotation (e.g. one carrying a dict): no None declared there
        return False


#: ``class -> its merged _none_means table`` (see :meth:`BaseCfg.none_meanings`); classes made at
#: run time (in a function, or rebuilt by unpickling) are not kept alive by it.
_NONE_TABLES: weakref.WeakKeyDictionary[builtins.type[BaseModel], dict[str, Any]] = weakref.WeakKeyDictionary()


class BaseCfg(BaseModel):
    """A config model: assignments are validated, every float is finite, a number field takes no
    bool, text or time (see :func:`~internutopia.core.config.values.numeric_mismatch`), and an
    unknown key is ignored with a warning (an error in strict mode)."""

    model_config = ConfigDict(extra='ignore', validate_assignment=True, protected_namespaces=(), allow_inf_nan=False)
    #: Number fields that also take text (parsed by their own validators, e.g. ``'1/240'`` seconds).
    _text_numbers: ClassVar[tuple[str, ...]] = ()
    #: What ``None`` given for a field stands for, where InternUtopia types the field ``Optional``
    #: and its code gives ``None`` a meaning: ``{field: value}`` (:data:`FIELD_DEFAULT`: the
    #: field's default). Each class lists its own fields; subclasses inherit the entries and may
    #: change one, or drop it with :data:`NONE_REJECTED` (see :meth:`none_meanings`).
    _none_means: ClassVar[Mapping[str, Any]] = {}
    #: Where a kept unknown key is kept, in its warning (``None``: as an attribute).
    _unknown_kept_where: ClassVar[str | None] = None

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        own = vars(cls).get('_none_means') or {}
        unknown = sorted(set(own) - set(cls.model_fields))
        if unknown:
            raise TypeError(f'{cls.__name__}._none_means names fields it does not have: {unknown}')

    @classmethod
    def none_meanings(cls) -> Mapping[str, Any]:
        """``{field: the value None stands for}``: this class's ``_none_means`` over its bases'."""
        table = _NONE_TABLES.get(cls)
        if table is None:
            table = {}
            for klass in reversed(cls.__mro__):
                for name, meaning in (vars(klass).get('_none_means') or {}).items():
                    if meaning is NONE_REJECTED:
                        table.pop(name, None)
                    else:
                        table[name] = meaning
            _NONE_TABLES[cls] = table
        return table

    @classmethod
    def _none_for(cls, name: str) -> Any:
        """What ``None`` given for field ``name`` becomes: the value of the table (a fresh copy),
        ``None`` itself where the field declares ``None``, or :data:`_REJECT`."""
        meaning = cls.none_meanings().get(name, _REJECT)
        if meaning is FIELD_DEFAULT:
            return cls.model_fields[name].get_default(call_default_factory=True)
        if meaning is not _REJECT:
            return copy.deepcopy(meaning)
        return None if takes_none(cls.model_fields[name].annotation) else _REJECT

    @classmethod
    def _none_error(cls, name: str) -> InitErrorDetails:
        """The error of ``None`` given for field ``name``, which does not take it."""
        field = cls.model_fields[name]
        message = f'{name} must not be None: give {expected_values(field.annotation, field.metadata)}'
        if not field.is_required():
            try:
                default = repr(field.get_default(call_default_factory=True))
            except Exception:  # a factory of the validated data: no default to show
                default = ''
            message += f'; left out, it is {default}' if 0 < len(default) <= 60 else '; or leave it out for its default'
        return InitErrorDetails(type=PydanticCustomError('none_not_allowed', '{message}', {'message': message}),
                                loc=(name,), input=None)

    def __setattr__(self, name: str, value: Any) -> None:
        if value is None and name in type(self).model_fields:
            value = type(self)._none_for(name)
            if value is _REJECT:
                raise ValidationError.from_exception_data(type(self).__name__, [type(self)._none_error(name)])
        super().__setattr__(name, value)

    @field_validator('*', mode='before')
    @classmethod
    def _numbers_are_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or '')
        if field is None or not wants_numbers(field.annotation) or (info.field_name in cls._text_numbers and isinstance(value, str)):
            return value
        problem = tuple_length_problem(info.field_name or '', field.annotation, value, field.metadata) or numeric_mismatch(field.annotation, value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @classmethod
    def _dispatch_target(cls, data: dict, info: ValidationInfo) -> builtins.type[BaseCfg] | None:
        """The class that validates ``data`` instead of ``cls`` (``None``: ``cls`` itself)."""
        return None

    @model_validator(mode='wrap')
    @classmethod
    def _validate_mapping(cls, data: Any, handler: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict):
            return handler(data)
        target = cls._dispatch_target(data, info)
        if target is not None:
            return target.model_validate(data)
        errors: list[InitErrorDetails] = []
        data, rejected = cls._nones_resolved(data)
        errors += [cls._none_error(key) for key in rejected]
        known = known_keys(cls)
        unknown = [key for key in data if key not in known]
        if unknown:
            mode = 'error' if cls.model_config.get('extra') == 'forbid' else current_mode()
            if mode == 'error':
                # Every problem of this mapping at once: its unknown keys and its other fields' errors.
                errors += _unknown_key_errors(cls.__name__, {key: data[key] for key in unknown}, known,
                                              cls._unknown_key_hints(data, unknown))
                data = {key: value for key, value in data.items() if key in known}
            elif mode == 'warn':
                warn_unknown(cls.__name__, unknown, known, kept=cls.model_config.get('extra') == 'allow',
                             kept_where=cls._unknown_kept_where, hints=cls._unknown_key_hints(data, unknown))
        if not errors:
            return handler(data)
        try:
            handler(data)
        except ValidationError as exc:
            errors += _errors_of(exc, left_out=frozenset(rejected))
        raise ValidationError.from_exception_data(cls.__name__, errors)

    @classmethod
    def _unknown_key_hints(cls, data: dict, unknown: list[str]) -> dict[str, str]:
        """What to do instead, for those of the ``unknown`` keys of ``data`` where more can be said
        than the nearest declared key."""
        return {}

    @classmethod
    def _nones_resolved(cls, data: dict) -> tuple[dict, list[str]]:
        """``data`` with each ``None`` of a field replaced by what it stands for (a new dict; the
        caller's is left as it is), less the fields where ``None`` is an error, and those fields."""
        fields = cls.model_fields
        nones = [key for key, value in data.items() if value is None and key in fields]
        if not nones:
            return data, []
        resolved, rejected = dict(data), []
        for key in nones:
            value = cls._none_for(key)
            if value is _REJECT:
                del resolved[key]
                rejected.append(key)
            else:
                resolved[key] = value
        return resolved, rejected

    def update(self: _Cfg, **changes: Any) -> _Cfg:
        """Return a validated copy with ``changes`` applied; ``self`` is left untouched.

        The copy shares nothing with ``self``: what it keeps of ``self`` is deep-copied (InternUtopia's
        ``model_copy(update=..., deep=True)``), so editing the copy's robots, lists or sub-configs
        leaves ``self`` as it was. The values given in ``changes`` are taken as given, as there.

        A key this class does not declare is handled as in the constructor (ignored or kept, with a
        warning; an error in strict mode). Keys the config already kept travel with the copy (and
        may be changed) without being reported again.

        Raises:
            pydantic.ValidationError: a value fails validation (or, in strict mode, a key is unknown;
                the message names the nearest valid fields).
        """
        fields = type(self).model_fields
        # As InternUtopia's ``model_copy(update=changes, deep=True)``: the values the copy keeps
        # (fields and kept keys) are deep copies, so editing the copy never changes ``self``; the
        # values of ``changes`` go in as given.
        memo: dict[int, Any] = {}
        kept = {key: value if key in changes else copy.deepcopy(value, memo)
                for key, value in (self.model_extra or {}).items()}
        values = {name: copy.deepcopy(getattr(self, name), memo)
                  for name in self.model_fields_set if name in fields and name not in changes}
        for key, value in changes.items():
            if key in kept:
                kept[key] = value
            else:
                values[key] = value
        result = type(self)(**values)
        if kept and result.__pydantic_extra__ is not None:
            result.__pydantic_extra__.update(kept)
        return result


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
        # (YAML, JSON, nested dicts) are dispatched on their ``type``. The mark travels in the
        # validation context (not in module state), so a subclass defined in a script pickles by
        # value (Ray ships such classes with cloudpickle).
        self.__pydantic_validator__.validate_python(data, self_instance=self, context={_DIRECT_INIT_KEY: id(data)})

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if TypedCfg in cls.__bases__:
            type.__setattr__(cls, '_family_table', {})
            return
        default = cls.model_fields['type'].default
        # The most derived class declaring a type wins, so user subclasses can refine ours. Only a
        # class that declares ``type`` itself registers: a class rebuilt by unpickling (cloudpickle
        # sends a script's classes by value, first as an empty shell of its bases) must not take
        # over its parent's type.
        if isinstance(default, str) and 'type' in inspect.get_annotations(cls):
            cls._family_table[default] = cls

    @classmethod
    def config_class_for(cls, type_name: str) -> builtins.type[TypedCfg] | None:
        """The config class registered for ``type_name`` in this family, if any."""
        return cls._family_table.get(type_name)

    @classmethod
    def _type_of(cls, data: dict) -> Any:
        """The type ``data`` names (``type``, else the family's alias of it)."""
        type_name = data.get('type')
        if type_name is None and cls._type_alias:
            type_name = data.get(cls._type_alias)
        return type_name

    @classmethod
    def _registered_subclass(cls, type_name: Any) -> builtins.type[TypedCfg] | None:
        """The subclass of ``cls`` registered for ``type_name`` (``None``: none, or ``cls`` itself)."""
        if not isinstance(type_name, str) or not hasattr(cls, '_family_table'):
            return None
        target = cls._family_table.get(type_name)
        return target if target is not None and target is not cls and issubclass(target, cls) else None

    @classmethod
    def _unknown_key_hints(cls, data: dict, unknown: list[str]) -> dict[str, str]:
        # A plain MetricCfg(type='RecordingMetric', robot_name=...): built by name, the class stays
        # MetricCfg and drops the key, which the type's own config class declares.
        type_name = cls._type_of(data)
        target = cls._registered_subclass(type_name)
        if target is None:
            return {}
        fields = known_keys(target)
        return {key: (f'it is a field of {target.__name__}, the config class of type {type_name!r}: build '
                      f'{target.__name__}(...) (from {target.__module__}) to set it')
                for key in unknown if key in fields}

    @classmethod
    def _dispatch_target(cls, data: dict, info: ValidationInfo) -> builtins.type[BaseCfg] | None:
        context = info.context
        if isinstance(context, dict) and context.get(_DIRECT_INIT_KEY) == id(data):
            return None
        return cls._registered_subclass(cls._type_of(data))


__all__ = ['FIELD_DEFAULT', 'NONE_REJECTED', 'BaseCfg', 'Quat', 'Scale', 'TypedCfg', 'Vec3', 'config_families', 'known_keys', 'takes_none',
           'unique_names']


def config_families() -> dict[str, builtins.type[TypedCfg]]:
    """The roots of the ``type``-keyed config families (``RobotCfg``, ``TaskCfg``, ...), by name:
    each holds its family's table of ``type`` -> config class."""
    return {root.__name__: root for root in TypedCfg.__subclasses__() if '_family_table' in root.__dict__}

