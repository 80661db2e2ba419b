"""Action parsing: every active slot's action validated and grouped by controller, before anything moves.

The two entry points, one per API, are mixed into :class:`~internutopia.core.runner.Runner`:
:meth:`ActionParsing.parse_actions` takes the contract's per-slot dicts and
:meth:`ActionParsing.parse_batched_actions` the array API's ``{robot: {controller: rows}}``. Both
raise ``ValueError`` naming the slot, robot and controller, and change no state.
"""

from __future__ import annotations

import itertools
import operator
from typing import Any

import numpy as np

_UNPARSED = object()
_ACTIVE = 1  # SlotStatus.ACTIVE as a plain int (enum lookups are slow per step)


class Unbatched(list):
    """Per-slot parsed arguments still to be stacked by their controller's ``batch``."""


class ActionParsing:
    """Parsing half of the runner (uses its ``slot_robots``, ``structures``, ``robot_groups``, ``status``)."""

    #: ``(active slots, structures list, result)`` of the last :meth:`_one_structure`.
    _one_structure_cache: tuple[Any, Any, Any] | None = None
    #: ``(robot_groups dict, groups by robot name)`` of the last :meth:`_groups_by_name`.
    _groups_by_name_cache: tuple[Any, dict[str, list[Any]]] | None = None

    def parse_actions(self, actions: list[Any]) -> dict[int, tuple[Any, list[int], list[Any]]]:
        """Validate every active slot's action; group parsed args by controller. Changes nothing."""
        commands: dict[int, tuple[Any, list[int], list[Any]]] = {}
        active = self.active_slots()
        shared_slots = self._one_structure(active) if len(active) else None
        if shared_slots is not None:
            first = actions[active[0]]
            if first is not None and all(map(operator.is_, actions, itertools.repeat(first))):
                # The usual script: one action object for every slot, and one structure. It is
                # resolved once, and every controller it names gets the same parsed arguments
                # for all active slots (what the general path below builds slot by slot).
                count = len(active)
                for controller, parsed in self._resolve_action(int(active[0]), first, {}):
                    commands[id(controller)] = (controller, shared_slots, Unbatched([parsed] * count))
                return commands
        # Scripts usually send one action object to every slot. Slots of one structure have the
        # same robots and controllers, so an action object is resolved and parsed once per
        # structure per step, and each further slot only joins the commands.
        parsed_once: dict[tuple[int, int], Any] = {}
        resolved: dict[tuple[int, str | None], list[tuple[Any, Any]]] = {}
        structures = self.structures
        for slot in active.tolist():
            entry = actions[slot]
            if entry is None:
                continue
            key = (id(entry), structures[slot])
            pairs = resolved.get(key)
            if pairs is None:
                pairs = resolved[key] = self._resolve_action(slot, entry, parsed_once)
            for controller, parsed in pairs:
                command = commands.get(id(controller))
                if command is None:
                    command = commands[id(controller)] = (controller, [], Unbatched())
                command[1].append(slot)
                command[2].append(parsed)
        return commands

    def _one_structure(self, active: np.ndarray) -> np.ndarray | None:
        """The slots of ``active`` as a writable array when they all have the same structure, else
        ``None`` (cached until either changes). Controllers get a writable copy: compiled kernels
        are specialized on writability, and ``active`` itself is read-only."""
        cached = self._one_structure_cache
        if cached is not None and cached[0] is active and cached[1] is self.structures:
            return cached[2]
        structures = self.structures
        result = active.copy() if len({structures[slot] for slot in active.tolist()}) == 1 else None
        self._one_structure_cache = (active, structures, result)
        return result

    def _groups_by_name(self) -> dict[str, list[Any]]:
        """Robot groups by robot name (one per structure that has the name), cached until the
        groups change (a rebuild replaces ``robot_groups``)."""
        cached = self._groups_by_name_cache
        if cached is not None and cached[0] is self.robot_groups:
            return cached[1]
        named: dict[str, list[Any]] = {}
        for group in self.robot_groups.values():
            named.setdefault(group.name, []).append(group)
        self._groups_by_name_cache = (self.robot_groups, named)
        return named

    def _resolve_action(self, slot: int, entry: Any, parsed_once: dict[tuple[int, int], Any]) -> list[tuple[Any, Any]]:
        """``(controller, parsed args)`` of every command in ``slot``'s action ``entry``, validated."""
        if not isinstance(entry, dict):
            raise ValueError(f'action[{slot}] must be a dict {{robot_name: {{controller_name: args}}}} or None; '
                             f'got {type(entry).__name__}')
        pairs = []
        robots = self.slot_robots[slot]
        for robot_name, controller_actions in entry.items():
            robot = robots.get(robot_name)
            if robot is None:
                self._warn_unknown_robot(slot, robot_name, robots)
                continue
            if controller_actions is None:
                continue
            sink = robot.action_sink
            if sink is not None:  # an upstream-style robot class: its instance takes the whole dict
                try:
                    pairs.append((sink, sink.parse_action(controller_actions)))
                except ValueError as exc:
                    raise ValueError(f'action[{slot}][{robot_name!r}]: {exc}') from None
                continue
            if not isinstance(controller_actions, dict):
                raise ValueError(f'action[{slot}][{robot_name!r}] must be a dict {{controller_name: args}}; '
                                 f'got {type(controller_actions).__name__}')
            for controller_name, args in controller_actions.items():
                controller = robot.controllers.get(controller_name)
                if controller is None:
                    raise ValueError(f'action[{slot}][{robot_name!r}]: unknown controller {controller_name!r}; '
                                     f'controllers of {robot_name!r}: {sorted(robot.controllers)}')
                key = (id(controller), id(args))
                parsed = parsed_once.get(key, _UNPARSED)
                if parsed is _UNPARSED:
                    try:
                        parsed = parsed_once[key] = controller.parse_action(args)
                    except (ValueError, TypeError, IndexError) as exc:  # a parser choking on odd input: still bad input
                        raise ValueError(f'action[{slot}][{robot_name!r}][{controller_name!r}]: {exc}') from None
                pairs.append((controller, parsed))
        return pairs


    def _warn_unknown_robot(self, slot: int, robot_name: Any, robots: dict[str, Any]) -> None:
        """An action for a robot the slot's episode does not have is ignored, as in InternUtopia
        (scripts send one action dict to slots whose episodes differ); warned once per name."""
        warned = self.__dict__.setdefault('_warned_robot_names', set())
        if robot_name in warned:
            return
        warned.add(robot_name)
        import warnings

        warnings.warn(f'action[{slot}]: no robot {robot_name!r} in env {slot} (robots: {sorted(robots)}); its commands '
                      'are ignored (warned once per robot name)', stacklevel=5)

    def parse_batched_actions(self, actions: dict[str, dict[str, Any]]) -> dict[int, tuple[Any, list[int], Any]]:
        """Validate ``{robot_name: {controller_name: (env_num, ...) array}}``; changes nothing."""
        if not isinstance(actions, dict):
            raise ValueError(f'batched actions must be a dict {{robot_name: {{controller_name: array}}}}; got {type(actions).__name__}')
        all_active = len(self.active_slots()) == self.env_num
        active_mask = None if all_active else self.status == _ACTIVE
        commands: dict[int, tuple[Any, np.ndarray, Any]] = {}
        named = self._groups_by_name()
        for robot_name, controller_actions in actions.items():
            groups = named.get(robot_name)
            if groups is None:
                raise ValueError(f'batched actions: unknown robot {robot_name!r}; robots in the world: {sorted(named)}')
            if not isinstance(controller_actions, dict):
                raise ValueError(f'batched actions[{robot_name!r}] must be a dict {{controller_name: array}}; '
                                 f'got {type(controller_actions).__name__}')
            for group in groups:
                if group.slot_class is not None:  # (what gives a group an action_sink; read without its property)
                    raise ValueError(f'batched actions[{robot_name!r}]: this robot is an upstream-style (per-slot) class '
                                     f'({group.slot_class.__name__}); drive it with step(), one action dict per env')
                members = group.slots if all_active else group.slots[active_mask[group.slots]]
                if not len(members):
                    continue
                every_row = len(members) == self.env_num  # rows in slot order: the arrays as given
                for controller_name, args in controller_actions.items():
                    controller = group.controllers.get(controller_name)
                    if controller is None:
                        raise ValueError(f'batched actions[{robot_name!r}]: unknown controller {controller_name!r}; '
                                         f'controllers of {robot_name!r}: {sorted(group.controllers)}')
                    count = len(args) if type(args) is np.ndarray and args.ndim else _row_count(args)
                    if count != self.env_num:
                        got = count if count is not None else f'a {type(args).__name__}'
                        raise ValueError(f'batched actions[{robot_name!r}][{controller_name!r}] must have one row per env '
                                         f'({self.env_num}); got {got}')
                    if every_row:
                        rows = args
                    else:
                        rows = args[members] if isinstance(args, np.ndarray) else [args[s] for s in members.tolist()]
                    try:
                        batch = controller.parse_batch(rows)
                    except (ValueError, TypeError, IndexError) as exc:  # a parser choking on odd input: still bad input
                        raise ValueError(f'batched actions[{robot_name!r}][{controller_name!r}]: {exc}'
                                         f'{_non_finite_slots(rows, members)}') from None
                    commands[id(controller)] = (controller, members, batch)
        return commands


def _non_finite_slots(rows: Any, members: np.ndarray) -> str:
    """For an error message: the env slots whose rows of ``rows`` hold NaN or inf (``''`` when
    none do, or the rows are not numbers)."""
    try:
        finite = np.isfinite(np.asarray(rows, dtype=float).reshape(len(members), -1)).all(axis=1)
    except (TypeError, ValueError):
        return ''
    bad = members[~finite]
    if not len(bad):
        return ''
    return f' (NaN or inf in the rows of env {", ".join(str(s) for s in bad[:10].tolist())}{", ..." if len(bad) > 10 else ""})'


def _row_count(args: Any) -> int | None:
    """Rows in a batched argument (a sequence or an array with a first axis), else ``None``."""
    if isinstance(args, (str, bytes, dict)):
        return None
    try:
        return len(args)
    except TypeError:  # no length, or a 0-d array
        return None
