"""Observation assembly: per-slot dicts for the contract's API, ``(env_num, ...)`` arrays for the array API.

Each entity group and task gathers its observations once per step as arrays over its member
slots; :func:`split_rows` turns them into per-slot dicts and :func:`scatter` into slot-indexed arrays.
"""

from __future__ import annotations

import functools
from typing import Any, Iterable

import numpy as np

from internutopia.core.robot.base import Entity


def split_rows(tree: Any, count: int) -> list[Any]:
    """Split a nested dict of arrays with a leading ``count`` axis into ``count`` per-row dicts.

    >>> split_rows({'a': np.arange(2), 'b': {'c': np.zeros((2, 3))}}, 2)[1]
    {'a': np.int64(1), 'b': {'c': array([0., 0., 0.])}}
    """
    leaves: list[Any] = []
    builder = _row_builder(_shape_of(tree, leaves))
    columns = [list(leaf) if len(leaf) == count else _bad_leaf(leaf, count) for leaf in leaves]
    return [builder(row) for row in zip(*columns)] if columns else [{} for _ in range(count)]


def _shape_of(tree: Any, leaves: list[Any]) -> Any:
    """The dict structure of ``tree`` with leaves replaced by their index in ``leaves``."""
    if isinstance(tree, dict):
        return tuple((key, _shape_of(value, leaves)) for key, value in tree.items())
    leaves.append(tree)
    return len(leaves) - 1


def _bad_leaf(leaf: Any, count: int) -> list[Any]:
    raise ValueError(f'observation array of length {len(leaf)} where {count} rows were expected')


@functools.lru_cache(maxsize=256)
def _row_builder(shape: Any) -> Any:
    """A compiled ``row -> nested dict`` function for one observation structure.

    Observations have the same structure every step, so the nested dict literal is generated once
    and then built at the speed of Python's own dict displays.
    """

    def literal(node: Any) -> str:
        if isinstance(node, int):
            return f'row[{node}]'
        return '{' + ', '.join(f'{key!r}: {literal(value)}' for key, value in node) + '}'

    return eval(f'lambda row: {literal(shape)}')  # noqa: S307 - source built from dict keys (repr) only


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


class ObservationAssembly:
    """Observation half of the runner (uses its ``robot_groups``, ``tasks``, ``members_of``, ``env_num``)."""

    def observe(self, slots: np.ndarray) -> list[dict[str, Any]]:
        """Per-slot observation dicts for ``slots``: ``{robot_name: {...}}``."""
        if not len(slots):
            return []
        out = self.entity_observations(self.robot_groups.values(), slots)
        row_of = np.full(self.env_num, -1, dtype=np.intp)
        row_of[slots] = np.arange(len(slots))
        for task in self.tasks.values():
            members = self.members_of(task, slots)
            extra = task.get_observations(members) if len(members) else {}
            if extra:
                for slot, task_obs in zip(members, split_rows(extra, len(members))):
                    out[row_of[slot]].update(task_obs)
        return out

    def entity_observations(self, groups: Iterable[Entity], slots: np.ndarray) -> list[dict[str, Any]]:
        """Per-slot ``{entity_name: obs}`` for ``slots`` from robot or object groups.

        Each group gathers its observations once, as arrays over its member slots; only the
        per-slot dicts are built per slot.
        """
        groups = list(groups)
        if len(groups) == 1 and np.array_equal(groups[0].slots, slots):
            # One group over exactly these slots (one robot type everywhere): build the dicts directly.
            name = groups[0].name
            return [{name: entity_obs} for entity_obs in split_rows(groups[0].get_obs(slots), len(slots))]
        out: list[dict[str, Any]] = [{} for _ in slots]
        row_of = np.full(self.env_num, -1, dtype=np.intp)
        row_of[slots] = np.arange(len(slots))
        for group in groups:
            members = group.slots[row_of[group.slots] >= 0]
            if len(members):
                for slot, entity_obs in zip(members.tolist(), split_rows(group.get_obs(members), len(members))):
                    out[row_of[slot]][group.name] = entity_obs
        return out

    def observe_arrays(self, slots: np.ndarray) -> dict[str, Any]:
        """Observations of ``slots`` as ``{robot_name: tree of (env_num, ...) arrays}``."""
        out: dict[str, Any] = {}
        every_slot = len(slots) == self.env_num
        if not every_slot:
            member = np.zeros(self.env_num, dtype=bool)
            member[slots] = True
        for group in self.robot_groups.values():
            rows = group.slots if every_slot else group.slots[member[group.slots]]
            if len(rows):
                if getattr(group, 'slot_class', None) is not None:
                    raise ValueError(f'step_arrays: robot {group.name!r} is an upstream-style (per-slot) class '
                                     f'({group.slot_class.__name__}) whose observations are per-slot dicts; use step()')
                scatter(out.setdefault(group.name, {}), group.get_obs(rows), rows, self.env_num, (group.name,))
        for task in self.tasks.values():
            if getattr(task, 'observes_per_slot', False):
                raise ValueError(f'step_arrays: the task {type(task).__name__} ({task.slot_class.__name__}) is '
                                 'upstream-style (per slot); its observations are per-slot dicts; use step()')
            rows = self.members_of(task, slots)
            extra = task.get_observations(rows) if len(rows) else {}
            if extra:
                scatter(out, extra, rows, self.env_num, ('task observations',))
        return out

