"""Config classes of the pick-and-place metrics: success, the object's distance to its goal, dropped."""

from __future__ import annotations

from pydantic import Field

from internutopia.core.config import MetricCfg
from internutopia.core.config.metric import MetricOptions, MetricOptionsCfg


# Manipulation metrics (read the ManipulationTask of the slot).
class PickPlaceSuccessMetricCfg(MetricCfg):
    """``True`` when a pick-and-place episode ended with the object resting at its goal, let go."""

    type: str = 'PickPlaceSuccessMetric'
    name: str | None = 'success'
    metric_config: MetricOptions = Field(default_factory=dict)
    #: (``robot_name`` only.)
    _options = MetricOptionsCfg


class ObjectDistanceToGoalMetricCfg(MetricCfg):
    """Distance (m, 3-D) from the target object to ``goal_position`` when the episode ends."""

    type: str = 'ObjectDistanceToGoalMetric'
    name: str | None = 'distance_to_goal'
    metric_config: MetricOptions = Field(default_factory=dict)
    #: (``robot_name`` only.)
    _options = MetricOptionsCfg


class DroppedMetricCfg(MetricCfg):
    """``True`` if the target object fell out of the closed gripper after being lifted."""

    type: str = 'DroppedMetric'
    name: str | None = 'dropped'
    metric_config: MetricOptions = Field(default_factory=dict)
    #: (``robot_name`` only.)
    _options = MetricOptionsCfg


__all__ = ['DroppedMetricCfg', 'ObjectDistanceToGoalMetricCfg', 'PickPlaceSuccessMetricCfg']
