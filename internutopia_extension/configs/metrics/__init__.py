"""Config classes of the built-in metrics.

- :mod:`.traveled_distance_metric`: ``TraveledDistanceMetricCfg`` (InternUtopia's path);
- :mod:`.recording_metric`: ``RecordingMetricCfg`` (InternUtopia's path);
- :mod:`.navigation_metrics`: success, SPL, distance to goal, steps and collisions of point-goal navigation;
- :mod:`.manipulation_metrics`: success, object distance to goal and dropped, of pick and place.
"""

from internutopia_extension.configs.metrics.manipulation_metrics import (
    DroppedMetricCfg,
    ObjectDistanceToGoalMetricCfg,
    PickPlaceSuccessMetricCfg,
)
from internutopia_extension.configs.metrics.navigation_metrics import (
    CollisionCountMetricCfg,
    DistanceToGoalMetricCfg,
    SPLMetricCfg,
    StepsMetricCfg,
    SuccessMetricCfg,
)
from internutopia_extension.configs.metrics.recording_metric import RecordingMetricCfg
from internutopia_extension.configs.metrics.traveled_distance_metric import TraveledDistanceMetricCfg

__all__ = [
    'CollisionCountMetricCfg', 'DistanceToGoalMetricCfg', 'DroppedMetricCfg', 'ObjectDistanceToGoalMetricCfg',
    'PickPlaceSuccessMetricCfg', 'RecordingMetricCfg', 'SPLMetricCfg', 'StepsMetricCfg', 'SuccessMetricCfg',
    'TraveledDistanceMetricCfg',
]
