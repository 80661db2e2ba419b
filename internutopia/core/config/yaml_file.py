"""Reading a YAML config file safely, and naming every problem with its ``file:line``.

One reader serves :meth:`Config.from_yaml <internutopia.core.config.Config.from_yaml>` and the
``internutopia`` command, so both report the same problems the same way:

- the file must be UTF-8 YAML with a mapping at the top; numbers are read as YAML 1.2 reads them
  (``1e1`` and ``5e-3`` are floats; :class:`ConfigLoader`);
- a key given twice in one mapping is an error naming both lines (YAML itself keeps the last);
- aliases (``*name``) may add at most :data:`MAX_ALIAS_NODES` nodes when expanded, and may not
  refer to themselves; the expansion is counted on the parsed node graph, before anything is
  built, so an "alias bomb" fails in milliseconds with little memory;
- every validation error of the file at once, each with its line, its path in the file
  (``task_configs[0].robots[0].positon``) and, for an unknown key, the nearest valid ones.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import yaml
from pydantic import BaseModel

from internutopia.core.config.base import TypedCfg, known_keys
from internutopia.core.config.unknown_keys import (
    UnknownConfigKeyWarning,
    current_mode,
    unknown_keys_mode,
    warning_message,
)
from internutopia.core.util.caller import caller_stacklevel

#: Most nodes that aliases may add to a file when expanded (beyond the file's own nodes).
MAX_ALIAS_NODES = 1_000_000

class ConfigLoader(yaml.SafeLoader):
    """PyYAML's safe loader, reading numbers as YAML 1.2 does: ``1e1``, ``5e-3`` and ``1.5e3`` are
    floats (YAML 1.1, PyYAML's, reads a float only with a dot and a signed exponent, and takes
    these for text). A subclass: PyYAML's own ``SafeLoader`` is left as it is."""


# (PyYAML copies the resolver table into the subclass on its first addition.)
ConfigLoader.add_implicit_resolver(
    'tag:yaml.org,2002:float',
    re.compile(r'^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$'),
    list('-+0123456789.'))


def load_value(text: str) -> Any:
    """One YAML value read as a config file's values are (:class:`ConfigLoader`), e.g. a ``--set`` value."""
    return yaml.load(text, Loader=ConfigLoader)  # noqa: S506 - ConfigLoader is a SafeLoader


#: ``(line or None, message)``: one problem of a file.
Problem = tuple[int | None, str]


class ConfigFileError(ValueError):
    """A config file that cannot be used; ``problems`` lists ``'file:line: message'`` strings."""

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f'{path}: {len(problems)} problem(s)\n' + '\n'.join(f'  {p}' for p in problems))


def node_at(root: Any, loc: Sequence[Any]) -> Any:
    """The YAML node at ``loc`` (keys and indices), or the deepest one found on the way."""
    node = root
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            for key, value in reversed(node.value):  # the last of repeated keys is the one YAML keeps
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


def key_node_at(root: Any, loc: Sequence[Any]) -> Any:
    """The mapping *key* node of ``loc[-1]`` under ``loc[:-1]`` (for unknown keys)."""
    parent = node_at(root, loc[:-1])
    if isinstance(parent, yaml.MappingNode):
        for key, _ in reversed(parent.value):
            if key.value == str(loc[-1]):
                return key
    return parent


def line_of(node: Any) -> int | None:
    """The 1-based line a node starts on (``None`` for no node)."""
    return node.start_mark.line + 1 if node is not None and hasattr(node, 'start_mark') else None


def path_text(loc: Sequence[Any]) -> str:
    """``('task_configs', 0, 'robots')`` as ``task_configs[0].robots``."""
    out = ''
    for part in loc:
        out += f'[{part}]' if isinstance(part, int) else (f'.{part}' if out else str(part))
    return out or '(top level)'


def format_problems(path: str, problems: list[Problem]) -> list[str]:
    """``problems`` sorted by line, as ``'file:line: message'`` strings."""
    ordered = sorted(problems, key=lambda p: p[0] or 0)
    return [f'{path}:{line}: {message}' if line else f'{path}: {message}' for line, message in ordered]


# ==================================================================================================
# Reading
def _read_text(path: str) -> str:
    try:
        with open(path, encoding='utf-8') as stream:
            return stream.read()
    except OSError as exc:
        raise ConfigFileError(path, [f'{path}: cannot read: {exc.strerror or exc}']) from None
    except UnicodeDecodeError as exc:
        with open(path, 'rb') as stream:
            line = stream.read(exc.start).count(b'\n') + 1
        raise ConfigFileError(path, [f'{path}:{line}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset '
                                     f'{exc.start}); a config is a UTF-8 YAML file']) from None


def _syntax_error(path: str, exc: yaml.YAMLError) -> ConfigFileError:
    mark = getattr(exc, 'problem_mark', None)
    where = f'{path}:{mark.line + 1}:{mark.column + 1}' if mark is not None else path
    problem = ': '.join(str(p) for p in (getattr(exc, 'context', None), getattr(exc, 'problem', None)) if p) or str(exc)
    context = getattr(exc, 'context_mark', None)
    if context is not None and mark is not None and context.line != mark.line:
        problem += f' (the construct started at line {context.line + 1}, column {context.column + 1})'
    return ConfigFileError(path, [f'{where}: YAML syntax error: {problem}'])


def _check_graph(path: str, root: yaml.Node) -> list[Problem]:
    """Duplicate keys (as problems) and alias expansion (a :class:`ConfigFileError` when too large
    or self-referring), from the node graph, before anything is constructed."""
    problems: list[Problem] = []
    # Pass 1: the file's own (distinct) nodes, and the duplicate keys of each mapping once.
    distinct: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in distinct:
            continue
        distinct.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int | None] = {}
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != 'tag:yaml.org,2002:merge':
                    if key_node.value in seen:
                        problems.append((line_of(key_node), f'duplicate key {key_node.value!r} (first at line '
                                                            f'{seen[key_node.value]}); give each key once'))
                    else:
                        seen[key_node.value] = line_of(key_node)
                stack += (key_node, value_node)
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value
    # Pass 2: how many nodes the document expands to (aliases counted each time they are used).
    ceiling = len(distinct) + MAX_ALIAS_NODES
    expanded: dict[int, int] = {}
    on_path: set[int] = set()

    def too_large(node: yaml.Node) -> ConfigFileError:
        return ConfigFileError(path, [f'{path}:{line_of(node)}: aliases expand this file past {MAX_ALIAS_NODES:_} '
                                      'nodes more than it holds; refused before expanding them (write the repeated '
                                      'parts out, or nest fewer aliases)'])

    def size(node: yaml.Node) -> int:
        if id(node) in expanded:
            return expanded[id(node)]
        if id(node) in on_path:
            raise ConfigFileError(path, [f'{path}:{line_of(node)}: an alias refers to a node that contains it '
                                         '(a recursive structure is not a config)'])
        on_path.add(id(node))
        total = 1
        children = ([n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode)
                    else node.value if isinstance(node, yaml.SequenceNode) else [])
        for child in children:
            total += size(child)
            if total > ceiling:
                raise too_large(node)
        on_path.discard(id(node))
        expanded[id(node)] = total
        return total

    size(root)
    return problems


def read_yaml(path: str | os.PathLike[str]) -> tuple[Any, Any, list[Problem]]:
    """``(data, root node, problems)`` of a YAML config file; ``data`` is a mapping.

    ``problems`` holds what does not stop reading (duplicate keys; the last value is in ``data``).

    Raises:
        ConfigFileError: the file cannot be read, is not UTF-8 YAML, its aliases expand too far, or
            its top level is no mapping.
    """
    path = os.fspath(path)
    text = _read_text(path)
    loader = ConfigLoader(text)
    try:
        try:
            root = loader.get_single_node()
        except yaml.YAMLError as exc:
            raise _syntax_error(path, exc) from None
        except RecursionError:
            raise ConfigFileError(path, [f'{path}: nested too deeply to be a config']) from None
        if root is None:
            raise ConfigFileError(path, [f'{path}:1: the file is empty; expected a mapping of Config fields'])
        try:
            problems = _check_graph(path, root)
        except RecursionError:
            raise ConfigFileError(path, [f'{path}: nested too deeply to be a config']) from None
        try:
            data = loader.construct_document(root)
        except yaml.YAMLError as exc:
            raise _syntax_error(path, exc) from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise ConfigFileError(path, [f'{path}:1: expected a mapping of Config fields at the top level (simulator, '
                                     f'env_num, env_offset_size, metrics_save_path, task_configs); got {type(data).__name__}'])
    return data, root, problems


# ==================================================================================================
# Validating
def owner_of(data: Any, loc: Sequence[Any], top: type) -> Any:
    """The config class that validates the mapping at ``loc`` of raw ``data`` (``type`` fields resolved)."""
    def model_in(annotation: Any) -> Any:
        import typing

        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return annotation
        for arg in typing.get_args(annotation):
            found = model_in(arg)
            if found is not None:
                return found
        return None

    def refine(cls: Any, node: Any) -> Any:
        if cls is not None and issubclass(cls, TypedCfg) and isinstance(node, dict):
            name = node.get('type')
            if name is None and cls._type_alias:
                name = node.get(cls._type_alias)
            if isinstance(name, str):
                return cls.config_class_for(name) or cls
        return cls

    cls: Any = top
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
            nested = getattr(cls, 'nested_model', None)  # (a dict field checked by a class: metric_config)
            cls = (nested(part) if nested is not None else None) or model_in(field.annotation)
            node = node.get(part) if isinstance(node, dict) else None
        cls = refine(cls, node)
    return cls


#: ``(path, override)``: a value the command line's ``--set`` put at ``path`` (list indices from 0).
Overridden = Sequence[tuple[Sequence[Any], str]]


def override_of(loc: Sequence[Any], overridden: Overridden) -> tuple[Sequence[Any], str] | None:
    """``(path, override)`` of the ``--set`` override whose path ``loc`` lies in (the most specific;
    the last of equals), if any."""
    found: tuple[Sequence[Any], str] | None = None
    parts = [str(p) for p in loc]
    for path, text in overridden:
        if (found is None or len(path) >= len(found[0])) and parts[:len(path)] == [str(p) for p in path]:
            found = (path, text)
    return found


def _in_file(root: Any, loc: Sequence[Any]) -> bool:
    """Whether the file itself holds a value at ``loc``."""
    node = root
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            node = next((value for key, value in reversed(node.value) if key.value == str(part)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
        else:
            return False
        if node is None:
            return False
    return True


def problem_at(root: Any, loc: Sequence[Any], message: str, overridden: Overridden = (), key: bool = False) -> Problem:
    """``(line, message)`` of a problem of the value at ``loc`` (``key``: of the key itself). A value
    set by ``--set`` is reported as that override's (``'--set KEY=VALUE: message'``), at the line of
    the value it replaced, or with no line where the file has none there."""
    override = override_of(loc, overridden)
    if override is not None:
        path, text = override
        return (line_of(node_at(root, path)) if _in_file(root, path) else None), f'--set {text}: {message}'
    return line_of(key_node_at(root, loc) if key else node_at(root, loc)), message


def validation_problems(errors: Sequence[Mapping[str, Any]], root: Any, overridden: Overridden = ()) -> list[Problem]:
    """``(line, message)`` of each pydantic error of a file (from ``ValidationError.errors()``);
    ``overridden``: paths set by ``--set`` (their problems are reported as the override's)."""
    problems: list[Problem] = []
    for error in errors:
        loc = tuple(error['loc'])
        message = error['msg'].removeprefix('Value error, ')
        if error['type'] == 'extra_forbidden':
            problems.append(problem_at(root, loc, f'{path_text(loc)}: {message}', overridden, key=True))
        elif error['type'] == 'missing':
            problems.append(problem_at(root, loc[:-1], f'{path_text(loc)}: missing required field {loc[-1]!r}', overridden))
        else:
            got = '' if 'got ' in message else f' (got {error.get("input")!r})'
            problems.append(problem_at(root, loc, f'{path_text(loc)}: {message}{got}', overridden))
    return problems


def validate_data(data: Any, root: Any, strict: bool, model: type[BaseModel],
                  overridden: Overridden = ()) -> tuple[Any, list[Problem], list[Problem]]:
    """Validate raw config ``data`` as ``model`` (e.g. ``Config``): ``(config or None, problems, unknown keys)``.

    Every error of the file is found at once (those under a path of ``overridden``, set by
    ``--set``, as that override's). Unknown keys are problems when ``strict``; otherwise
    they are returned apart (``(line, warning text)``) and the config is built as the Python
    constructors build it (ignored or kept keys).
    """
    from pydantic import ValidationError

    try:
        with unknown_keys_mode('error'):
            return model.model_validate(data), [], []
    except ValidationError as exc:
        errors = exc.errors()
    unknown = [e for e in errors if e['type'] == 'extra_forbidden']
    others = [e for e in errors if e['type'] != 'extra_forbidden']
    if strict or others:
        return None, validation_problems(unknown + others if strict else others, root, overridden), []
    notes: list[Problem] = []
    for error in unknown:
        loc = tuple(error['loc'])
        owner = owner_of(data, loc[:-1], model)
        keys = known_keys(owner) if owner is not None else set()
        kept = owner is not None and owner.model_config.get('extra') == 'allow'
        name = owner.__name__ if owner is not None else 'this config'
        notes.append((line_of(key_node_at(root, loc)), f'{path_text(loc)}: {warning_message(name, loc[-1], keys, kept)}'))
    with unknown_keys_mode('quiet'):
        return model.model_validate(data), [], notes


def load_yaml_config(path: str | os.PathLike[str], model: type[BaseModel], strict: bool | None = None) -> Any:
    """The config in a YAML file, validated as ``model`` (e.g. :class:`~internutopia.core.config.Config`).

    Unknown keys follow the current mode (:mod:`~internutopia.core.config.unknown_keys`) unless
    ``strict`` says: errors, or :class:`UnknownConfigKeyWarning`\\ s that carry ``file:line``.
    File paths are left as written.

    Raises:
        ConfigFileError: every problem of the file, each as ``'file:line: path: message'``.
    """
    path = os.fspath(path)
    data, root, problems = read_yaml(path)
    mode = current_mode()
    strict = (mode == 'error') if strict is None else strict
    config, invalid, notes = validate_data(data, root, strict, model)
    problems = problems + invalid
    if problems:
        raise ConfigFileError(path, format_problems(path, problems))
    if mode != 'quiet':
        for text in format_problems(path, notes):
            warnings.warn(text, UnknownConfigKeyWarning, stacklevel=caller_stacklevel())
    return config


__all__ = ['MAX_ALIAS_NODES', 'ConfigFileError', 'ConfigLoader', 'Overridden', 'Problem', 'format_problems', 'key_node_at',
           'line_of', 'load_value', 'load_yaml_config', 'node_at', 'override_of', 'owner_of', 'path_text', 'problem_at',
           'read_yaml', 'validate_data', 'validation_problems']
