"""Loading a config file for ``internutopia run`` / ``validate``: YAML to a validated ``Config``,
and every problem reported with its line and field path (:class:`ConfigError`)."""

from __future__ import annotations

import os
import typing
from collections.abc import Sequence
from typing import Any

import yaml


class ConfigError(Exception):
    """A config file that cannot be used; ``problems`` lists ``'file:line: message'`` strings."""

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f'{path}: {len(problems)} problem(s)\n' + '\n'.join(f'  {p}' for p in problems))


# ==================================================================================================
# Loading and validating
def _node_at(root: Any, loc: Sequence[Any]) -> Any:
    """The YAML node at ``loc`` (keys and indices), or the deepest one found on the way."""
    node = root
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.value == str(part):
                    node = key if part == loc[-1] and value is None else value
                    break
            else:
                return node
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return node
    return node


def _key_node_at(root: Any, loc: Sequence[Any]) -> Any:
    """The mapping *key* node of ``loc[-1]`` under ``loc[:-1]`` (for unknown fields)."""
    parent = _node_at(root, loc[:-1])
    if isinstance(parent, yaml.MappingNode):
        for key, _ in parent.value:
            if key.value == str(loc[-1]):
                return key
    return parent


def _line(node: Any) -> int | None:
    return node.start_mark.line + 1 if node is not None and hasattr(node, 'start_mark') else None


def _path_text(loc: Sequence[Any]) -> str:
    out = ''
    for part in loc:
        out += f'[{part}]' if isinstance(part, int) else (f'.{part}' if out else str(part))
    return out or '(top level)'


def _model_in(annotation: Any) -> Any:
    """The first pydantic model class inside a type annotation (``list[X]``, ``Optional[X]``, ...)."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _model_at(data: Any, loc: Sequence[Any]) -> Any:
    """The config class that validates the mapping at ``loc`` (resolving ``type`` fields)."""
    from internutopia.core.config import Config, TypedCfg

    def refine(cls: Any, node: Any) -> Any:
        if cls is not None and issubclass(cls, TypedCfg) and isinstance(node, dict) and isinstance(node.get('type'), str):
            return cls.config_class_for(node['type']) or cls
        return cls

    cls: Any = Config
    node = data
    for part in loc:
        if cls is None:
            return None
        if isinstance(part, int):
            node = node[part] if isinstance(node, list) and part < len(node) else None
        else:
            field = cls.model_fields.get(part)
            if field is None:
                return None
            cls = _model_in(field.annotation)
            node = node.get(part) if isinstance(node, dict) else None
        cls = refine(cls, node)
    return cls


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

    Relative file paths are resolved (see the module doc) in the returned config; the file is not
    changed. ``env_num`` overrides the file's; ``overrides`` (``'key.path=value'``, the command
    line's ``--set``) change the loaded data before it is checked (:mod:`internutopia.cli.overrides`).

    Raises:
        ConfigError: every problem found, each with its line and path in the file.
    """
    from pydantic import ValidationError

    from internutopia.core.config import Config
    from internutopia_extension import import_extensions

    import_extensions()
    try:
        with open(path, encoding='utf-8') as stream:
            text = stream.read()
    except OSError as exc:
        raise ConfigError(path, [f'{path}: cannot read: {exc.strerror or exc}']) from None
    except UnicodeDecodeError as exc:
        with open(path, 'rb') as stream:
            line = stream.read(exc.start).count(b'\n') + 1
        raise ConfigError(path, [f'{path}:{line}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); '
                                 'a config is a UTF-8 YAML file']) from None
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = f'{path}:{mark.line + 1}:{mark.column + 1}' if mark is not None else path
        problem = ': '.join(str(p) for p in (getattr(exc, 'context', None), getattr(exc, 'problem', None)) if p) or str(exc)
        context = getattr(exc, 'context_mark', None)
        if context is not None and mark is not None and context.line != mark.line:
            problem += f' (the construct started at line {context.line + 1}, column {context.column + 1})'
        raise ConfigError(path, [f'{where}: YAML syntax error: {problem}']) from None
    if not isinstance(data, dict):
        raise ConfigError(path, [f'{path}:1: expected a mapping of Config fields at the top level '
                                 f'(simulator, env_num, env_offset_size, metrics_save_path, task_configs); '
                                 f'got {type(data).__name__}'])
    if overrides:
        from internutopia.cli.overrides import apply_overrides

        try:
            data = apply_overrides(data, overrides)
        except ValueError as exc:
            raise ConfigError(path, [f'{path}: {exc}']) from None
    problems: list[tuple[int | None, str]] = []
    for loc, kind, entry in _typed_entries(data):
        if not isinstance(entry, dict):
            continue
        type_name = entry.get('type')
        registry = _registries()[kind]
        if isinstance(type_name, str) and type_name not in registry:
            problems.append((_line(_node_at(root, loc + ('type',))),
                             f'{_path_text(loc + ("type",))}: unknown {kind} type {type_name!r}; '
                             f'registered {kind} types: {registry.names()}'))
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        config = None
        for error in exc.errors():
            loc = tuple(error['loc'])
            if error['type'] == 'extra_forbidden':
                model = _model_at(data, loc[:-1])
                valid = sorted(model.model_fields) if model is not None else []
                owner = f' of {model.__name__}' if model is not None else ''
                problems.append((_line(_key_node_at(root, loc)),
                                 f'{_path_text(loc)}: unknown field {loc[-1]!r}{owner}; valid fields: {valid}'))
            elif error['type'] == 'missing':
                problems.append((_line(_node_at(root, loc[:-1])), f'{_path_text(loc)}: missing required field {loc[-1]!r}'))
            else:
                message = error['msg'].removeprefix('Value error, ')
                problems.append((_line(_node_at(root, loc)), f'{_path_text(loc)}: {message} (got {error.get("input")!r})'))
    if config is not None:
        from internutopia.core.config.files import with_resolved_files

        config_dir = os.path.dirname(os.path.abspath(path))
        config, missing = with_resolved_files(config, config_dir)
        for loc, file_path in missing:
            problems.append((_line(_node_at(root, loc)), f'{_path_text(loc)}: file not found: {file_path!r} '
                             f'(looked in {os.getcwd()}, {config_dir} and {os.path.dirname(config_dir)})'))
        if not problems:
            problems.extend(_scene_problems(config, root))
    if problems:
        problems.sort(key=lambda p: p[0] or 0)
        raise ConfigError(path, [f'{path}:{line}: {message}' if line else f'{path}: {message}' for line, message in problems])
    assert config is not None  # validation failed: it left problems
    if env_num is not None:
        config = config.update(env_num=env_num)
    return config


def _scene_problems(config: Any, root: Any) -> list[tuple[int | None, str]]:
    """Load and compile every distinct scene of ``config`` (paths already resolved): a malformed
    file (bad XML or USD, an invalid model) is reported at its ``scene_asset_path``."""
    from internutopia.core.scene import scene_spec

    problems: list[tuple[int | None, str]] = []
    seen: set[tuple] = set()
    for t, task in enumerate(config.task_configs):
        key = (task.scene_asset_path, task.scene_scale, task.scene_position, task.scene_orientation)
        if not task.scene_asset_path or key in seen:
            continue
        seen.add(key)
        try:
            scene_spec(task).compile()
        except Exception as exc:  # noqa: BLE001 - MuJoCo and the USD reader raise several types
            loc = ('task_configs', t, 'scene_asset_path')
            reason = ' '.join(str(exc).split())
            problems.append((_line(_node_at(root, loc)), f'{_path_text(loc)}: cannot load scene {task.scene_asset_path!r}: {reason}'))
    return problems


# ==================================================================================================
# run
