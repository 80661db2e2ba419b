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

from contextvars import ContextVar
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator

#: An xyz position or scale.
Vec3 = tuple[float, float, float]
#: A wxyz quaternion.
Quat = tuple[float, float, float, float]


_DIRECT_INIT: ContextVar[int | None] = ContextVar('_DIRECT_INIT', default=None)


class BaseCfg(BaseModel):
    """Strict pydantic model: unknown fields are errors, assignments are validated."""

    model_config = ConfigDict(extra='forbid', validate_assignment=True, protected_namespaces=())

    def update(self, **changes: Any) -> 'BaseCfg':
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
    _family_table: ClassVar[dict[str, type['TypedCfg']]]
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
    def config_class_for(cls, type_name: str) -> type['TypedCfg'] | None:
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
