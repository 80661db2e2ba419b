"""``TraveledDistanceMetricCfg``: path length of a robot's base (InternUtopia's module path)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from internutopia.core.config import MetricCfg


class TraveledDistanceMetricCfg(MetricCfg):
    """Path length of a robot's base over the episode, in metres.

    ``robot_name`` (InternUtopia's field, or ``metric_config={'robot_name': 'h1'}``) picks the
    robot; default: the episode's first robot.
    """

    type: str = 'TraveledDistanceMetric'
    name: str | None = 'traveled_distance_metric'
    robot_name: str | None = None
    metric_config: dict[str, Any] = Field(default_factory=dict)


__all__ = ['TraveledDistanceMetricCfg']
