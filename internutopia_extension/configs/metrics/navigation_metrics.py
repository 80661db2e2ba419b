"""Config classes of the point-goal navigation metrics: success, SPL, distance to goal, steps, collisions."""

from __future__ import annotations

from pydantic import Field, field_validator

from internutopia.core.config import MetricCfg
from internutopia.core.config.metric import MetricOptions, MetricOptionsCfg
from internutopia.core.config.values import check_steps


class NavigationMetricOptions(MetricOptionsCfg):
    """``metric_config`` of the navigation metrics: ``robot_name``, the robot measured (default: the
    task's ``robot_name``, else its first robot)."""


class CollisionCountMetricOptions(NavigationMetricOptions):
    """``metric_config`` of :class:`CollisionCountMetricCfg`: also ``release_steps``, the env steps
    without contact that end a collision (1..10**9, default 12)."""

    release_steps: int = 12

    @field_validator('release_steps')
    @classmethod
    def _release_steps_positive(cls, value: int) -> int:
        return check_steps(value, 'release_steps')


# Point-goal navigation metrics. Each reads the episode's ``goal`` (and ``success_distance``,
# ``shortest_path_length``) from its task config and follows ``metric_config['robot_name']``
# (default: the task's ``robot_name``, else its first robot). Distances are xy, in metres.
class SuccessMetricCfg(MetricCfg):
    """``True`` when the episode ends with the robot closer than ``success_distance`` to the goal."""

    type: str = 'SuccessMetric'
    name: str | None = 'success'
    metric_config: MetricOptions = Field(default_factory=dict)
    _options = NavigationMetricOptions


class SPLMetricCfg(MetricCfg):
    """Success weighted by path length: ``success * L / max(P, L)``.

    ``L`` is the task's ``shortest_path_length`` (straight line start -> goal when ``None``), ``P``
    the xy path length the robot's base travelled.
    """

    type: str = 'SPLMetric'
    name: str | None = 'spl'
    metric_config: MetricOptions = Field(default_factory=dict)
    _options = NavigationMetricOptions


class DistanceToGoalMetricCfg(MetricCfg):
    """xy distance (m) from the robot's base to the goal when the episode ends."""

    type: str = 'DistanceToGoalMetric'
    name: str | None = 'distance_to_goal'
    metric_config: MetricOptions = Field(default_factory=dict)
    _options = NavigationMetricOptions


class StepsMetricCfg(MetricCfg):
    """Number of env steps the episode ran."""

    type: str = 'StepsMetric'
    name: str | None = 'steps'
    metric_config: MetricOptions = Field(default_factory=dict)
    _options = NavigationMetricOptions


class CollisionCountMetricCfg(MetricCfg):
    """Number of collisions: onsets of contact between the robot and anything but the floor.

    A collision starts on a step where some geom of the robot touches a non-floor geom (scene,
    object, another robot) after a step where none did. Floor: planes, height fields, and contacts
    with static geoms whose normal is within ~25 degrees of vertical (floors made of boxes/meshes).
    A collision ends after ``metric_config['release_steps']`` (default 12, at least 1) steps without
    contact, so chattering against a wall counts once.
    """

    type: str = 'CollisionCountMetric'
    name: str | None = 'collisions'
    metric_config: MetricOptions = Field(default_factory=dict)
    _options = CollisionCountMetricOptions


__all__ = ['CollisionCountMetricCfg', 'CollisionCountMetricOptions', 'DistanceToGoalMetricCfg', 'NavigationMetricOptions',
           'SPLMetricCfg', 'StepsMetricCfg', 'SuccessMetricCfg']
