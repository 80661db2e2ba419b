"""``--set key=value``: change a config file's values from the command line, without editing it.

A key is a dotted path into the YAML data: mapping keys by name, list entries by index
(``task_configs.0.max_steps``). The value is read as YAML (``4`` is an int, ``0.5`` a float,
``true`` a bool, ``null`` None, ``[1, 2, 0]`` a list, anything else a string), so it means what it
would mean in the file. Overrides apply in order to the loaded data, before it is checked, so a
bad value gets the same error as in the file.

A key must already be in the file, or be a field of the config class at that place (a
``simulator`` that does not set ``rendering_dt`` still takes ``simulator.rendering_dt``); any
other key is an error that names the valid ones.

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
from internutopia.core.config.yaml_file import owner_of

__all__ = ['apply_overrides', 'parse_override']


def parse_override(text: str) -> tuple[list[str | int], Any]:
    """``'a.b.0.c=value'`` -> ``(['a', 'b', 0, 'c'], value read as YAML)``.

    Raises:
        ValueError: no ``=``, an empty key or an empty part of it, or a value that is not YAML.
    """
    key, sep, raw = text.partition('=')
    key = key.strip()
    if not sep or not key:
        raise ValueError(f'--set {text}: expected KEY=VALUE, e.g. --set env_num=4 or --set task_configs.0.max_steps=100')
    parts = key.split('.')
    if any(not part for part in parts):
        raise ValueError(f'--set {text}: empty part in the key {key!r}; keys are dotted paths such as simulator.physics_dt')
    try:
        value = yaml.safe_load(raw) if raw.strip() else ''
    except yaml.YAMLError as exc:
        problem = ' '.join(str(getattr(exc, 'problem', None) or exc).split())
        raise ValueError(f'--set {text}: the value {raw!r} is not valid YAML ({problem})') from None
    return [int(part) if part.lstrip('-').isdigit() else part for part in parts], value


def _valid_keys(data: Any, node: dict, loc: list[str | int]) -> list[str]:
    """Keys a mapping at ``loc`` may take: those it has, and the fields of its config class."""
    keys = set(node)
    try:
        model = owner_of(data, loc, Config)  # the config class at a place in the data
    except Exception:  # noqa: BLE001 - an unknown type name: only the keys present are known
        model = None
    if model is not None:
        keys |= set(model.model_fields)
    return sorted(keys)


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


def apply_overrides(data: dict, overrides: Sequence[str]) -> dict:
    """A copy of the YAML ``data`` with ``overrides`` (``'key.path=value'``) applied in order;
    ``data`` is not changed.

    Raises:
        ValueError: a malformed override, an unknown key (the message names the valid keys), an
            index out of range, or a path through something that is not a mapping or a list.
    """
    from internutopia_extension import import_extensions

    import_extensions()  # typed entries ('type: H1Robot') resolve to their config classes
    out = _unshared(data)
    for text in overrides:
        path, value = parse_override(text)
        node: Any = out
        for depth, part in enumerate(path):
            loc = path[:depth]
            last = depth == len(path) - 1
            if isinstance(node, dict):
                if isinstance(part, int) or part not in _valid_keys(out, node, loc):
                    valid = _valid_keys(out, node, loc)
                    raise ValueError(f'--set {text}: unknown key {part!r} at {_where(loc)}; valid keys: {", ".join(valid)}')
                if last:
                    node[part] = value
                elif part not in node or node[part] is None:
                    node[part] = {}  # a section the file leaves out (e.g. simulator)
                node = node[part]
            elif isinstance(node, list):
                if not isinstance(part, int) or not -len(node) <= part < len(node):
                    raise ValueError(f'--set {text}: {_where(loc)} is a list of {len(node)} entries; use an index '
                                     f'0..{len(node) - 1}, got {part!r}')
                if last:
                    node[part] = value
                node = node[part]
            else:
                raise ValueError(f'--set {text}: {_where(loc)} is a value ({node!r}), not a mapping or a list; '
                                 f'it has no {part!r}')
    return out
