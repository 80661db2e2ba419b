"""Metric configs (InternUtopia's ``internutopia.core.config.metric``).

``metric_config`` takes what InternUtopia's takes (``Optional[Union[Dict, BaseModel]]``), and a
metric written InternUtopia's way receives it as given, as there (``self.metric_config``); ``None``
is ``{}`` (no options):

>>> from pydantic import BaseModel
>>> class Thresholds(BaseModel):
...     success_distance: float = 3.0
>>> MetricCfg(type='MyMetric', metric_config=Thresholds()).metric_config
Thresholds(success_distance=3.0)
>>> MetricCfg(type='MyMetric', metric_config=None).metric_config
{}

The built-in metrics read their options by key: their configs (``TraveledDistanceMetricCfg``, the
navigation and manipulation metrics) declare ``metric_config`` as :data:`MetricOptions`, which
takes a model as the dict of its fields, and declare the options they read (``_options``, a
:class:`MetricOptionsCfg`), so a bad value fails when the config is built, naming it, and an
option they do not read is an unknown key (a warning; an error in strict mode):

>>> class WindowOptions(MetricOptionsCfg):
...     window: int = 10
>>> class WindowMetricCfg(MetricCfg):
...     type: str = 'WindowMetric'
...     metric_config: MetricOptions = Field(default_factory=dict)
...     _options = WindowOptions
>>> WindowMetricCfg(metric_config={'window': 'long'})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for WindowMetricCfg
metric_config.window
  Value error, must be an integer; got the text 'long' ...
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainValidator, ValidationInfo, field_validator

from internutopia.core.config.base import FIELD_DEFAULT, BaseCfg, TypedCfg


def _dict_of_options(value: Any) -> dict[str, Any]:
    """``value`` as a dict of options: a copy of a mapping with text keys."""
    if not isinstance(value, Mapping):
        raise ValueError(f'metric_config must be a dict (or a pydantic model); got {type(value).__name__} {value!r}')
    keys = [key for key in value if not isinstance(key, str)]
    if keys:
        raise ValueError(f'metric_config keys must be strings; got {keys}')
    return dict(value)


def _dict_or_model(value: Any) -> Any:
    # A model is kept as it is (the user's own class, read by attribute); a mapping becomes a dict.
    return value if isinstance(value, BaseModel) else _dict_of_options(value)


def _model_as_options(value: Any) -> Any:
    return value.model_dump() if isinstance(value, BaseModel) else value


#: ``metric_config`` of :class:`MetricCfg`: a dict of options, or a pydantic model, which the metric
#: receives as it was given (InternUtopia's ``Union[Dict, BaseModel]``). Written to YAML as its
#: fields, so it reads back as a dict. (Typed ``Any`` for the type checker: code that reads options
#: from any metric config reads both forms through :meth:`MetricCfg.metric_option`.)
MetricConfig = Annotated[Any, PlainValidator(_dict_or_model)]
#: ``metric_config`` of a built-in metric, which reads its options by key: a dict; a pydantic model
#: given instead becomes the dict of its fields (``model_dump()``; the model is left as it is).
MetricOptions = Annotated[dict[str, Any], BeforeValidator(_model_as_options)]


class MetricOptionsCfg(BaseCfg):
    """The options a built-in metric reads from its ``metric_config``, declared so they are checked
    when the config is built (``MetricCfg._options`` names a subclass): a value of the wrong kind
    is an error naming ``metric_config.<option>``, and an option the metric does not read is an
    unknown key (kept in ``metric_config``, as InternUtopia keeps whatever it holds, with an
    :class:`~internutopia.core.config.unknown_keys.UnknownConfigKeyWarning`; an error in strict
    mode and in ``internutopia validate``).

    ``robot_name`` picks the robot a metric measures (default: the task's ``robot_name``, else its
    first robot).
    """

    model_config = ConfigDict(extra='allow')
    _unknown_kept_where: ClassVar[str | None] = ("kept in metric_config, as InternUtopia keeps whatever it holds "
                                                 '(the metric does not read it)')

    robot_name: str | None = None


class MetricCfg(TypedCfg):
    """A metric computed over an episode and reported when it ends."""

    type: str
    name: str | None = None
    metric_config: MetricConfig = Field(default_factory=dict)
    #: ``metric_config=None`` is ``{}``: no options (InternUtopia's default; its metrics never
    #: require it).
    _none_means: ClassVar[Mapping[str, Any]] = {'metric_config': FIELD_DEFAULT}
    #: The options this metric reads from ``metric_config`` (a :class:`MetricOptionsCfg`
    #: subclass), checked when the config is built; ``None``: any dict or model, as InternUtopia's.
    _options: ClassVar[builtins.type[BaseCfg] | None] = None
    #: Whether the metric measures the one robot of a one-robot task whatever its ``robot_name``
    #: says (checked when a task config is built: :mod:`~internutopia.core.config.task.robot_names`).
    any_robot_when_alone: ClassVar[bool] = False

    @classmethod
    def nested_model(cls, field: str) -> builtins.type[BaseModel] | None:
        """The config class that checks the mapping of ``field`` where its annotation does not say
        (``metric_config``: :attr:`_options`); for messages that list its keys."""
        return cls._options if field == 'metric_config' else None

    @field_validator('metric_config')
    @classmethod
    def _declared_options(cls, value: Any, info: ValidationInfo) -> Any:
        options = cls._options
        if options is None and isinstance(info.data.get('type'), str):
            # A plain MetricCfg(type='CollisionCountMetric', ...): the options of that type's class.
            target = cls.config_class_for(info.data['type'])
            options = getattr(target, '_options', None)
        if options is None or not isinstance(value, dict):
            return value
        checked = options.model_validate(value)  # (its errors are reported at metric_config.<key>)
        extra = checked.model_extra or {}
        return {key: getattr(checked, key) if key in options.model_fields else extra.get(key, item)
                for key, item in value.items()}

    def metric_option(self, key: str, default: Any = None) -> Any:
        """The option ``key`` of ``metric_config`` (a dict's key, or a model's field), else ``default``."""
        options = self.metric_config
        if isinstance(options, BaseModel):
            return getattr(options, key, default)
        return options.get(key, default) if isinstance(options, Mapping) else default


__all__ = ['MetricCfg', 'MetricConfig', 'MetricOptions', 'MetricOptionsCfg']
