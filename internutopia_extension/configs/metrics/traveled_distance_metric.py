"""InternUtopia's module path of ``TraveledDistanceMetricCfg`` (defined in :mod:`internutopia_extension.configs.metrics`)."""

from internutopia_extension.configs.metrics import TraveledDistanceMetricCfg

__all__ = ['TraveledDistanceMetricCfg']
