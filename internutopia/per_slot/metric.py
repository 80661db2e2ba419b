"""Metrics one slot at a time: InternUtopia's metric API next to our vectorized metrics.

- An upstream-style metric class (``cls(config, task_config)`` with ``update(obs)`` every step and
  ``calc()`` when the episode ends) is run by a :class:`SlotMetricAdapter`: one instance per slot
  and episode, given what InternUtopia gives it: the slot's task observations (the task's
  ``get_observations()``: ``{robot_name: robot_obs}`` plus what the task adds) after every step
  on which the episode goes on: not on the step its task ends it (``terminated`` or ``truncated``,
  whether the task is upstream-style or one of this package's, as the runner tells the adapter
  through its ``episodes_ending`` hook).
- A built-in metric seen from one slot (a per-slot task's ``metrics[name]``) is a
  :class:`SlotMetricView`: ``calc()`` is the metric's value for that slot's episode so far.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from internutopia.core.metric.base import BaseMetric
from internutopia.core.runner.failures import each_slot
from internutopia.core.view import EnvView
from internutopia.per_slot.scene import task_name
from internutopia.per_slot.style import instance_class, is_per_slot, make_instance, positional_parameters

#: How a per-slot metric class is told apart (see :func:`~internutopia.per_slot.style.is_per_slot`):
#: ``set_up_runtime``, a ``calc()`` without a slot, ``__init__(config, task_config)``, or an
#: ``update`` whose argument is not ``slots`` (InternUtopia's ``update(obs)``).
METRIC_MARKS = (('set_up_runtime',), ('calc',), ('task_config',), ('update',))

#: What InternUtopia's built-in metrics have that a subclass of their twin here reads, by class
#: name: ``({attribute: config key}, {attribute: live value of (the built-in behind, slot)})``. The
#: config values are set when the instance is made; the live ones are read from the built-in
#: each time until the instance sets its own.
UPSTREAM_METRIC_ATTRIBUTES: dict[str, tuple[dict[str, str], dict[str, Callable[[Any, int], Any]]]] = {
    'TraveledDistanceMetric': ({'robot_name': 'robot_name'},
                               {'distance': lambda metric, slot: float(metric.distance[slot]),
                                'position': lambda metric, slot: metric.last_position[slot].copy()}),
    'RecordingMetric': ({'robot_name': 'robot_name', 'fields': 'fields', 'param': ''},
                        {'step': lambda metric, slot: len(metric.records[slot]),
                         'obs': lambda metric, slot: metric.calc(slot)}),
}

#: ``task_observations(view, slot)``: the slot's task observations after this step (given by the
#: task module, which builds on this one).
TaskObservations = Callable[[EnvView, int], Any]


class SlotMetric:
    """InternUtopia's per-instance metric: one slot's episode, built as ``cls(config, task_config)``."""

    # Set by __init__ and set_up_runtime, as InternUtopia's metrics have them.
    config: Any
    name: str
    task_config: Any
    metric_config: dict[str, Any]
    env_id: Any
    env_offset: Any
    task_name: Any
    #: Where the class builds on a built-in metric (``class MyDist(TraveledDistanceMetric)``), the
    #: adapter running that built-in for every slot (set before ``__init__``): the default ``calc()``
    #: is the built-in's value for this slot's episode, as its upstream twin would give.
    runner_of_slot: Any = None

    def __init__(self, config: Any, task_config: Any) -> None:
        self.env_offset: Any = None
        self.env_id: Any = None
        self.task_name: Any = None
        self.config = config
        self.name = config.name
        self.task_config = task_config
        self.metric_config = config.metric_config
        if self.runner_of_slot is not None:  # (a class built on a built-in: its upstream twin's attributes)
            for attribute, key in upstream_entry(self.runner_of_slot, UPSTREAM_METRIC_ATTRIBUTES)[0].items():
                setattr(self, attribute, getattr(config, key, None) if key else config)

    def __getattr__(self, name: str) -> Any:
        # (only for names not found otherwise: the live attributes of a built-in's upstream twin)
        runner = self.__dict__.get('runner_of_slot')
        live = upstream_entry(runner, UPSTREAM_METRIC_ATTRIBUTES)[1].get(name) if runner is not None else None
        if live is None:
            raise AttributeError(f'{type(self).__name__!r} object has no attribute {name!r}')
        slot = self.__dict__.get('_slot')
        if slot is None:
            raise AttributeError(f'{type(self).__name__!r} object has no attribute {name!r} (yet: its slot is not known)')
        return live(runner, slot)

    def set_up_runtime(self, task_name: Any, env_id: Any, env_offset: Any) -> None:
        """Record the episode's name, slot and slot origin."""
        self.task_name = task_name
        self.env_id = env_id
        self.env_offset = env_offset

    def update(self, obs: Any) -> None:
        """Accumulate after a step, given the slot's task observations (``{robot_name: robot_obs}``
        and the task's own entries). A built-in behind accumulates on its own: nothing to do."""

    def calc(self) -> Any:
        """The metric's value for the episode (JSON-serializable): upstream-style metrics define
        it; one built on a built-in metric gets the built-in's value for this slot."""
        if self.runner_of_slot is None:
            raise NotImplementedError(f'{type(self).__name__}.calc is not implemented')
        return self.runner_of_slot.builtin_calc(self.env_id)


def upstream_entry(runner: Any, table: dict[str, Any]) -> Any:
    """The entry of ``table`` for the nearest class of the built-in ``runner`` runs that is named
    in it (``({}, {})`` for none)."""
    for klass in type(runner).__mro__:
        entry = table.get(klass.__name__)
        if entry is not None:
            return entry
    return ({}, {})


class SlotMetricView:
    """A built-in (vectorized) metric ``metric`` seen from ``slot``."""

    def __init__(self, metric: BaseMetric, slot: int) -> None:
        self.metric = metric
        self.slot = int(slot)
        self.config = metric.config
        self.name = metric.name
        self.metric_config = metric.config.metric_config

    def update(self, *args: Any) -> None:
        """The env updates its metrics every step; nothing to do."""

    def calc(self) -> Any:
        """The metric's value for the slot's episode (so far)."""
        return self.metric.calc(self.slot)

    def __repr__(self) -> str:
        return f'{type(self.metric).__name__}({self.name!r}, env {self.slot})'


class SlotMetricAdapter(BaseMetric):
    """Runs the upstream-style metric class ``instance_class`` for every slot whose episode lists the config.

    Where the class builds on a built-in metric, the adapter stands in front of that built-in
    (:func:`~internutopia.per_slot.style.adapter_class`): the built-in starts and accumulates for
    every slot as on its own, before the instances' ``update``.
    """

    #: A subclass of a built-in metric is run with the built-in behind this adapter.
    runs_builtins = True
    #: The built-in metric behind (set on the class :func:`~internutopia.per_slot.style.adapter_class` makes).
    builtin_class: type | None = None

    def __init__(self, config: Any, view: EnvView, instance_class: type, task_observations: TaskObservations) -> None:
        takes = positional_parameters(getattr(instance_class, 'calc', None))
        if takes:  # (InternUtopia's update(obs) with this package's calc(slot): neither way runs it)
            raise TypeError(f'metric class {instance_class.__qualname__} ({config.type!r}) is written per slot, '
                            f'InternUtopia\'s way (update(obs), calc()), but its calc takes {takes}: a per-slot metric\'s '
                            'calc() takes no argument (or write update(slots) and calc(slot) to serve every slot at once)')
        super().__init__(config, view)
        self.instance_class = instance_class
        self.instances: dict[int, Any] = {}
        self._task_observations = task_observations
        #: The slots whose episode ends on the step being run (see :meth:`episodes_ending`).
        self._ending: np.ndarray | None = None

    def reset_slot(self, slot: int, task: Any) -> None:
        if self.builtin_class is not None:
            super().reset_slot(slot, task)
        self.instances.pop(slot, None)  # (the slot's last episode's, if its end was not told)
        made = make_instance(self.instance_class, self, self.config, task, preset={'_slot': int(slot)})
        made.set_up_runtime(task_name(self.view, slot), slot, self.view.origin(slot).tolist())
        self.instances[slot] = made

    def episode_ended(self, slot: int) -> None:
        """``slot``'s episode is over: its instance goes (InternUtopia's metrics have no ``cleanup``)."""
        self.instances.pop(slot, None)

    def episodes_ending(self, ending: np.ndarray) -> None:
        """The runner's hook, before each step's metric updates: ``ending[slot]``, whether
        ``slot``'s task ended its episode on this step (terminated or truncated)."""
        self._ending = ending

    def update(self, slots: np.ndarray) -> None:
        if self.builtin_class is not None:
            super().update(slots)  # (a built-in behind accumulates on every step, as on its own)
        ending = self._ending

        def one(index: int, slot: int) -> None:
            if ending is not None and ending[slot]:
                return  # (InternUtopia updates no metric of a task on the step it is done)
            self.instances[slot].update(self._task_observations(self.view, slot))

        each_slot(slots, one)

    def calc(self, slot: int) -> Any:
        return self.instances[slot].calc()

    def builtin_calc(self, slot: int) -> Any:
        """The built-in metric's value for ``slot``'s episode."""
        return super().calc(slot)


def metric_in_slot(metric: BaseMetric, slot: int) -> Any:
    """Metric ``metric`` in ``slot`` as InternUtopia's per-slot object (``calc()``)."""
    if isinstance(metric, SlotMetricAdapter):
        return metric.instances[slot]
    return SlotMetricView(metric, slot)


def create_metric(config: Any, task_config: Any) -> Any:
    """A per-slot metric object of an upstream-style metric class (``cls(config, task_config)``;
    InternUtopia's ``internutopia.core.task.metric.create_metric``).

    Raises:
        ValueError: the type is not registered, or is one of this package's metrics (those are
            created by the env for every slot from the task config's ``metrics``).
    """
    metric_class = BaseMetric.registry.get(config.type)
    if not is_per_slot(metric_class, BaseMetric, *METRIC_MARKS):
        raise ValueError(f'metric {config.type!r} serves every slot at once: list it in the metrics of the task config '
                         'and the env creates it')
    # (mypy takes class objects for unhashable, python/mypy#11470: the cache's Hashable check)
    return instance_class(metric_class, SlotMetric, BaseMetric, METRIC_MARKS)(config, task_config)  # type: ignore[arg-type]


__all__ = ['SlotMetric', 'SlotMetricAdapter', 'SlotMetricView', 'create_metric', 'metric_in_slot']
