"""InternUtopia's ``internutopia.core.task.metric``: ``BaseMetric`` (:mod:`internutopia.core.metric.base`) and the per-slot factories
(:mod:`internutopia.per_slot.metric`). Subclass ``BaseMetric`` either way: one object for every slot, or InternUtopia's
one object per slot (``docs/extensions.md``)."""

from internutopia.core.metric.base import BaseMetric
from internutopia.per_slot.metric import create_metric

__all__ = ['BaseMetric', 'create_metric']
