"""Tasks decide reward and episode end for every slot running them, in one vectorized call.

``BaseMetric`` is exported here too, as InternUtopia does (``from internutopia.core.task import BaseMetric``).
"""

from internutopia.core.metric.base import BaseMetric
from internutopia.core.task.base import BaseTask

__all__ = ['BaseMetric', 'BaseTask']
