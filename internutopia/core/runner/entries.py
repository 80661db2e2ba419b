"""A caller's ``observe_only`` (which entries of an array observation it reads), checked before a
step or reset uses it.

``observe_only`` is ``{top_level_key: children}``: a robot's name or a task observation's key,
and ``None`` (all of it) or a set of the names under it to keep. A wrong one would otherwise fail
inside the observation, where each slot's error is its own episode's failure (so every episode
would fail), or silently leave entries out. :class:`EntriesCheck` turns it into the runner's
:data:`~internutopia.core.runner.observations.ObservedEntries` or raises a ``ValueError`` naming
what is wrong and what the observation has, before anything changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from internutopia.core.runner.observations import ObservedEntries, Observer
from internutopia.core.task.base import BaseTask

__all__ = ['EntriesCheck', 'observed_entries']

_SETS = (set, frozenset, list, tuple)


def observed_entries(only: Any) -> ObservedEntries:
    """``only`` as :data:`ObservedEntries` (a new dict: the caller's is never changed), or a
    ``ValueError`` saying what form it must have.

    >>> observed_entries({'h1': ['joint_positions'], 'goal': None})
    {'h1': frozenset({'joint_positions'}), 'goal': None}
    >>> observed_entries(['h1'])
    Traceback (most recent call last):
    ...
    ValueError: observe_only must be a dict {robot name or task key: None or a set of the names under it}; got a list
    """
    if not isinstance(only, Mapping):
        raise ValueError('observe_only must be a dict {robot name or task key: None or a set of the names under it}; '
                         f'got a {type(only).__name__}')
    entries: ObservedEntries = {}
    for key, children in only.items():
        if not isinstance(key, str):
            raise ValueError(f'observe_only: keys are robot names or task keys (str); got {key!r}')
        if children is None:
            entries[key] = None
        elif isinstance(children, _SETS) and all(isinstance(child, str) for child in children):
            entries[key] = frozenset(children)
        else:
            raise ValueError(f'observe_only[{key!r}] must be None (all of it) or a set of names (str); got {children!r}')
    return entries


class EntriesCheck:
    """Checks ``observe_only`` against the names the observation has: the robots' names and the
    keys of the tasks' observations (read once from the tasks' observations of the running slots,
    which changes nothing, and kept until the robot groups or the tasks change). Where they cannot
    be read (no slot running, a task's observation raising), only the form is checked.
    """

    def __init__(self, observer: Observer) -> None:
        self.observer = observer
        self._known: tuple[Any, int, dict[str, frozenset[str] | None] | None] | None = None
        #: The last ``observe_only`` a step passed, its items then, and what it was checked as.
        self._last: tuple[Any, tuple, ObservedEntries] | None = None

    def checked(self, only: Any, running: np.ndarray | None) -> ObservedEntries:
        """``only`` checked (see the module docstring) for a step of the slots ``running`` an
        episode; ``None`` (a reset, whose episodes may bring other robots): its form alone."""
        last, known = self._last, self._known
        if (last is not None and last[0] is only and known is not None and known[2] is not None
                and known[0] is self.observer.groups.robots and known[1] == len(self.observer.terms.tasks)
                and running is not None and tuple(only.items()) == last[1]):
            return last[2]  # (a caller's one dict of frozen sets, step after step: a Gymnasium env's)
        entries = observed_entries(only)
        known_names = self._names(running) if running is not None and len(running) else None
        if known_names is None:
            return entries
        self._check_names(entries, known_names)
        if all(children is None or type(children) is frozenset for children in only.values()):
            self._last = (only, tuple(only.items()), entries)  # (its values cannot change in place)
        return entries

    @staticmethod
    def _check_names(entries: ObservedEntries, known: dict[str, frozenset[str] | None]) -> None:
        unknown = sorted(set(entries) - set(known))
        if unknown:
            raise ValueError(f'observe_only: no entry {unknown[0]!r} in the observation; its entries: {sorted(known)}')
        for key, children in entries.items():
            names = known[key]
            if children is None or names is None:
                continue
            missing = sorted(children - names)
            if missing:
                raise ValueError(f'observe_only[{key!r}]: no entry {missing[0]!r} under {key!r}; its entries: {sorted(names)}')

    def _names(self, running: np.ndarray) -> dict[str, frozenset[str] | None] | None:
        """``{top-level key: the names under it, or None where they are not checked}`` of the
        observation, or ``None`` when they cannot all be known now (a task with observations and
        no slot running it, or whose observation raises). A robot's entries are its name alone:
        reading its tree would draw its cameras."""
        groups, terms = self.observer.groups.robots, self.observer.terms
        kept = self._known
        if kept is not None and kept[0] is groups and kept[1] == len(terms.tasks) and kept[2] is not None:
            return kept[2]
        names: dict[str, frozenset[str] | None] = {group.name: None for group in groups.values()}
        readable = True
        for task in terms.tasks.values():
            if type(task).get_observations is BaseTask.get_observations:
                continue  # (observes nothing)
            members = terms.members_of(task, running)
            try:
                extra = task.get_observations(members) if len(members) else None
            except Exception:  # (a slot's failing observation is its step's to find, not this check's)
                extra = None
            if extra is None:
                readable = False
                break
            names.update({key: frozenset(value) if isinstance(value, dict) else None for key, value in extra.items()})
        self._known = (groups, len(terms.tasks), names if readable else None)
        return self._known[2]
