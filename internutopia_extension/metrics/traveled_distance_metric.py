"""InternUtopia's module path of ``TraveledDistanceMetric`` (see ``traveled_distance``)."""

from internutopia_extension.metrics.traveled_distance import TraveledDistanceMetric

__all__ = ['TraveledDistanceMetric']
