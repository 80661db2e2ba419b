"""Loading a config file for ``internutopia run`` / ``validate``: YAML to a validated ``Config``,
and every problem reported with its line and field path (:class:`ConfigError`)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any

from internutopia.core.config.files import PACKAGE_SCHEME, resolve_file, resolve_package_path, with_resolved_files
from internutopia.core.config.yaml_file import (
    ConfigFileError,
    format_problems,
    key_node_at,
    line_of,
    node_at,
    path_text,
    problem_at,
    read_yaml,
    validate_data,
)
from internutopia.core.extras import missing_extra

#: A config file that cannot be used; ``problems`` lists ``'file:line: message'`` strings (the same
#: class as :class:`internutopia.core.config.ConfigFileError`, which ``Config.from_yaml`` raises).
ConfigError = ConfigFileError

# ==================================================================================================
# Loading and validating
_node_at = node_at
_key_node_at = key_node_at
_line = line_of
_path_text = path_text


#: Where typed entries live in a config, and the registry that knows their types.
def _registries() -> dict[str, Any]:
    from internutopia.core.controller.base import BaseController
    from internutopia.core.metric.base import BaseMetric
    from internutopia.core.object.base import BaseObject
    from internutopia.core.reward.base import BaseReward
    from internutopia.core.robot.base import BaseRobot
    from internutopia.core.sensor.base import BaseSensor
    from internutopia.core.task.base import BaseTask

    return {'task': BaseTask.registry, 'robot': BaseRobot.registry, 'controller': BaseController.registry,
            'sensor': BaseSensor.registry, 'metric': BaseMetric.registry, 'object': BaseObject.registry,
            'reward': BaseReward.registry}


def _typed_entries(data: Any) -> list[tuple[tuple, str, Any]]:
    """``(loc, kind, entry)`` for every typed entry (task, robot, controller, ...) of raw config data."""
    out: list[tuple[tuple, str, Any]] = []

    def controllers(items: Any, loc: tuple) -> None:
        for i, c in enumerate(items if isinstance(items, list) else []):
            out.append((loc + (i,), 'controller', c))
            if isinstance(c, dict):
                controllers(c.get('sub_controllers'), loc + (i, 'sub_controllers'))

    tasks = data.get('task_configs') if isinstance(data, dict) else None
    for t, task in enumerate(tasks if isinstance(tasks, list) else []):
        loc = ('task_configs', t)
        out.append((loc, 'task', task))
        if not isinstance(task, dict):
            continue
        for r, robot in enumerate(task.get('robots') or [] if isinstance(task.get('robots'), list) else []):
            out.append((loc + ('robots', r), 'robot', robot))
            if isinstance(robot, dict):
                controllers(robot.get('controllers'), loc + ('robots', r, 'controllers'))
                for s, sensor in enumerate(robot.get('sensors') or [] if isinstance(robot.get('sensors'), list) else []):
                    out.append((loc + ('robots', r, 'sensors', s), 'sensor', sensor))
        for kind, key in (('metric', 'metrics'), ('object', 'objects')):
            items = task.get(key)
            for i, item in enumerate(items if isinstance(items, list) else []):
                out.append((loc + (key, i), kind, item))
        if isinstance(task.get('reward'), dict):
            out.append((loc + ('reward',), 'reward', task['reward']))
    return out


def load_config(path: str, env_num: int | None = None, overrides: Sequence[str] = ()) -> Any:
    """Load and check a YAML config; return the :class:`~internutopia.core.config.Config`.

    Every problem of the file is reported at once: YAML errors, duplicate keys, unknown keys (always
    errors here, whatever the strict setting: a file is checked strictly), bad values, unknown
    ``type`` names, missing files and scenes that do not load. Relative and ``package://`` file paths
    are resolved (see :mod:`internutopia.core.config.files`) in the returned config; the file is not
    changed. ``env_num`` overrides the file's, as ``'env_num=N'`` in ``overrides`` would (checked with
    the file; its problems are reported as ``--env-num N``'s); ``overrides`` (``'key.path=value'``, the command
    line's ``--set``) change the loaded data before it is checked (:mod:`internutopia.cli.overrides`).

    Raises:
        ConfigError: every problem found, each with its line and path in the file.
    """
    from internutopia.core.config import Config
    from internutopia.core.plugins import load_extensions

    load_extensions()  # (the built-in types and every installed extension's, as an Env loads them)
    data, root, problems = read_yaml(path)
    overridden: list[tuple[tuple, str]] = []  # (path, override): problems there are the override's
    if overrides and isinstance(data, dict):
        from internutopia.cli.overrides import apply_overrides

        try:
            data = apply_overrides(data, overrides, applied=overridden)
        except ValueError as exc:
            raise ConfigError(path, [f'{path}: {exc}']) from None
    # --env-num N is --set env_num=N, applied last (checked with the rest, its problems its own).
    if env_num is not None and isinstance(data, dict):
        data = {**data, 'env_num': env_num}
        overridden.append((('env_num',), f'env_num={env_num}'))

    def said(problem: tuple[int | None, str]) -> tuple[int | None, str]:
        """A problem of ``--env-num N`` as that option's (reported as the ``--set`` it stands for)."""
        line, text = problem
        as_set = f'--set env_num={env_num}: '
        if env_num is not None and text.startswith(as_set):
            text = f'--env-num {env_num}: {text[len(as_set):]}'
        return line, text

    def at(loc: tuple, message: str) -> tuple[int | None, str]:
        return said(problem_at(root, loc, message, overridden))

    for loc, kind, entry in _typed_entries(data):
        if not isinstance(entry, dict):
            continue
        type_name = entry.get('type')
        registry = _registries()[kind]
        needs = missing_extra(kind, type_name) if isinstance(type_name, str) else None
        if needs is not None:  # (declared by the type: internutopia.core.extras)
            problems.append(at(loc + ('type',), f'{_path_text(loc + ("type",))}: {needs}'))
        elif isinstance(type_name, str) and type_name not in registry:
            problems.append(at(loc + ('type',), f'{_path_text(loc + ("type",))}: unknown {kind} type {type_name!r}; '
                                                f'registered {kind} types: {registry.names()}'))
    config, invalid, _ = validate_data(data, root, strict=True, model=Config, overridden=overridden)
    problems += [said(problem) for problem in invalid]
    config_dir = os.path.dirname(os.path.abspath(path))
    for loc, file_path in _raw_file_fields(data):
        found = resolve_file(file_path, config_dir)
        if found is None:
            problems.append(at(loc, f'{_path_text(loc)}: file not found: {file_path!r} '
                                    f'({_where_looked(file_path, config_dir)})'))
        elif os.path.isdir(found):  # (the reset reads a file there: a folder is no file)
            where = '' if found == file_path else f' (found at {found})'
            problems.append(at(loc, f'{_path_text(loc)}: {file_path!r} is a folder{where}, not a file'))
    if config is not None and not problems:
        problems.extend(at(loc, message) for loc, message in _scale_problems(config))
    if config is not None and not problems:
        config, _ = with_resolved_files(config, config_dir)
        problems.extend(at(loc, message) for loc, message in _scene_problems(config))
        problems.extend(at(loc, message) for loc, message in _object_problems(config))
        problems.extend(at(loc, message) for loc, message in _sensor_mount_problems(config))
    if problems:
        raise ConfigError(path, format_problems(path, problems))
    assert config is not None  # validation failed: it left problems
    return config


def _where_looked(file_path: str, config_dir: str) -> str:
    if file_path.startswith(PACKAGE_SCHEME):
        try:
            return f'resolved to {resolve_package_path(file_path)}'
        except ValueError as exc:
            return str(exc)
    if os.path.isabs(file_path):
        return 'an absolute path'
    return f'looked in {os.getcwd()}, {config_dir} and {os.path.dirname(config_dir)}'


def _raw_file_fields(data: Any) -> list[tuple[tuple, str]]:
    """``(loc, path)`` of every file path written in raw config ``data`` (so missing files are
    reported even when other parts of the file do not validate)."""
    out: list[tuple[tuple, str]] = []
    tasks = data.get('task_configs') if isinstance(data, dict) else None
    for t, task in enumerate(tasks if isinstance(tasks, list) else []):
        if not isinstance(task, dict):
            continue
        if isinstance(task.get('scene_asset_path'), str):
            out.append((('task_configs', t, 'scene_asset_path'), task['scene_asset_path']))
        for key in ('robots', 'objects'):
            items = task.get(key)
            for i, item in enumerate(items if isinstance(items, list) else []):
                if isinstance(item, dict) and isinstance(item.get('usd_path'), str) and item['usd_path']:
                    if key == 'robots' and item['usd_path'].lower().endswith(_USD_SUFFIXES):
                        continue  # (a robot's Isaac Sim asset means its built-in model here: never read)
                    out.append((('task_configs', t, key, i, 'usd_path'), item['usd_path']))
    return out


_USD_SUFFIXES = ('.usd', '.usda', '.usdc', '.usdz')


def _scene_problems(config: Any) -> list[tuple[tuple, str]]:
    """Load and compile every distinct scene of ``config`` (paths already resolved): a malformed
    file (bad XML or USD, an invalid model) is reported at its ``scene_asset_path``: ``(loc, message)``."""
    from internutopia.core.scene import scene_spec

    problems: list[tuple[tuple, str]] = []
    seen: set[tuple] = set()
    for t, task in enumerate(config.task_configs):
        key = (task.scene_asset_path, task.scene_scale, task.scene_position, task.scene_orientation)
        if not task.scene_asset_path or key in seen:
            continue
        seen.add(key)
        loc = ('task_configs', t, 'scene_asset_path')
        try:
            # (A prim with non-finite geometry is skipped by the loader with a warning; a file
            # checked is reported with it as a problem.)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter('always')
                model = scene_spec(task).compile()
        except Exception as exc:  # noqa: BLE001 - MuJoCo and the USD reader raise several types
            reason = ' '.join(str(exc).split())
            problems.append((loc, f'{_path_text(loc)}: cannot load scene {task.scene_asset_path!r}: {reason}'))
            continue
        for warning in caught:
            if 'non-finite' in str(warning.message):
                problems.append((loc, f'{_path_text(loc)}: scene {task.scene_asset_path!r}: {warning.message}'))
            else:  # (the rest as a run shows them)
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
        for reason in _out_of_range(model):
            problems.append((loc, f'{_path_text(loc)}: scene {task.scene_asset_path!r}: {reason}'))
    return problems


def _object_problems(config: Any) -> list[tuple[tuple, str]]:
    """Objects whose file does not load (a ``usd_path`` that is malformed USD or MJCF, or holds no
    geometry): each distinct object with a file is built (not simulated), as a reset builds it."""
    from internutopia.core.object.base import BaseObject

    problems: list[tuple[tuple, str]] = []
    seen: set[str] = set()
    for t, task in enumerate(config.task_configs):
        for o, object_cfg in enumerate(task.objects):
            key = object_cfg.model_dump_json(exclude={'name', 'position', 'orientation'})
            if not getattr(object_cfg, 'usd_path', None) or key in seen:
                continue
            seen.add(key)
            try:
                BaseObject.create(object_cfg, 1, config.simulator).build_spec()
            except (OSError, ValueError) as exc:  # (the file's problems; anything else is left to the reset)
                loc = ('task_configs', t, 'objects', o, 'usd_path')
                problems.append((loc, f'{_path_text(loc)}: {" ".join(str(exc).split())}'))
    return problems


def _scale_problems(config: Any) -> list[tuple[tuple, str]]:
    """Robots scaled where their class cannot scale its model (the rule a reset enforces)."""
    from internutopia.core.runner.checks import robot_scale_problems

    problems: list[tuple[tuple, str]] = []
    for t, task in enumerate(config.task_configs):
        for r, message in robot_scale_problems(task):
            loc = ('task_configs', t, 'robots', r, 'scale')
            problems.append((loc, f'{_path_text(loc)}: {message}'))
    return problems


def _sensor_mount_problems(config: Any) -> list[tuple[tuple, str]]:
    """Sensors whose ``prim_path`` names no body of their robot: each robot with a sensor that sets
    one is built (not simulated) and its sensors are mounted on its model, as a reset mounts them.
    A robot that cannot be built here (an optional package missing) is left to the reset."""
    from internutopia.core.robot.base import BaseRobot

    problems: list[tuple[tuple, str]] = []
    seen: set[str] = set()
    for t, task in enumerate(config.task_configs):
        for r, robot_cfg in enumerate(task.robots):
            sensors = [(s, c) for s, c in enumerate(robot_cfg.sensors or []) if c.enable and c.prim_path]
            key = robot_cfg.model_dump_json()
            if not sensors or key in seen:
                continue
            seen.add(key)
            try:
                robot = BaseRobot.create(robot_cfg, 1, config.simulator)
                spec = robot.build_spec()
            except Exception:  # noqa: BLE001 - the reset reports it, with its own message
                continue
            for s, sensor_cfg in sensors:
                sensor = robot.sensors.get(sensor_cfg.name)
                if sensor is None:
                    continue
                try:
                    sensor.add_to_spec(spec)
                except ValueError as exc:
                    loc = ('task_configs', t, 'robots', r, 'sensors', s, 'prim_path')
                    problems.append((loc, f'{_path_text(loc)}: {exc}'))
    return problems


def _out_of_range(model: Any) -> list[str]:
    """What in a compiled scene lies outside finite, sane sizes and places (a cube of infinite size,
    a body 1e100 m away): such a scene loads, then blinds every camera or breaks the physics."""
    import numpy as np

    from internutopia.core.config.values import MAX_COORDINATE_M

    out = []
    for what, values in (('geom size', model.geom_size), ('geom position', model.geom_pos), ('body position', model.body_pos)):
        values = np.asarray(values)
        bad = ~np.isfinite(values).all(axis=1) | (np.abs(values) > MAX_COORDINATE_M).any(axis=1)
        for index in np.flatnonzero(bad)[:5]:
            kind = 'geom' if what.startswith('geom') else 'body'
            name = model.geom(index).name if kind == 'geom' else model.body(index).name
            out.append(f'{kind} {name or index!r} has {what} {values[index].tolist()}; every size and coordinate must be '
                       f'finite and within +-{MAX_COORDINATE_M:g} m')
    return out


# ==================================================================================================
# run
