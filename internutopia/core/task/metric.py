"""InternUtopia's ``internutopia.core.task.metric``: ``BaseMetric`` and ``create_metric``.

``BaseMetric`` is this package's metric base class (:mod:`internutopia.core.metric.base`):
subclass it either way (``docs/extensions.md``).
"""

from __future__ import annotations

from typing import Any

from internutopia.core.metric.base import BaseMetric


def create_metric(config: Any, task_config: Any) -> Any:
    """A per-slot metric object of an upstream-style metric class (``cls(config, task_config)``).

    Raises:
        ValueError: the type is not registered, or is one of this package's metrics (those are
            created by the env for every slot from the task config's ``metrics``).
    """
    from internutopia.core.extension_style import is_per_slot

    metric_class = BaseMetric.registry.get(config.type)
    if not is_per_slot(metric_class, BaseMetric, ('set_up_runtime',), ('calc',), init_params=('task_config',)):
        raise ValueError(f'metric {config.type!r} serves every slot at once: list it in the metrics of the task config '
                         'and the env creates it')
    return metric_class(config, task_config)


__all__ = ['BaseMetric', 'create_metric']
