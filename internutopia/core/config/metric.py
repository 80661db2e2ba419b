"""Metric configs (InternUtopia's ``internutopia.core.config.metric``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from internutopia.core.config.base import TypedCfg


class MetricCfg(TypedCfg):
    """A metric computed over an episode and reported when it ends."""

    type: str
    name: str | None = None
    metric_config: dict[str, Any] = Field(default_factory=dict)


__all__ = ['MetricCfg']
