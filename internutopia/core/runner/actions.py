"""Action parsing: every active slot's action validated and grouped by controller, before anything moves.

:class:`ActionParser` has one entry point per API: :meth:`ActionParser.parse` takes the contract's
per-slot dicts and :meth:`ActionParser.parse_batched` the array API's ``{robot: {controller:
rows}}``. Both raise ``ValueError`` naming the slot, robot and controller, and change no state.
Both return the step's commands: ``{id(controller): (controller, slots, arguments)}``. When a
controller's command raises for its slots together, :func:`apply_alone` applies it slot by slot
(:func:`row_of` cuts each slot's row out of the batch), so that only the slots it fails for end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from internutopia.core.runner.failures import SlotFailures
from internutopia.core.runner.groups import EntityGroups
from internutopia.core.runner.slots import SlotTable

_UNPARSED = object()
_ACTIVE = 1  # SlotStatus.ACTIVE as a plain int (enum lookups are slow per step)


class Unbatched(list):
    """Per-slot parsed arguments still to be stacked by their controller's ``batch``.

    ``shared`` is ``True`` when every entry is one and the same object (one action object sent
    to every slot), so that a ``batch`` need not compare them.
    """

    shared = False


#: A step's commands, ``{id(controller): (controller, slots, arguments)}``: the slots an array, or
#: a list (the dict API's general path); the arguments stacked rows, or :class:`Unbatched` ones.
Commands = Mapping[int, tuple[Any, np.ndarray | list[int], Any]]


class ActionParser:
    """Validates and groups the actions of the slots in ``table``, whose robots are ``groups``'."""

    def __init__(self, table: SlotTable, groups: EntityGroups) -> None:
        self.table = table
        self.groups = groups
        self.env_num = table.env_num
        #: ``(active slots, structures list, result)`` of the last :meth:`_one_structure`.
        self._one_structure_cache: tuple[Any, Any, Any] | None = None
        self._warned_robot_names: set[Any] = set()
        #: ``(robot groups, plan)`` of the last batched layout (see :meth:`parse_batched`).
        self._batched_plan: tuple[Any, Any] | None = None

    def parse(self, actions: list[Any]) -> Commands:
        """Validate every active slot's action; group parsed args by controller. Changes nothing."""
        active = self.table.active_slots()
        shared_slots = self._one_structure(active) if len(active) else None
        if shared_slots is not None:
            first = actions[active[0]]
            if first is not None and _all_are(actions, first):
                # The usual script: one action object for every slot, and one structure. It is
                # resolved once, and every controller it names gets the same parsed arguments
                # for all active slots (what the general path below builds slot by slot).
                count = len(active)
                shared: dict[int, tuple[Any, np.ndarray, Unbatched]] = {}
                for controller, parsed in self._resolve_action(int(active[0]), first, {}):
                    batch = Unbatched([parsed] * count)
                    batch.shared = True
                    shared[id(controller)] = (controller, shared_slots, batch)
                return shared
        # Scripts usually send one action object to every slot. Slots of one structure have the
        # same robots and controllers, so an action object is resolved and parsed once per
        # structure per step, and each further slot only joins the commands.
        commands: dict[int, tuple[Any, list[int], Unbatched]] = {}
        parsed_once: dict[tuple[int, int], Any] = {}
        resolved: dict[tuple[int, str | None], list[tuple[Any, Any]]] = {}
        structures = self.table.structures
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
        structures = self.table.structures
        if cached is not None and cached[0] is active and cached[1] is structures:
            return cached[2]
        result = active.copy() if len({structures[slot] for slot in active.tolist()}) == 1 else None
        self._one_structure_cache = (active, structures, result)
        return result

    def _resolve_action(self, slot: int, entry: Any, parsed_once: dict[tuple[int, int], Any]) -> list[tuple[Any, Any]]:
        """``(controller, parsed args)`` of every command in ``slot``'s action ``entry``, validated."""
        if not isinstance(entry, dict):
            raise ValueError(f'action[{slot}] must be a dict {{robot_name: {{controller_name: args}}}} or None; '
                             f'got {type(entry).__name__}')
        pairs = []
        robots = self.table.slot_robots[slot]
        for robot_name, controller_actions in entry.items():
            robot = robots.get(robot_name)
            if robot is None:
                self._warn_unknown_robot(slot, robot_name, robots)
                continue
            if controller_actions is None:
                continue
            try:
                commanded = robot.commanded(controller_actions)
            except ValueError as exc:
                raise ValueError(f'action[{slot}][{robot_name!r}]: {exc}') from None
            for controller_name, controller, args in commanded:
                key = (id(controller), id(args))
                parsed = parsed_once.get(key, _UNPARSED)
                if parsed is _UNPARSED:
                    try:
                        parsed = parsed_once[key] = controller.parse_action(args)
                    except (ValueError, TypeError, IndexError, OverflowError) as exc:  # a parser choking on odd input: still bad input
                        at = f'[{controller_name!r}]' if controller_name is not None else ''
                        raise ValueError(f'action[{slot}][{robot_name!r}]{at}: {exc}') from None
                pairs.append((controller, parsed))
        return pairs


    def _warn_unknown_robot(self, slot: int, robot_name: Any, robots: dict[str, Any]) -> None:
        """An action for a robot the slot's episode does not have is ignored, as in InternUtopia
        (scripts send one action dict to slots whose episodes differ); warned once per name."""
        warned = self._warned_robot_names
        if robot_name in warned:
            return
        warned.add(robot_name)
        import warnings

        from internutopia.core.util.caller import caller_stacklevel

        warnings.warn(f'action[{slot}]: no robot {robot_name!r} in env {slot} (robots: {sorted(robots)}); its commands '
                      'are ignored (warned once per robot name)', stacklevel=caller_stacklevel())

    def parse_batched(self, actions: dict[str, dict[str, Any]]) -> dict[int, tuple[Any, np.ndarray, Any]]:
        """Validate ``{robot_name: {controller_name: (env_num, ...) array}}``; changes nothing.

        A training loop sends actions of one layout step after step (the same robot and
        controller names, in the same order): the groups and controllers that layout resolved to
        are kept (a plan, until the groups change; an episode ending or starting only changes
        which of their slots take commands), so a step with it only checks the names and parses
        the rows. Any other layout takes the general path.
        """
        active = self.table.active_slots()
        robots = self.groups.robots
        plan = self._batched_plan
        if plan is not None and plan[0] is robots and type(actions) is dict:
            commands = self._follow_plan(plan[1], actions, active)
            if commands is not None:
                return commands
        commands, layout = self._parse_batched(actions, active)
        self._batched_plan = (robots, layout) if layout is not None else None
        return commands

    def _follow_plan(self, plan: tuple[tuple[str, ...], list[Any]], actions: dict[str, Any],
                     active: np.ndarray) -> dict[int, tuple[Any, np.ndarray, Any]] | None:
        """The commands of ``actions`` by a kept plan; ``None`` when their layout is not the plan's."""
        robot_names, robots = plan
        if len(actions) != len(robot_names) or tuple(actions) != robot_names:
            return None
        commands: dict[int, tuple[Any, np.ndarray, Any]] = {}
        members_of = self._members_of(active)
        for robot_name, controller_names, groups in robots:
            controller_actions = actions[robot_name]
            if type(controller_actions) is not dict or tuple(controller_actions) != controller_names:
                return None
            for group, controllers in groups:
                members = members_of(group)
                if not len(members):
                    continue
                every_row = len(members) == self.env_num
                for controller_name, controller in controllers:
                    commands[id(controller)] = (controller, members, self._parse_rows(
                        robot_name, controller_name, controller, members, every_row, controller_actions[controller_name]))
        return commands

    def _members_of(self, active: np.ndarray) -> Any:
        """``f(group)``: the slots of ``group`` among ``active`` (an :meth:`SlotTable.active_slots` array)."""
        if len(active) == self.env_num:
            return lambda group: group.slots
        active_mask = self.table.status == _ACTIVE
        env_num = self.env_num
        # (a group in every slot, the usual world: its active slots are ``active`` itself)
        return lambda group: active if len(group.slots) == env_num else group.slots[active_mask[group.slots]]

    def _parse_batched(self, actions: Any, active: np.ndarray) -> tuple[dict[int, tuple[Any, np.ndarray, Any]], Any]:
        """:meth:`parse_batched`'s general path: the commands, and the plan of their layout (``None``
        when a group without running slots lacks a controller named: found again on each step then)."""
        if not isinstance(actions, dict):
            raise ValueError(f'batched actions must be a dict {{robot_name: {{controller_name: array}}}}; got {type(actions).__name__}')
        commands: dict[int, tuple[Any, np.ndarray, Any]] = {}
        named = self.groups.robots_by_name()
        members_of = self._members_of(active)
        plan: list[tuple[str, tuple[Any, ...], list[tuple[Any, list[tuple[Any, Any]]]]]] = []
        whole = True  # every group of the plan resolved every controller
        for robot_name, controller_actions in actions.items():
            groups = named.get(robot_name)
            if groups is None:
                raise ValueError(f'batched actions: unknown robot {robot_name!r}; robots in the world: {sorted(named)}')
            if not isinstance(controller_actions, dict):
                raise ValueError(f'batched actions[{robot_name!r}] must be a dict {{controller_name: array}}; '
                                 f'got {type(controller_actions).__name__}')
            planned: list[tuple[Any, list[tuple[Any, Any]]]] = []
            plan.append((robot_name, tuple(controller_actions), planned))
            for group in groups:
                if not group.array_api:
                    raise ValueError(f'batched actions[{robot_name!r}]: this robot is an upstream-style (per-slot) class '
                                     f'({type(group).__name__}); drive it with step(), one action dict per env')
                members = members_of(group)
                controllers: list[tuple[Any, Any]] = []
                for controller_name in controller_actions:
                    controller = group.controllers.get(controller_name)
                    if controller is None:
                        if len(members):
                            raise ValueError(f'batched actions[{robot_name!r}]: unknown controller {controller_name!r}; '
                                             f'controllers of {robot_name!r}: {sorted(group.controllers)}')
                        whole = False
                        continue
                    controllers.append((controller_name, controller))
                planned.append((group, controllers))
                if not len(members):
                    continue
                every_row = len(members) == self.env_num  # rows in slot order: the arrays as given
                for controller_name, controller in controllers:
                    commands[id(controller)] = (controller, members, self._parse_rows(
                        robot_name, controller_name, controller, members, every_row, controller_actions[controller_name]))
        return commands, ((tuple(actions), plan) if whole else None)

    def _parse_rows(self, robot_name: Any, controller_name: Any, controller: Any, members: np.ndarray, every_row: bool,
                    args: Any) -> Any:
        """One controller's batched argument: its row count checked, the rows of ``members`` parsed."""
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
            return controller.parse_batch(rows)
        except (ValueError, TypeError, IndexError, OverflowError) as exc:  # a parser choking on odd input: still bad input
            raise ValueError(f'batched actions[{robot_name!r}][{controller_name!r}]: {exc}'
                             f'{_non_finite_slots(rows, members)}') from None


def _all_are(items: list[Any], first: Any) -> bool:
    """Whether every item of ``items`` is ``first`` itself (identity: an equal action may still be
    invalid where ``first`` is not, ``True == 1``); a plain loop costs less than ``map(operator.is_)``."""
    for item in items:
        if item is not first:
            return False
    return True


def _non_finite_slots(rows: Any, members: np.ndarray) -> str:
    """For an error message: the env slots whose rows of ``rows`` hold NaN or inf (``''`` when
    none do, or the rows are not numbers)."""
    try:
        finite = np.isfinite(np.asarray(rows, dtype=float).reshape(len(members), -1)).all(axis=1)
    except (TypeError, ValueError, OverflowError):
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


def row_of(batch: Any, row: int) -> Any:
    """Row ``row`` of a controller's batch (stacked arrays, per-slot entries, or dicts and tuples
    of them), as a batch of one."""
    if isinstance(batch, Unbatched):
        one = Unbatched([batch[row]])
        return one
    if isinstance(batch, np.ndarray):
        return batch[row:row + 1]
    if isinstance(batch, dict):
        return {key: row_of(value, row) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(row_of(value, row) for value in batch)
    return batch


def apply_alone(controller: Any, slots: np.ndarray, batch: Any, raised: BaseException | None = None) -> dict[int, Exception]:
    """``controller.apply(slots, batch)`` raised ``raised``: apply each slot's command alone; the
    slots it fails for, with their errors (every other slot's command is applied). When ``raised``
    is a :class:`~internutopia.core.runner.failures.SlotFailures` (a per-slot adapter, which applied
    every slot's command once already), its slots are the answer and nothing is applied again."""
    if isinstance(raised, SlotFailures):
        return dict(raised.errors)
    failed: dict[int, Exception] = {}
    for row, slot in enumerate(slots.tolist()):
        try:
            one = row_of(batch, row)
            controller.apply(np.array([slot], dtype=np.intp), one if not isinstance(one, Unbatched) else controller.batch(one))
        except Exception as exc:  # an extension's error: it ends this slot's episode only
            failed[slot] = exc
    return failed
