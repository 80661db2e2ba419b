"""Observation assembly: per-slot dicts for the contract's API, ``(env_num, ...)`` arrays for the array API.

Each entity group and task gathers its observations once per step as arrays over its member
slots; :func:`split_rows` turns them into per-slot dicts and :func:`scatter` into slot-indexed arrays.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import numpy as np

from internutopia.core.robot.base import Entity
from internutopia.core.runner.groups import EntityGroups
from internutopia.core.runner.terms import Terms
from internutopia.core.task.base import BaseTask

_BASE_TASK_OBSERVATIONS = BaseTask.get_observations  # tasks that keep it observe nothing


def split_rows(tree: Any, count: int, wrap: str | None = None) -> list[Any]:
    """Split a nested dict of arrays with a leading ``count`` axis into ``count`` per-row dicts.

    A row of a multi-dimensional array is a view of it; an element of a one-dimensional array
    (a flag, a counter) is a Python scalar, as in InternUtopia's observations. With ``wrap``,
    each row dict is wrapped as ``{wrap: row}``.

    >>> split_rows({'a': np.arange(2), 'b': {'c': np.zeros((2, 3))}}, 2)[1]
    {'a': 1, 'b': {'c': array([0., 0., 0.])}}
    >>> split_rows({'finished': np.array([True, False])}, 2, wrap='h1')
    [{'h1': {'finished': True}}, {'h1': {'finished': False}}]
    """
    leaves: list[Any] = []
    shape = _shape_of(tree, leaves)
    if not leaves:
        return [{wrap: {}} if wrap is not None else {} for _ in range(count)]
    for leaf in leaves:
        if len(leaf) != count:
            raise ValueError(f'observation array of length {len(leaf)} where {count} rows were expected')
    # Python scalars from one-dimensional arrays: one C call per leaf, no numpy scalar per row.
    columns = [leaf.tolist() if getattr(leaf, 'ndim', 0) == 1 else leaf for leaf in leaves]
    return _rows_builder(shape, wrap)(*columns)


def _shape_of(tree: Any, leaves: list[Any]) -> Any:
    """The dict structure of ``tree`` with leaves replaced by their index in ``leaves``."""
    if isinstance(tree, dict):
        return tuple((key, _shape_of(value, leaves)) for key, value in tree.items())
    leaves.append(tree)
    return len(leaves) - 1


@functools.lru_cache(maxsize=256)
def _rows_builder(shape: Any, wrap: str | None) -> Any:
    """A compiled ``(*columns) -> [nested dict per row]`` function for one observation structure.

    Observations have the same structure every step, so the list comprehension over the rows,
    with the nested dict literal inside it, is generated once and then runs at the speed of
    Python's own dict displays (the columns are unpacked into locals, no indexing per leaf).
    """

    def literal(node: Any) -> str:
        if isinstance(node, int):
            return f'c{node}'
        return '{' + ', '.join(f'{key!r}: {literal(value)}' for key, value in node) + '}'

    count = _count_leaves(shape)
    names = ', '.join(f'c{i}' for i in range(count))
    body = literal(shape) if wrap is None else f'{{{wrap!r}: {literal(shape)}}}'
    source = f'lambda {names}: [{body} for {names}, in zip({names})]'
    return eval(source)  # noqa: S307 - source built from dict keys (repr) and generated names only


def _count_leaves(shape: Any) -> int:
    if isinstance(shape, int):
        return 1
    return sum(_count_leaves(value) for _, value in shape)


def scatter(target: dict[str, Any], tree: dict[str, Any], rows: np.ndarray, env_num: int, where: tuple[str, ...]) -> None:
    """Write ``tree`` (arrays with one row per slot of ``rows``) into ``target``'s ``(env_num, ...)`` arrays."""
    every_slot = len(rows) == env_num
    for key, value in tree.items():
        if isinstance(value, dict):
            scatter(target.setdefault(key, {}), value, rows, env_num, (*where, key))
            continue
        value = np.asarray(value)
        array = target.get(key)
        if array is None:
            if every_slot and value.flags.owndata:
                target[key] = value  # every slot, in slot order (rows are sorted): already the result
                continue
            array = target[key] = np.zeros((env_num,) + value.shape[1:], dtype=value.dtype)
        elif array.shape[1:] != value.shape[1:]:
            raise ValueError(f'observation {".".join((*where, key))} has shape {value.shape[1:]} in some slots and '
                             f'{array.shape[1:]} in others; the array API needs one shape per robot name')
        array[rows] = value


def adopt(tree: dict[str, Any]) -> dict[str, Any]:
    """``tree`` (arrays with a row per slot, every slot, in slot order) as the array API's result:
    arrays that own their data are used as they are, anything else is copied into one that does.

    What :func:`scatter` gives for a group covering every slot, without building a new tree.
    """
    for key, value in tree.items():  # runs every step: the usual leaf (an array of its own) takes one test
        kind = type(value)
        if kind is _NDARRAY:
            if value.base is None:
                continue
        elif kind is dict:
            if value:  # (controllers and sensors often observe nothing)
                adopt(value)
            continue
        tree[key] = np.array(value)  # a view (of state, maybe) or a list: a copy of its own
    return tree


_NDARRAY = np.ndarray


def entity_observations(groups: Iterable[Entity], slots: np.ndarray, env_num: int) -> list[dict[str, Any]]:
    """Per-slot ``{entity_name: obs}`` for ``slots`` from robot or object groups.

    Each group gathers its observations once, as arrays over its member slots; only the
    per-slot dicts are built per slot.
    """
    groups = list(groups)
    if len(groups) == 1 and np.array_equal(groups[0].slots, slots):
        # One group over exactly these slots (one robot type everywhere): build the dicts directly.
        return split_rows(groups[0].get_obs(slots), len(slots), wrap=groups[0].name)
    out: list[dict[str, Any]] = [{} for _ in slots]
    row_of = np.full(env_num, -1, dtype=np.intp)
    row_of[slots] = np.arange(len(slots))
    for group in groups:
        members = group.slots[row_of[group.slots] >= 0]
        if len(members):
            for slot, entity_obs in zip(members.tolist(), split_rows(group.get_obs(members), len(members)), strict=True):
                out[row_of[slot]][group.name] = entity_obs
    return out


class Observer:
    """Builds the observations of slots from ``groups``' robots and ``terms``' tasks."""

    def __init__(self, groups: EntityGroups, terms: Terms) -> None:
        self.groups = groups
        self.terms = terms
        self.env_num = terms.env_num

    def observe(self, slots: np.ndarray) -> list[dict[str, Any]]:
        """Per-slot observation dicts for ``slots``: ``{robot_name: {...}}``."""
        if not len(slots):
            return []
        out = entity_observations(self.groups.robots.values(), slots, self.env_num)
        row_of = np.full(self.env_num, -1, dtype=np.intp)
        row_of[slots] = np.arange(len(slots))
        for task in self.terms.tasks.values():
            if type(task).get_observations is _BASE_TASK_OBSERVATIONS:
                continue  # none
            members = self.terms.members_of(task, slots)
            extra = task.get_observations(members) if len(members) else {}
            if extra:
                for slot, task_obs in zip(members, split_rows(extra, len(members)), strict=True):
                    out[row_of[slot]].update(task_obs)
        return out

    def entity_observations(self, groups: Iterable[Entity], slots: np.ndarray) -> list[dict[str, Any]]:
        """Per-slot ``{entity_name: obs}`` for ``slots`` from robot or object groups (see :func:`entity_observations`)."""
        return entity_observations(groups, slots, self.env_num)

    def observe_arrays(self, slots: np.ndarray) -> dict[str, Any]:
        """Observations of ``slots`` as ``{robot_name: tree of (env_num, ...) arrays}``."""
        out: dict[str, Any] = {}
        every_slot = len(slots) == self.env_num
        if not every_slot:
            member = np.zeros(self.env_num, dtype=bool)
            member[slots] = True
        for group in self.groups.robots.values():
            rows = group.slots if every_slot else group.slots[member[group.slots]]
            if len(rows):
                if not group.array_api:
                    raise ValueError(f'step_arrays: robot {group.name!r} is an upstream-style (per-slot) class '
                                     f'({type(group).__name__}) whose observations are per-slot dicts; use step()')
                if len(rows) == self.env_num and group.name not in out:
                    out[group.name] = adopt(group.get_obs(rows))  # one group in every slot: its arrays are the result
                else:
                    scatter(out.setdefault(group.name, {}), group.get_obs(rows), rows, self.env_num, (group.name,))
        for task in self.terms.tasks.values():
            if not task.array_api:
                raise ValueError(f'step_arrays: the task {type(task).__name__} is upstream-style (per slot); its '
                                 'observations are per-slot dicts; use step()')
            if type(task).get_observations is _BASE_TASK_OBSERVATIONS:
                continue  # none
            rows = self.terms.members_of(task, slots)
            extra = task.get_observations(rows) if len(rows) else {}
            if extra:
                scatter(out, extra, rows, self.env_num, ('task observations',))
        return out

