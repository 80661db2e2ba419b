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
takes a model as the dict of its fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, Field, PlainValidator

from internutopia.core.config.base import FIELD_DEFAULT, TypedCfg


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


class MetricCfg(TypedCfg):
    """A metric computed over an episode and reported when it ends."""

    type: str
    name: str | None = None
    metric_config: MetricConfig = Field(default_factory=dict)
    #: ``metric_config=None`` is ``{}``: no options (InternUtopia's default; its metrics never
    #: require it).
    _none_means: ClassVar[Mapping[str, Any]] = {'metric_config': FIELD_DEFAULT}

    def metric_option(self, key: str, default: Any = None) -> Any:
        """The option ``key`` of ``metric_config`` (a dict's key, or a model's field), else ``default``."""
        options = self.metric_config
        if isinstance(options, BaseModel):
            return getattr(options, key, default)
        return options.get(key, default) if isinstance(options, Mapping) else default


__all__ = ['MetricCfg', 'MetricConfig', 'MetricOptions']
