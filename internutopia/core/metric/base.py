"""Metrics: one object per distinct metric config, per-slot state in arrays indexed by slot id."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from internutopia.core.config import MetricCfg, TaskCfg
from internutopia.core.registry import Registry
from internutopia.core.view import EnvView


class BaseMetric:
    """A metric over every slot whose episode lists it (one object per distinct metric config).

    Classes written InternUtopia's way (one object per slot and episode, ``update(obs)`` and
    ``calc()``) subclass it too; the per-slot layer (:mod:`internutopia.per_slot`) runs them.

    Args:
        config: the metric's config.
        view: what the metric sees of the env (slots, their robots and objects, step counts).
    """

    registry: Registry[type[BaseMetric]] = Registry('metric')
    config: MetricCfg
    name: str
    #: InternUtopia's name of the registry table.
    metrics = registry.table

    def __init__(self, config: MetricCfg, view: EnvView) -> None:
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
        """The metric object for ``config``, serving every slot whose episode lists it."""
        return cls.registry.maker(config.type, where)(config, view)

    def measured_robot(self, task: TaskCfg) -> str:
        """Name of the robot this metric measures in ``task``.

        ``metric_config['robot_name']``, else the task's own ``robot_name`` field if it has one,
        else the episode's first robot; ``ValueError`` naming the robots when it is not there.
        """
        names = [robot.name for robot in task.robots]
        name = getattr(self.config, 'robot_name', None)  # a metric config's own field (InternUtopia's)
        if name is None:
            name = self.config.metric_option('robot_name', getattr(task, 'robot_name', None))
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
        """Accumulate after a physics step, for all ``slots`` at once."""

    def calc(self, slot: int) -> Any:
        """The metric's value for the episode in ``slot`` (JSON-serializable)."""
        raise NotImplementedError
