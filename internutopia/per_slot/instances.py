"""Shared pieces of the per-slot adapters that run upstream-style classes (one instance per slot).

InternUtopia's robots, controllers and sensors are per-instance objects; the adapters in
:mod:`~internutopia.per_slot.robot`, :mod:`~internutopia.per_slot.controller` and
:mod:`~internutopia.per_slot.sensor` hold one per slot and episode. This module has what they share.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, TypeVar

from internutopia.core.util.caller import warn_per_episode

_T = TypeVar('_T')


def build_slot_instance(instances: dict[int, Any], slot: int, cls: type[_T], *args: Any,
                        preset: dict[str, Any] | None = None) -> _T:
    """``instances[slot]``, made as ``cls(*args)`` when there is none yet.

    The instance is registered before its ``__init__`` runs, so lookups made while it builds
    (a robot's sensors asking for their robot's instance) find it; a failing ``__init__``
    leaves no half-built instance behind. ``preset``: attributes set on the new instance before
    its ``__init__`` runs (the adapter and slot its default methods read).

    >>> made = {}
    >>> build_slot_instance(made, 3, dict, {'a': 1}) is build_slot_instance(made, 3, dict, {'b': 2})
    True
    >>> made[3]
    {'a': 1}
    """
    instance = instances.get(slot)
    if instance is None:
        instance = instances[slot] = cls.__new__(cls)
        for name, value in (preset or {}).items():
            setattr(instance, name, value)
        try:
            cls.__init__(instance, *args)
        except BaseException:
            instances.pop(slot, None)
            raise
    return instance


def adapter_preset(adapter: Any, slot: int) -> dict[str, Any]:
    """What an adapter sets on its new instance for ``slot`` before its ``__init__`` runs (the
    ``preset`` of :func:`build_slot_instance`): the slot, and the adapter itself where it runs a
    built-in behind (``builtin_class``), which the instance's default methods read."""
    preset: dict[str, Any] = {'_slot': int(slot)}
    if getattr(adapter, 'builtin_class', None) is not None:
        preset['runner_of_slot'] = adapter
    return preset


def stale_slots(held: dict[int, tuple], slots: Any, times: Any) -> list[int]:
    """The slots of ``slots`` whose entry in ``held`` (``{slot: (sim time, ...)}``, what was read
    for each slot and when) is missing or from another time than ``times[slot]``: the slots to
    read again this step (a hook runs once a step, however many readers ask).

    >>> stale_slots({0: (0.5, 'a'), 1: (0.25, 'b')}, [0, 1, 2], [0.5, 0.5, 0.5])
    [1, 2]
    """
    stale = []
    for slot in slots:
        entry = held.get(slot)
        if entry is None or entry[0] != float(times[slot]):
            stale.append(slot)
    return stale


def read_once(held: dict[int, tuple], slots: list[int], times: Any, read: Any) -> None:
    """``held[slot] = (sim time, read(slot), None)`` for each of ``slots``, or ``(sim time, None,
    error)`` where ``read`` raises: the error is kept too, so a reader asking again this step gets
    the same error without a second call."""
    for slot in slots:
        time = float(times[slot])
        try:
            held[slot] = (time, read(slot), None)
        except Exception as exc:  # (kept: asked again this step, the same error, no second call)
            held[slot] = (time, None, exc)


def held_values(held: dict[int, tuple], slots: list[int]) -> list[Any]:
    """What :func:`read_once` kept for ``slots``, in order; the first slot's error kept there is
    raised (after every slot was read: asked again, each gives what it gave)."""
    out = []
    for slot in slots:
        _, value, error = held[slot]
        if error is not None:
            raise error
        out.append(value)
    return out


class SlotStateListener:
    """Registered with robot and object groups (``Entity.add_listener``): when a slot's state is set
    by hand (``state_changed(slot)``), the slot's entries of ``held`` (what was read of it this
    step) go, so that the next reader reads it again."""

    def __init__(self, *held: dict[int, Any]) -> None:
        self._held = held

    def state_changed(self, slot: int) -> None:
        for entries in self._held:
            entries.pop(slot, None)


def warn_cleanup_error(instance: Any, slot: int, exc: Exception) -> None:
    """Warn that ``instance.cleanup()`` raised ``exc`` in ``slot`` (the reset it ran in goes on), at
    the user's line that called into the project, every time, and kept in no module's
    ``__warningregistry__`` (each slot and error makes its own text: a long run would keep them all)."""
    warn_per_episode(f'{type(instance).__name__}.cleanup() in env {slot} raised {type(exc).__name__}: {exc}')


class OrderedObsMixin:
    """InternUtopia's ``_make_ordered`` helper for per-slot robots, controllers and sensors:
    observations with their keys in the order of the first call."""

    obs_keys: list[str]

    def _make_ordered(self, obs: dict[str, Any] | None = None) -> OrderedDict:
        """``obs`` with its keys in the order of the first call (InternUtopia's helper)."""
        if obs is None:
            return OrderedDict()
        if not self.obs_keys:
            self.obs_keys = list(obs.keys())
        return OrderedDict((key, obs[key]) for key in self.obs_keys)


__all__ = ['OrderedObsMixin', 'SlotStateListener', 'adapter_preset', 'build_slot_instance', 'stale_slots', 'warn_cleanup_error']
