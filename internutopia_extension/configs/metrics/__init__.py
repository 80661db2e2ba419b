"""Config classes of the built-in metrics."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from internutopia.core.config import MetricCfg


class TraveledDistanceMetricCfg(MetricCfg):
    """Path length of a robot's base over the episode, in metres.

    ``metric_config={'robot_name': 'h1'}`` picks the robot (default: the episode's first robot).
    """

    type: str = 'TraveledDistanceMetric'
    name: Optional[str] = 'traveled_distance'
    metric_config: dict[str, Any] = Field(default_factory=dict)


__all__ = ['TraveledDistanceMetricCfg']
