"""``--set key=value``: change a config file's values from the command line, without editing it.

A key is a dotted path into the YAML data: mapping keys by name, list entries by index
(``task_configs.0.max_steps``). The value is read as YAML (``4`` is an int, ``0.5`` a float,
``true`` a bool, ``null`` None, ``[1, 2, 0]`` a list, anything else a string), so it means what it
would mean in the file. Overrides apply in order to the loaded data, before it is checked, so a
bad value gets the same error as in the file.

A key must already be in the file, or be a field of the config class at that place (a
``simulator`` that does not set ``rendering_dt`` still takes ``simulator.rendering_dt``); any
other key is an error that names the valid ones. A free dict (``reward_settings``, the
``metric_config`` of a metric that declares no options) takes any key. A list the file leaves
out has no entries to index: set the whole list (``--set task_configs.0.robots.0.controllers=[...]``).

>>> data = {'env_num': 1, 'task_configs': [{'type': 'FiniteStepTask', 'max_steps': 10}]}
>>> changed = apply_overrides(data, ['env_num=4', 'task_configs.0.max_steps=100'])
>>> changed['env_num'], changed['task_configs'][0]['max_steps'], data['env_num']
(4, 100, 1)
>>> apply_overrides(data, ['env_nm=4'])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: --set env_nm=4: unknown key 'env_nm' at the top level; valid keys: env_num, env_offset_size, ...
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import yaml

from internutopia.core.config import Config
from internutopia.core.config.yaml_file import MAX_ALIAS_NODES, load_value, owner_of

__all__ = ['apply_overrides', 'parse_override']


def parse_override(text: str) -> tuple[list[str | int], Any]:
    """``'a.b.0.c=value'`` -> ``(['a', 'b', 0, 'c'], value read as YAML)``.

    Raises:
        ValueError: no ``=``, an empty key or an empty part of it, or a value that is not YAML, that
            is nested too deeply, or whose aliases make it contain itself or expand past
            :data:`~internutopia.core.config.yaml_file.MAX_ALIAS_NODES` values (refused in a file too).
    """
    key, sep, raw = text.partition('=')
    key = key.strip()
    if not sep or not key:
        raise ValueError(f'--set {text}: expected KEY=VALUE, e.g. --set env_num=4 or --set task_configs.0.max_steps=100')
    parts = key.split('.')
    if any(not part for part in parts):
        raise ValueError(f'--set {text}: empty part in the key {key!r}; keys are dotted paths such as simulator.physics_dt')
    try:
        value = load_value(raw) if raw.strip() else ''
        _expanded_size(value, set(), {})
    except yaml.YAMLError as exc:
        problem = ' '.join(str(getattr(exc, 'problem', None) or exc).split())
        raise ValueError(f'--set {text}: the value {raw!r} is not valid YAML ({problem})') from None
    except RecursionError:
        raise ValueError(f'--set {text}: the value is nested too deeply to be a config value') from None
    except _Unusable as exc:
        raise ValueError(f'--set {text}: {exc}') from None
    return [int(part) if part.lstrip('-').isdigit() else part for part in parts], value


class _Unusable(ValueError):
    """A ``--set`` value that contains itself or expands too far through its aliases."""


def _expanded_size(value: Any, on_path: set[int], sizes: dict[int, int]) -> int:
    """How many values ``value`` holds, its shared parts (YAML aliases: ``&a [1, 2]``, ``*a``)
    counted each time they are used; the checks a file's aliases get, so that a value the config's
    checks then walk (a loop would recurse until Python gives up) is refused with a message."""
    if not isinstance(value, (dict, list)):
        return 1
    if id(value) in sizes:
        return sizes[id(value)]
    if id(value) in on_path:
        raise _Unusable('an alias refers to a value that contains it (a recursive structure is no config value)')
    on_path.add(id(value))
    total = 1
    for item in value.values() if isinstance(value, dict) else value:
        total += _expanded_size(item, on_path, sizes)
        if total > MAX_ALIAS_NODES:
            raise _Unusable(f'its aliases expand the value past {MAX_ALIAS_NODES:_} values; write it out, or nest '
                            'fewer aliases')
    on_path.discard(id(value))
    sizes[id(value)] = total
    return total


def _field_at(data: Any, loc: Sequence[str | int]) -> Any:
    """The pydantic field that holds the value at ``loc`` (a key of a config class), else ``None``."""
    if not loc or isinstance(loc[-1], int):
        return None
    try:
        parent = owner_of(data, list(loc[:-1]), Config)
    except Exception:  # noqa: BLE001 - an unknown type name: nothing is known there
        return None
    return parent.model_fields.get(loc[-1]) if parent is not None else None


def _takes_any_key(data: Any, loc: Sequence[str | int]) -> bool:
    """Whether the mapping at ``loc`` is a free dict (``reward_settings``, a metric's own
    ``metric_config``), or lies inside one: any key goes there."""
    for depth in range(len(loc), 0, -1):
        field = _field_at(data, loc[:depth])
        if field is None:
            continue
        try:
            model = owner_of(data, list(loc[:depth]), Config)
        except Exception:  # noqa: BLE001
            model = None
        return model is None and _is_mapping_type(field.annotation)
    return False


def _is_mapping_type(annotation: Any) -> bool:
    import typing

    if annotation is Any or annotation is dict:
        return True
    origin = typing.get_origin(annotation)
    if origin is dict:
        return True
    return any(_is_mapping_type(arg) for arg in typing.get_args(annotation) if arg is not type(None))


def _is_list_type(annotation: Any) -> bool:
    import typing

    origin = typing.get_origin(annotation)
    if origin is list:
        return True
    return origin is not dict and any(_is_list_type(arg) for arg in typing.get_args(annotation))


def _valid_keys(data: Any, node: dict, loc: list[str | int]) -> list[str] | None:
    """Keys a mapping at ``loc`` may take: those it has, and the fields of its config class;
    ``None`` for a free dict, which takes any key."""
    if _takes_any_key(data, loc):
        return None
    keys = set(node)
    try:
        model = owner_of(data, loc, Config)  # the config class at a place in the data
    except Exception:  # noqa: BLE001 - an unknown type name: only the keys present are known
        model = None
    if model is not None:
        keys |= set(model.model_fields)
    # (As text: a file may hold keys YAML reads as numbers, ``1: 2``, which no config field is;
    # they are listed, and cannot be mixed with the names in a sort.)
    return sorted({str(key) for key in keys})


def _unshared(value: Any) -> Any:
    """A deep copy in which nothing is shared: YAML anchors (``<<: *episode``) make entries share
    their nested lists and mappings, and an override of one entry must not change the others."""
    if isinstance(value, dict):
        return {key: _unshared(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unshared(item) for item in value]
    return copy.copy(value)


def _where(loc: Sequence[str | int]) -> str:
    return 'the top level' if not loc else '.'.join(str(part) for part in loc)


def apply_overrides(data: dict, overrides: Sequence[str], applied: list[tuple[tuple[str | int, ...], str]] | None = None) -> dict:
    """A copy of the YAML ``data`` with ``overrides`` (``'key.path=value'``) applied in order;
    ``data`` is not changed. ``applied``, when given, receives ``(path, override)`` for each (list
    indices counted from 0), so problems found under a path can be reported as the override's.

    Raises:
        ValueError: a malformed override, an unknown key (the message names the valid keys), an
            index out of range, a list field the file leaves out indexed into, or a path through
            something that is not a mapping or a list.
    """
    from internutopia.core.plugins import load_extensions

    load_extensions()  # typed entries ('type: H1Robot') resolve to their config classes (installed extensions' too)
    out = _unshared(data)
    for text in overrides:
        path, value = parse_override(text)
        node: Any = out
        where: list[str | int] = []  # the path so far, list indices counted from 0
        created: tuple[str | int, ...] | None = None  # the first section this override made, if any
        for depth, part in enumerate(path):
            loc = path[:depth]
            last = depth == len(path) - 1
            if isinstance(node, dict):
                valid = _valid_keys(out, node, where)
                if valid is None:  # a free dict: any key (a digit too, as text)
                    part = str(part)
                elif isinstance(part, int) or part not in valid:
                    raise ValueError(f'--set {text}: unknown key {part!r} at {_where(loc)}; valid keys: '
                                     f'{", ".join(valid) or "(none known at this place)"}')
                if last:
                    node[part] = value
                elif part not in node or node[part] is None:
                    field = _field_at(out, [*where, part])
                    if isinstance(path[depth + 1], int) or (field is not None and _is_list_type(field.annotation)):
                        at = _where([*loc, part])
                        raise ValueError(f'--set {text}: {at} is not in the file, so it has no entry {path[depth + 1]!r}; '
                                         f'set the whole list instead, e.g. --set {at}=[...]')
                    node[part] = {}  # a section the file leaves out (e.g. simulator)
                    if created is None:
                        created = (*where, part)
                node = node[part]
            elif isinstance(node, list):
                if not isinstance(part, int) or not -len(node) <= part < len(node):
                    raise ValueError(f'--set {text}: {_where(loc)} is a list of {len(node)} entries; use an index '
                                     f'0..{len(node) - 1}, got {part!r}')
                part %= len(node)
                if last:
                    node[part] = value
                node = node[part]
            else:
                raise ValueError(f'--set {text}: {_where(loc)} is a value ({node!r}), not a mapping or a list; '
                                 f'it has no {part!r}')
            where.append(part)
        if applied is not None:  # (a section it made is all its own)
            applied.append((created if created is not None else tuple(where), text))
    return out
