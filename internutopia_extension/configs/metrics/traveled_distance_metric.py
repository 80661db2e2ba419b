"""``TraveledDistanceMetricCfg``: path length of a robot's base (InternUtopia's module path)."""

from __future__ import annotations

from pydantic import Field

from internutopia.core.config import MetricCfg
from internutopia.core.config.metric import MetricOptions, MetricOptionsCfg


class TraveledDistanceMetricCfg(MetricCfg):
    """Path length of a robot's base over the episode, in metres.

    ``robot_name`` (InternUtopia's field, or ``metric_config={'robot_name': 'h1'}``) picks the
    robot; default: the episode's first robot. A task config checks, when it is built,
    that the name is one of its robots (a ``ValueError`` naming them).
    """

    type: str = 'TraveledDistanceMetric'
    name: str | None = 'traveled_distance_metric'
    robot_name: str | None = None
    metric_config: MetricOptions = Field(default_factory=dict)
    #: (``robot_name`` only.)
    _options = MetricOptionsCfg


__all__ = ['TraveledDistanceMetricCfg']
