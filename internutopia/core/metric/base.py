"""Metrics: one object per distinct metric config, per-slot state in arrays indexed by slot id."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from internutopia.core.config import MetricCfg, TaskCfg
from internutopia.core.registry import Registry
from internutopia.core.view import EnvView


class BaseMetric:
    """A metric over every slot whose episode lists it (one object per distinct metric config).

    ``BaseMetric(config, view)`` serves every slot (this package's metrics); ``BaseMetric(config,
    task_config)`` is one slot's metric, InternUtopia's way (upstream-style subclasses with
    ``update(obs)`` and ``calc()``, run by :class:`~internutopia.core.metric.slot.SlotMetricAdapter`).

    Args:
        config: the metric's config.
        view: what the metric sees of the env (slots, their robots and objects, step counts).
    """

    registry: Registry[type[BaseMetric]] = Registry('metric')
    config: MetricCfg
    name: str
    # Attributes of one slot's metric (InternUtopia's signature), set in __init__ / set_up_runtime.
    task_config: TaskCfg
    metric_config: dict[str, Any]
    env_id: Any
    env_offset: Any
    task_name: Any
    #: InternUtopia's name of the registry table.
    metrics = registry.table

    def __init__(self, config: MetricCfg, view: Any) -> None:
        if isinstance(view, TaskCfg):  # InternUtopia's signature (config, task_config): one slot's metric
            self.env_offset = None
            self.env_id = None
            self.task_name = None
            self.config = config
            self.name = config.name
            self.task_config = view
            self.metric_config = config.metric_config
            return
        self.config = config
        self.name = config.name or config.type
        self.view = view
        self.env_num = view.env_num

    @classmethod
    def register(cls, name: str) -> Callable[[type[BaseMetric]], type[BaseMetric]]:
        """Class decorator registering a metric type under ``name``."""
        return cls.registry.register(name)

    @classmethod
    def create(cls, config: MetricCfg, view: EnvView, where: str = '') -> BaseMetric:
        """The metric object for ``config`` (an upstream-style class runs through a per-slot adapter)."""
        from internutopia.core.extension_style import is_per_slot

        metric_class = cls.registry.get(config.type, where)
        if is_per_slot(metric_class, BaseMetric, ('set_up_runtime',), ('calc',), init_params=('task_config',)):
            from internutopia.core.metric.slot import SlotMetricAdapter

            return SlotMetricAdapter(config, view, metric_class)
        return metric_class(config, view)

    def slot_metric(self, slot: int) -> Any:
        """This metric in ``slot`` as InternUtopia's per-slot object (``calc()``)."""
        from internutopia.core.metric.slot import SlotMetricView

        return SlotMetricView(self, slot)

    def set_up_runtime(self, task_name: Any, env_id: Any, env_offset: Any) -> None:
        """Record the episode's name, slot and slot origin (one slot's metric)."""
        self.task_name = task_name
        self.env_id = env_id
        self.env_offset = env_offset

    def measured_robot(self, task: TaskCfg) -> str:
        """Name of the robot this metric measures in ``task``.

        ``metric_config['robot_name']``, else the task's own ``robot_name`` field if it has one,
        else the episode's first robot; ``ValueError`` naming the robots when it is not there.
        """
        names = [robot.name for robot in task.robots]
        name = getattr(self.config, 'robot_name', None)  # a metric config's own field (InternUtopia's)
        if name is None:
            name = self.config.metric_config.get('robot_name', getattr(task, 'robot_name', None))
        if name is None:
            if not names:
                raise ValueError(f'{self.name}: the episode has no robot to measure')
            return names[0]
        if name not in names:
            raise ValueError(f'{self.name}: robot_name {name!r} is not in the episode; robots: {names}')
        return name

    def reset_slot(self, slot: int, task: TaskCfg) -> None:
        """Start accumulating for a new episode in ``slot``."""

    def update(self, slots: Any) -> None:
        """Accumulate after a physics step, for all ``slots`` at once (one slot's metric: ``update(obs)``)."""

    def calc(self, slot: int) -> Any:
        """The metric's value for the episode in ``slot`` (JSON-serializable)."""
        raise NotImplementedError
