"""Checks, when a task config is built, that the robot names its metrics give are robots of the task.

A metric picks the robot it measures by its own ``robot_name`` field (``TraveledDistanceMetricCfg``,
``RecordingMetricCfg``) or by ``metric_config['robot_name']`` (every built-in metric, and an
extension's that reads the option so). A name that is not one of the task's robots would fail the
start of every episode of the task (the episode is recorded as failed), so every task config
(:class:`~internutopia.core.config.TaskCfg` and its subclasses, an extension's too) rejects it
when it is built, naming the field, the name and the robots there are:

>>> from internutopia.core.config import MetricCfg, RobotCfg, TaskCfg
>>> TaskCfg(type='MyTask', robots=[RobotCfg(name='jetbot', type='JetbotRobot')],
...         metrics=[MetricCfg(type='MyMetric', metric_config={'robot_name': 'h1'})])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for TaskCfg
  Value error, metrics[0].metric_config robot_name 'h1' is not one of the robots ['jetbot'] (metric MyMetric) ...

Two cases are left to the start of the episode: a task with no robots yet (a robot-less episode is
legal, and a template may get its robots later with ``update(robots=...)``), and a metric whose
config class says it measures the one robot of a one-robot task whatever its ``robot_name``
(``any_robot_when_alone``: ``RecordingMetricCfg``, with a warning at the start, as InternUtopia's
``RecordingMetric`` does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ['check_metric_robot_names', 'check_robot_name']


def _any_robot_when_alone(metric: Any) -> bool:
    return bool(getattr(type(metric), 'any_robot_when_alone', False))


def _metric_label(metric: Any) -> str:
    name = getattr(metric, 'name', None)
    return f'metric {name!r} ({metric.type})' if name is not None else f'metric {metric.type}'


def check_robot_name(name: str | None, field: str, robots: Sequence[Any]) -> None:
    """``ValueError`` when ``name`` (the value of the task's ``field``) is not one of ``robots``
    (their configs); nothing to check when ``name`` is ``None`` or the task has no robots yet."""
    names = [robot.name for robot in robots]
    if name is not None and names and name not in names:
        raise ValueError(f'{field} {name!r} is not one of the robots {names}')


def check_metric_robot_names(metrics: Sequence[Any], robots: Sequence[Any]) -> None:
    """``ValueError`` for the first metric of ``metrics`` (configs) whose ``robot_name`` field or
    ``metric_config['robot_name']`` is not one of ``robots`` (configs); see the module docstring."""
    names = [robot.name for robot in robots]
    if not names:
        return
    for m, metric in enumerate(metrics):
        own = getattr(metric, 'robot_name', None)
        if (isinstance(own, str) and own not in names
                and not (len(names) == 1 and _any_robot_when_alone(metric))):
            raise ValueError(f'metrics[{m}].robot_name {own!r} is not one of the robots {names} '
                             f'({_metric_label(metric)})')
        option = metric.metric_option('robot_name') if hasattr(metric, 'metric_option') else None
        if isinstance(option, str) and option not in names:
            raise ValueError(f'metrics[{m}].metric_config robot_name {option!r} is not one of the robots {names} '
                             f'({_metric_label(metric)})')
