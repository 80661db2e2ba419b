"""What the env, its adapters and tools read of a runner: slots, episodes, groups, terms.

:class:`RunnerReads` is the read side of :class:`~internutopia.core.runner.Runner` (which
subclasses it): each member reads one of the runner's collaborators (the slot table, the entity
groups, the terms, the observer, the action parser) and changes nothing.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from internutopia.core.entity import Entity
from internutopia.core.episode_queue import Episode
from internutopia.core.robot.base import BaseRobot
from internutopia.core.runner.actions import ActionParser, Commands
from internutopia.core.runner.groups import EntityGroups
from internutopia.core.runner.observations import ObservedEntries, Observer
from internutopia.core.runner.slots import BYTES_PER_SLOT, SlotTable
from internutopia.core.runner.terms import Terms
from internutopia.core.util.memory import runtimes_loaded

__all__ = ['RobotDescription', 'RunnerReads']

#: A slot's robot as a recording lays it out: its class name and each controller's fixed
#: ``action_shape`` (``None``: the controller takes arguments of no fixed shape).
RobotDescription = tuple[str, dict[str, tuple[int, ...] | None]]


class RunnerReads:
    """The runner's reads (see the module docstring); the runner sets the collaborators."""

    env_num: int
    table: SlotTable
    groups: EntityGroups
    terms: Terms
    actions: ActionParser
    observer: Observer
    world: Any
    _runtime_bytes: float
    _runtimes_before: frozenset[str]

    def active_slots(self) -> np.ndarray:
        """Ids of the slots running an episode (do not modify the returned array)."""
        return self.table.active_slots()

    def parse_actions(self, actions: list[Any]) -> Commands:
        """Validate per-slot actions and group them by controller; changes nothing (see :class:`ActionParser`)."""
        return self.actions.parse(actions)

    def parse_batched_actions(self, actions: dict[str, dict[str, Any]]) -> Commands:
        """Validate the array API's batched actions; changes nothing (see :class:`ActionParser`)."""
        return self.actions.parse_batched(actions)

    def observe(self, slots: np.ndarray) -> list[dict[str, Any]]:
        """Per-slot observation dicts of ``slots``."""
        return self.observer.observe(slots)

    def observe_arrays(self, slots: np.ndarray, only: ObservedEntries | None = None) -> dict[str, Any]:
        """Observations of ``slots`` as ``(env_num, ...)`` arrays (``only``: see :meth:`Observer.observe_arrays`)."""
        return self.observer.observe_arrays(slots, only)

    def entities_of(self, slot: int) -> dict[str, Entity]:
        """Robots and objects present in ``slot``, by name."""
        return self.table.entities_of(slot)

    @property
    def memory_estimate_bytes(self) -> float:
        """Estimated peak bytes this env adds to its process so far: the compiled kernels' runtime
        (when this env was the first to load it), the runtimes its robots loaded first in the process
        (ONNX Runtime for a walking policy), the slots' bookkeeping, and the most the world's
        structures took at once (compiles' peaks, models, physics state)."""
        loaded = sum(size for name, size in runtimes_loaded().items() if name not in self._runtimes_before)
        return (self._runtime_bytes + loaded + self.env_num * BYTES_PER_SLOT
                + float(getattr(self.world, 'estimated_peak_bytes', 0.0)))

    @property
    def status(self) -> np.ndarray:
        """Each slot's :class:`SlotStatus` (the slot table's)."""
        return self.table.status

    @property
    def episodes(self) -> list[Episode | None]:
        """Each slot's current or last episode (the slot table's)."""
        return self.table.episodes

    @property
    def steps(self) -> np.ndarray:
        """Env steps of each slot's episode (the slot table's)."""
        return self.table.steps

    @property
    def slot_robots(self) -> list[dict[str, BaseRobot]]:
        """Each slot's robot groups by name (the slot table's)."""
        return self.table.slot_robots

    @property
    def slot_task(self) -> list[Any]:
        """Each slot's task object (the slot table's)."""
        return self.table.slot_task

    @property
    def slot_metrics(self) -> list[list[Any]]:
        """Each slot's metric objects (the slot table's)."""
        return self.table.slot_metrics

    @property
    def robot_groups(self) -> dict[str, BaseRobot]:
        """The robot groups in use (the entity groups')."""
        return self.groups.robots

    @property
    def object_groups(self) -> dict[str, Any]:
        """The object groups in use (the entity groups')."""
        return self.groups.objects

    @property
    def tasks(self) -> dict[str, Any]:
        """Task objects by type (the terms')."""
        return self.terms.tasks

    @property
    def metrics(self) -> dict[str, Any]:
        """Metric objects by config (the terms')."""
        return self.terms.metrics

    @property
    def members(self) -> dict[int, np.ndarray]:
        """Which slots each task, reward and metric object serves (the terms')."""
        return self.terms.members

    def slot_controllers(self, slots: list[int]) -> list[dict[str, RobotDescription]]:
        """Each of ``slots``' robots by name, described (:data:`RobotDescription`)."""
        return [{name: (type(group).__name__, {controller_name: tuple(getattr(controller, 'action_shape', ())) or None
                                               for controller_name, controller in group.controllers.items()})
                 for name, group in self.table.slot_robots[slot].items()} for slot in slots]

    def parsed_commands(self, actions: list[Any]) -> list[Any]:
        """Each slot's entry of ``actions`` as ``{robot: {controller: parse_action(args)}}`` (what a
        recording lays out; ``None`` for a slot without commands or robots). A command its controller
        cannot parse is left out: the step that takes it raises for it."""
        out: list[Any] = [None] * len(actions)
        slot_robots = self.table.slot_robots
        for slot, entry in enumerate(actions):
            if not entry or not isinstance(entry, dict) or not slot_robots[slot]:
                continue
            parsed: dict[str, dict[str, Any]] = {}
            for robot, commands in entry.items():
                group = slot_robots[slot].get(robot)
                if group is None or not isinstance(commands, dict):
                    continue
                parsed[robot] = {}
                for name, args in commands.items():
                    controller = group.controllers.get(name)
                    if controller is not None:
                        with contextlib.suppress(Exception):
                            parsed[robot][name] = controller.parse_action(args)
            out[slot] = parsed
        return out
