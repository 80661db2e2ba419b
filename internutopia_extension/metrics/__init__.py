"""Built-in metrics; importing this package registers them.

InternUtopia's package exports two of them by name, and so does this one:

>>> from internutopia_extension.metrics import RecordingMetric, TraveledDistanceMetric
>>> TraveledDistanceMetric.__name__, RecordingMetric.__name__
('TraveledDistanceMetric', 'RecordingMetric')
"""

from internutopia_extension.metrics import manipulation, navigation, recording, traveled_distance  # noqa: F401
from internutopia_extension.metrics.recording import RecordingMetric
from internutopia_extension.metrics.traveled_distance import TraveledDistanceMetric

__all__ = ['RecordingMetric', 'TraveledDistanceMetric']
