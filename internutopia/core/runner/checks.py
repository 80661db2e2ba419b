"""What a reset could fail on, checked before it changes anything: the registered types an
episode names and the files it points at (a whole list of episodes when the env is built)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from internutopia.core.config import ControllerCfg, MetricCfg, ObjectCfg, RewardCfg, RobotCfg, SensorCfg, TaskCfg
from internutopia.core.config.base import unique_names
from internutopia.core.controller.base import BaseController
from internutopia.core.episode_queue import Episode
from internutopia.core.extras import check_extra
from internutopia.core.metric.base import BaseMetric
from internutopia.core.object.base import BaseObject
from internutopia.core.registry import Registry
from internutopia.core.reward.base import BaseReward
from internutopia.core.robot.base import BaseRobot
from internutopia.core.sensor.base import BaseSensor
from internutopia.core.task.base import BaseTask


def _check_file(path: str | None, field: str, what: str) -> None:
    """``ValueError`` naming ``field`` when ``path`` is set but names no file (checked before anything changes)."""
    if path and not os.path.isfile(os.path.expanduser(path)):
        raise ValueError(f'{field}: {what} file not found: {path!r} '
                         f'(a relative path is taken from the working directory {os.getcwd()!r})')


def named_types(task: TaskCfg, where: str) -> Iterator[tuple[Registry, str, str]]:
    """Every registered type ``task`` names, as ``(registry, type name, field path)``: the task's,
    its metrics', robots' (with their controllers, sub-controllers and enabled sensors), objects' and
    rewards'."""
    yield BaseTask.registry, task.type, where
    for m, metric in enumerate(task.metrics):
        yield BaseMetric.registry, metric.type, f'{where}.metrics[{m}]'
    for r, robot in enumerate(task.robots):
        at = f'{where}.robots[{r}]'
        yield BaseRobot.registry, robot.type, at
        yield from _controller_types(robot.controllers or [], f'{at}.controllers')
        for s, sensor in enumerate(robot.sensors or []):
            if sensor.enable:  # (a disabled sensor is never built)
                yield BaseSensor.registry, sensor.type, f'{at}.sensors[{s}]'
    for o, obj in enumerate(task.objects):
        yield BaseObject.registry, obj.type, f'{where}.objects[{o}]'
    for name in type(task).model_fields:
        value = getattr(task, name)
        if isinstance(value, RewardCfg):
            yield BaseReward.registry, value.type, f'{where}.{name}'


def _controller_types(controllers: list, where: str) -> Iterator[tuple[Registry, str, str]]:
    for c, controller in enumerate(controllers):
        yield BaseController.registry, controller.type, f'{where}[{c}]'
        yield from _controller_types(controller.sub_controllers or [], f'{where}[{c}].sub_controllers')


def check_entries(task: TaskCfg, where: str) -> None:
    """What the config classes check when a list of ``task`` is set, checked again: a list edited
    in place (``task.robots.append(...)``) is not validated. Each entry of its robots, objects and
    metrics (and of each robot's controllers and sensors) is a config of its kind, with a name no
    other entry of that list has.

    Raises:
        ValueError: naming the list (``where`` + its path) and the entry.
    """
    lists: list[tuple[str, list | None, type]] = [('robots', task.robots, RobotCfg), ('objects', task.objects, ObjectCfg),
                                                  ('metrics', task.metrics, MetricCfg)]
    for r, robot in enumerate(task.robots):
        if isinstance(robot, RobotCfg):
            lists += [(f'robots[{r}].controllers', robot.controllers, ControllerCfg),
                      (f'robots[{r}].sensors', robot.sensors, SensorCfg)]
    for field, entries, kind in lists:
        for index, entry in enumerate(entries or []):
            if not isinstance(entry, kind):
                raise ValueError(f'{where}.{field}[{index}] is a {type(entry).__name__}, expected a {kind.__name__}')
        try:
            unique_names(entries, f'{where}.{field}:')
        except ValueError as exc:
            raise ValueError(str(exc)) from None


def check_types(task: TaskCfg, where: str) -> None:
    """Resolve every registered type ``task`` names (:func:`named_types`).

    Raises:
        ValueError: naming the field (``where`` + its path) and the registered types; a
            :class:`~internutopia.core.extras.MissingExtraError` (also a ``ValueError``) naming the
            extra to install when the type needs an optional package that is missing.
    """
    for registry, name, at in named_types(task, where):
        check_extra(registry.kind, name, at)
        registry.get(name, at)


def check_robot_scales(task: TaskCfg, where: str) -> None:
    """Each robot's ``scale`` is one its class can honour: ``None`` or ``(1, 1, 1)`` unless the class
    scales its model (``BaseRobot.supports_scale``), the rule :meth:`BaseRobot.create` enforces.
    Robots of unregistered types are left to :func:`check_types`.

    Raises:
        ValueError: naming the field (``where.robots[i].scale``), the robot type and what it takes.
    """
    for r, message in robot_scale_problems(task):
        raise ValueError(f'{where}.robots[{r}].scale: {message}')


def robot_scale_problems(task: TaskCfg) -> Iterator[tuple[int, str]]:
    """``(robot index, message)`` of each robot of ``task`` whose ``scale`` its class cannot honour
    (see :func:`check_robot_scales`)."""
    for r, robot in enumerate(task.robots):
        scale = robot.scale
        if scale is None or tuple(scale) == (1.0, 1.0, 1.0) or robot.type not in BaseRobot.registry:
            continue
        if not BaseRobot.registry.get(robot.type).supports_scale:
            yield r, (f'{tuple(scale)} cannot be honoured: {robot.type} does not scale its model (MuJoCo has no '
                      "consistent rescaling of a robot's masses, joints and actuators); use None or (1.0, 1.0, 1.0)")


def check_episode(episode: Episode) -> None:
    """Everything about ``episode`` a reset could fail on before it changes a slot: its types and
    the files it names."""
    if episode.refused is not None:
        raise TypeError(episode.refused)
    task = episode.config
    where = f'task_configs[{episode.index}]'
    check_entries(task, where)
    check_types(task, where)
    check_robot_scales(task, where)
    _check_file(task.scene_asset_path, f'{where}.scene_asset_path', 'scene')
    for o, obj in enumerate(task.objects):
        _check_file(getattr(obj, 'usd_path', None), f'{where}.objects[{o}].usd_path', 'object')


def check_task_list(task_configs: Iterable[Any]) -> None:
    """Resolve the registered types of every episode of a list or tuple (an iterator is left
    alone: it may be endless, and its episodes are checked when a reset takes them).

    So a misspelt type fails when the env is built, not at the reset that reaches it (which would
    fail again on every retry: the episode goes back to the front of the queue). Each distinct
    combination of type names is resolved once. Each robot's ``scale`` is checked against its
    class (:func:`check_robot_scales`) too.
    """
    if not isinstance(task_configs, (list, tuple)):
        return
    seen: set[tuple] = set()
    for index, task in enumerate(task_configs):
        if not isinstance(task, TaskCfg):
            raise TypeError(f'task_configs[{index}] is a {type(task).__name__}, expected a TaskCfg')
        check_entries(task, f'task_configs[{index}]')
        names = tuple((id(registry), name) for registry, name, _ in named_types(task, ''))
        if names not in seen:
            check_types(task, f'task_configs[{index}]')
            seen.add(names)
        check_robot_scales(task, f'task_configs[{index}]')
