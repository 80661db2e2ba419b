"""Observation assembly: per-slot dicts for the contract's API, ``(env_num, ...)`` arrays for the array API.

Each entity group and task gathers its observations once per step as arrays over its member
slots; :func:`split_rows` turns them into per-slot dicts and :func:`scatter` into slot-indexed arrays.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import numpy as np

from internutopia.core.entity import Entity
from internutopia.core.runner.groups import EntityGroups
from internutopia.core.runner.terms import Terms
from internutopia.core.task.base import BaseTask

_BASE_TASK_OBSERVATIONS = BaseTask.get_observations  # tasks that keep it observe nothing

#: Which entries of an array observation a caller reads: top-level entry (a robot's name, a task
#: observation's key) -> the names of its children to keep, or ``None`` for all of it.
ObservedEntries = dict[str, frozenset[str] | None]


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
    return RowSplitter()(tree, count, wrap)


class RowSplitter:
    """:func:`split_rows` for a caller that splits trees of one structure step after step.

    It keeps the function generated for the last structure it saw. That function checks that
    ``tree`` still has that structure (the same dict types and keys in the same order, the same
    leaf types and one-dimensional leaves where they were) and builds the rows, so a step costs
    neither a walk of the tree in Python nor a cache lookup; another structure is split the
    general way (and its function kept instead).

    >>> splitter = RowSplitter()
    >>> splitter({'a': np.arange(2)}, 2, wrap='r'), splitter({'a': np.zeros((2, 1))}, 2)[0]
    ([{'r': {'a': 0}}, {'r': {'a': 1}}], {'a': array([0.])})
    """

    def __init__(self) -> None:
        self._split: Any = None  # the generated function of the last structure, or None

    def __call__(self, tree: Any, count: int, wrap: str | None = None) -> list[Any]:
        split = self._split
        if split is not None:
            rows = split(tree, count, wrap)
            if rows is not _OTHER:
                return rows
        split = self._split = _splitter(_signature(tree), wrap)
        return split(tree, count, wrap)


_OTHER = object()  # a generated split's answer to a tree of another structure


def _signature(tree: Any) -> Any:
    """What the generated split of ``tree`` depends on: for a dict, its type and ``(key,
    signature)`` pairs in order; for a leaf, its type and whether it is one-dimensional."""
    if isinstance(tree, dict):
        return (type(tree), tuple((key, _signature(value)) for key, value in tree.items()))
    return (type(tree), getattr(tree, 'ndim', 0) == 1)


@functools.lru_cache(maxsize=256)
def _splitter(signature: Any, wrap: str | None) -> Any:
    """A generated ``(tree, count, wrap) -> rows`` for trees of ``signature``; it returns
    :data:`_OTHER` for a tree of another structure (or another ``wrap``).

    Observations have the same structure every step, so the function is generated once: it
    reads the leaves with plain subscripts, checking the structure as it goes, turns
    one-dimensional leaves into lists of Python scalars (one C call each) and builds the rows in
    one list comprehension with the nested dict display inside it, so that a row costs little
    more than its own dicts and views.
    """
    constants: dict[str, Any] = {'_OTHER': _OTHER, '_length_error': _length_error, '_wrap': wrap}
    checks: list[str] = []
    leaves: list[tuple[str, bool]] = []  # (local name, one-dimensional)

    def constant(value: Any) -> str:
        name = f'k{len(constants)}'
        constants[name] = value
        return name

    def key_source(key: Any) -> str:
        return repr(key) if type(key) in (str, int) else constant(key)

    def walk(node: Any, name: str) -> str:
        """Checks of ``name``, of signature ``node``, and its value in a row's display."""
        kind, shape = node
        if not isinstance(shape, tuple):  # a leaf
            if kind is np.ndarray:
                ndim = f'{name}.ndim ' + ('!= 1' if shape else '== 1')
            else:
                ndim = f"(getattr({name}, 'ndim', 0) == 1) is not {shape}"
            checks.append(f'if type({name}) is not {constant(kind)} or {ndim}: return _OTHER')
            leaves.append((name, shape))
            return name
        keys = tuple(key for key, _ in shape)
        same_keys = f'tuple({name}) != {constant(keys)}' if keys else name
        checks.append(f'if type({name}) is not {constant(kind)} or {same_keys}: return _OTHER')
        parts: list[str] = []
        for key, child in shape:
            child_name = f'{name}_{len(parts)}'
            checks.append(f'{child_name} = {name}[{key_source(key)}]')
            parts.append(f'{key_source(key)}: {walk(child, child_name)}')
        return '{' + ', '.join(parts) + '}'

    row = walk(signature, 't')
    lines = ['def split(t, count, wrap):', '    if wrap != _wrap: return _OTHER']
    lines += [f'    {check}' for check in checks]
    if not leaves:  # nothing observed: an empty dict per row
        lines.append(f'    return [{{{key_source(wrap)}: {{}}}} for _ in range(count)]' if wrap is not None
                     else '    return [{} for _ in range(count)]')
    else:
        lines += [f'    if len({name}) != count: raise _length_error(len({name}), count)' for name, _ in leaves]
        lines += [f'    {name} = {name}.tolist()' for name, flat in leaves if flat]  # Python scalars, one C call per leaf
        # Lists first: zip stops at its first exhausted iterator, and an array's iterator ends
        # by raising (and formatting) an IndexError.
        names = ', '.join([name for name, flat in leaves if flat] + [name for name, flat in leaves if not flat])
        if wrap is not None:
            row = f'{{{key_source(wrap)}: {row}}}'
        lines.append(f'    return [{row} for {names}, in zip({names})]')
    namespace = dict(constants)
    exec('\n'.join(lines), namespace)  # noqa: S102 - source of generated names, key reprs and constants' names only
    return namespace['split']


def _length_error(length: int, count: int) -> ValueError:
    return ValueError(f'observation array of length {length} where {count} rows were expected')


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


def merge_rows(target: dict[str, Any], tree: dict[str, Any], rows: np.ndarray) -> None:
    """Copy the rows ``rows`` of ``tree``'s ``(env_num, ...)`` arrays into ``target``'s (made as
    zeros where missing): the observations of several steps, each slot's from its own step."""
    if not len(rows):
        return
    for key, value in tree.items():
        if isinstance(value, dict):
            merge_rows(target.setdefault(key, {}), value, rows)
            continue
        array = target.get(key)
        if array is None:
            array = target[key] = np.zeros_like(value)
        array[rows] = value[rows]


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


class TreeAdopter:
    """:func:`adopt` for a caller that adopts trees of one structure step after step: the function
    generated for the last structure seen tests each leaf in straight-line code (no walk of the
    tree), and a tree of another structure is adopted the general way (and its function kept).

    >>> adopter = TreeAdopter()
    >>> state = np.zeros((2, 3))
    >>> tree = adopter({'a': state[:, :2], 'b': {'c': np.ones(2)}})
    >>> tree['a'].base is None, np.shares_memory(tree['a'], state)
    (True, False)
    """

    def __init__(self) -> None:
        self._adopt: Any = None

    def __call__(self, tree: dict[str, Any]) -> dict[str, Any]:
        generated = self._adopt
        if generated is not None and generated(tree) is not _OTHER:
            return tree
        adopt(tree)  # (idempotent: what a generated function copied before it gave up stays adopted)
        self._adopt = _adopter(_signature(tree))
        return tree


@functools.lru_cache(maxsize=256)
def _adopter(signature: Any) -> Any:
    """A generated ``tree -> None`` doing :func:`adopt` on trees of ``signature``; it returns
    :data:`_OTHER` at the first node of another structure."""
    constants: dict[str, Any] = {'_OTHER': _OTHER, '_array': np.array, '_NDARRAY': _NDARRAY}
    lines = ['def adopt(t):']

    def constant(value: Any) -> str:
        name = f'k{len(constants)}'
        constants[name] = value
        return name

    def walk(node: Any, name: str) -> None:
        kind, shape = node
        if kind is not dict:
            return  # (adopt's leaves; a dict subclass is left to the general path)
        keys = tuple(key for key, _ in shape)
        lines.append(f'    if type({name}) is not dict or tuple({name}) != {constant(keys)}: return _OTHER')
        for position, (key, child) in enumerate(shape):
            child_name = f'{name}_{position}'
            key_source = constant(key)
            lines.append(f'    {child_name} = {name}[{key_source}]')
            if child[0] is dict:
                walk(child, child_name)
            elif child[0] is _NDARRAY:
                lines.append(f'    if type({child_name}) is not _NDARRAY: return _OTHER')
                lines.append(f'    if {child_name}.base is not None: {name}[{key_source}] = _array({child_name})')
            else:
                lines.append(f'    if type({child_name}) is not {constant(child[0])}: return _OTHER')
                lines.append(f'    {name}[{key_source}] = _array({child_name})')

    walk(signature, 't')
    if signature[0] is not dict:
        lines.append('    return _OTHER')
    namespace = dict(constants)
    exec('\n'.join(lines), namespace)  # noqa: S102 - generated from constants' names only
    return namespace['adopt']


_NDARRAY = np.ndarray


def entity_observations(groups: Iterable[Entity], slots: np.ndarray, env_num: int,
                        splitters: dict[Any, RowSplitter] | None = None) -> list[dict[str, Any]]:
    """Per-slot ``{entity_name: obs}`` for ``slots`` from robot or object groups.

    Each group gathers its observations once, as arrays over its member slots; only the
    per-slot dicts are built per slot. ``splitters`` keeps a :class:`RowSplitter` per group name
    for a caller that observes step after step.
    """
    groups = list(groups)
    splitters = {} if splitters is None else splitters
    if len(groups) == 1 and _same_slots(groups[0].slots, slots, env_num):
        # One group over exactly these slots (one robot type everywhere): build the dicts directly.
        group = groups[0]
        return _splitter_of(splitters, group.name)(group.get_obs(slots), len(slots), group.name)
    out: list[dict[str, Any]] = [{} for _ in slots]
    row_of = np.full(env_num, -1, dtype=np.intp)
    row_of[slots] = np.arange(len(slots))
    for group in groups:
        members = group.slots[row_of[group.slots] >= 0]
        if len(members):
            rows = _splitter_of(splitters, group.name)(group.get_obs(members), len(members))
            for row, entity_obs in zip(row_of[members].tolist(), rows, strict=True):
                out[row][group.name] = entity_obs
    return out


def _same_slots(members: np.ndarray, slots: np.ndarray, env_num: int) -> bool:
    """Whether a group's ``members`` are ``slots`` (both sorted and distinct): certain when both
    are every slot, else compared (as bytes: ``np.array_equal`` costs ten times more)."""
    if len(members) != len(slots):
        return False
    if members is slots or len(slots) == env_num:
        return True
    if members.dtype == slots.dtype:
        return members.tobytes() == slots.tobytes()
    return bool(np.array_equal(members, slots))


def _splitter_of(splitters: dict[Any, RowSplitter], key: Any) -> RowSplitter:
    splitter = splitters.get(key)
    if splitter is None:
        splitter = splitters[key] = RowSplitter()
    return splitter


class Observer:
    """Builds the observations of slots from ``groups``' robots and ``terms``' tasks."""

    def __init__(self, groups: EntityGroups, terms: Terms) -> None:
        self.groups = groups
        self.terms = terms
        self.env_num = terms.env_num
        #: A :class:`RowSplitter` per robot name, and per task type under ``('task', type)``.
        self._splitters: dict[Any, RowSplitter] = {}
        #: A :class:`TreeAdopter` per robot name (the array API's results of groups in every slot).
        self._adopters: dict[Any, TreeAdopter] = {}
        #: The last :meth:`arrays_ready` answer: ``(groups' robots, task types, answer)``.
        self._arrays_ready: tuple[Any, int, bool] | None = None

    def observe(self, slots: np.ndarray) -> list[dict[str, Any]]:
        """Per-slot observation dicts for ``slots``: ``{robot_name: {...}}`` and the tasks' entries.

        A task whose ``replaces_robot_observations`` is true (an upstream-style task, whose
        ``get_observations()`` gives its robots' entries) observes its slots alone: their robot
        groups are not asked, so each robot is observed once a step."""
        if not len(slots):
            return []
        robot_slots = slots
        for task in self.terms.tasks.values():
            if getattr(task, 'replaces_robot_observations', False):
                members = self.terms.members_of(task, slots)
                if len(members):
                    robot_slots = np.setdiff1d(robot_slots, members)
        if robot_slots is slots:
            out = entity_observations(self.groups.robots.values(), slots, self.env_num, self._splitters)
        else:
            # An upstream-style task's observation is its slot's whole observation, robots included
            # (InternUtopia's): its robots are observed by it alone, once a step.
            out = [{} for _ in slots]
            if len(robot_slots):
                position = {slot: index for index, slot in enumerate(np.asarray(slots).tolist())}
                observed = entity_observations(self.groups.robots.values(), robot_slots, self.env_num, self._splitters)
                for slot, robot_obs in zip(robot_slots.tolist(), observed, strict=True):
                    out[position[slot]] = robot_obs
        row_of = None
        for task in self.terms.tasks.values():
            if type(task).get_observations is _BASE_TASK_OBSERVATIONS:
                continue  # none
            members = self.terms.members_of(task, slots)
            extra = task.get_observations(members) if len(members) else {}
            if extra:
                if row_of is None:
                    row_of = np.full(self.env_num, -1, dtype=np.intp)
                    row_of[slots] = np.arange(len(slots))
                rows = _splitter_of(self._splitters, ('task', type(task)))(extra, len(members))
                for row, task_obs in zip(row_of[members].tolist(), rows, strict=True):
                    out[row].update(task_obs)
        return out

    def entity_observations(self, groups: Iterable[Entity], slots: np.ndarray) -> list[dict[str, Any]]:
        """Per-slot ``{entity_name: obs}`` for ``slots`` from robot or object groups (see :func:`entity_observations`)."""
        return entity_observations(groups, slots, self.env_num)

    def arrays_ready(self) -> bool:
        """Whether every robot group and task in use has the array API (:meth:`observe_arrays`
        raises for an upstream-style, per-slot one)."""
        robots, tasks = self.groups.robots, self.terms.tasks
        known = self._arrays_ready
        # (asked several times per step: answered again only when the groups or the task types change)
        if known is None or known[0] is not robots or known[1] != len(tasks):
            ready = (all(group.array_api for group in robots.values()) and all(task.array_api for task in tasks.values()))
            known = self._arrays_ready = (robots, len(tasks), ready)
        return known[2]

    def observe_arrays(self, slots: np.ndarray, only: ObservedEntries | None = None) -> dict[str, Any]:
        """Observations of ``slots`` as ``{robot_name: tree of (env_num, ...) arrays}``.

        ``only`` (see :data:`ObservedEntries`) keeps those top-level entries (a robot's name or a
        task's key) and, of each, the children named: for a caller that reads a few of them (a
        Gymnasium vector env reads its observation keys), the others are not gathered into
        ``(env_num, ...)`` arrays. A robot not named is not observed at all.
        """
        out: dict[str, Any] = {}
        every_slot = len(slots) == self.env_num
        member: np.ndarray | None = None
        for group in self.groups.robots.values():
            if every_slot:
                rows = group.slots
            elif len(slots) == 1 and len(group.slots) == self.env_num and type(slots) is np.ndarray:
                rows = slots  # (a reset's one slot, of a group in every slot: no mask to build)
            else:
                if member is None:
                    member = np.zeros(self.env_num, dtype=bool)
                    member[slots] = True
                rows = group.slots[member[group.slots]]
            if len(rows):
                if not group.array_api:
                    raise ValueError(f'step_arrays: robot {group.name!r} is an upstream-style (per-slot) class '
                                     f'({type(group).__name__}) whose observations are per-slot dicts; use step()')
                if only is not None and group.name not in only:
                    continue
                if only is None:
                    tree = group.get_obs(rows)
                elif getattr(type(group).get_obs, 'observes_by_need', False):
                    group.observed_entries = only[group.name]  # (it may leave out what is not read)
                    try:
                        tree = _picked(group.get_obs(rows), only[group.name])
                    finally:
                        group.observed_entries = None
                else:
                    tree = _picked(group.get_obs(rows), only[group.name])
                if len(rows) == self.env_num and group.name not in out:
                    adopter = self._adopters.get(group.name)
                    if adopter is None:
                        adopter = self._adopters[group.name] = TreeAdopter()
                    out[group.name] = adopter(tree)  # one group in every slot: its arrays are the result
                else:
                    scatter(out.setdefault(group.name, {}), tree, rows, self.env_num, (group.name,))
        for task in self.terms.tasks.values():
            if not task.array_api:
                raise ValueError(f'step_arrays: the task {type(task).__name__} is upstream-style (per slot); its '
                                 'observations are per-slot dicts; use step()')
            if type(task).get_observations is _BASE_TASK_OBSERVATIONS:
                continue  # none
            rows = self.terms.members_of(task, slots)
            if not len(rows):
                continue
            if only is None:
                extra = task.get_observations(rows)
            else:
                view = self.terms.view
                view.observed_entries = only  # (the task may leave out what is not read)
                try:
                    extra = task.get_observations(rows)
                finally:
                    view.observed_entries = None
            if extra and only is not None:
                extra = {key: value if only[key] is None or not isinstance(value, dict) else _picked(value, only[key])
                         for key, value in extra.items() if key in only}
            if extra:
                scatter(out, extra, rows, self.env_num, ('task observations',))
        return out


def _picked(tree: dict[str, Any], children: frozenset[str] | None) -> dict[str, Any]:
    """The entries ``children`` of ``tree`` (all of it for ``None``)."""
    if children is None:
        return tree
    return {key: value for key, value in tree.items() if key in children}
