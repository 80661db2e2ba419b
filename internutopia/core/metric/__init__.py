"""Metrics: accumulated every step over all slots that have them, reported when an episode ends."""

from internutopia.core.metric.base import BaseMetric

__all__ = ['BaseMetric']
