"""The robot group of an upstream-style robot class: the built-in class runs the physics of every
slot, each slot's instance of the upstream-style class takes its actions and makes its observations.

:func:`~internutopia.per_slot.robot.robot_group_class` puts :class:`SlotRobotGroup` in front of the
nearest built-in robot class; :func:`build_robot` makes a per-slot robot object (an instance, or a
view of a built-in robot) for one slot and episode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.config import RobotCfg, SimConfig
from internutopia.core.robot.base import BaseRobot
from internutopia.core.runner.failures import each_slot
from internutopia.core.util.trees import row
from internutopia.per_slot.building import BUILDING, SlotRobotContext
from internutopia.per_slot.instances import stale_slots, warn_cleanup_error
from internutopia.per_slot.robot_episode import built_robots_start, end_robot, start_robot
from internutopia.per_slot.scene import SlotScene

__all__ = ['SlotActionSink', 'SlotRobotGroup', 'build_robot']


class SlotActionSink:
    """Takes the action entries of a robot run by an upstream-style class and hands each slot's
    action to that slot's instance (``apply_action``), in the step's command phase.

    As InternUtopia's runner does, the action goes to the class's ``apply_action`` as it was
    given, whatever it is (InternManip's robots take a list of joint targets); a dict is handed
    over as a shallow copy of its own per slot (scripts often send one dict to every slot). Only a
    class that keeps :meth:`SlotRobot.apply_action <internutopia.per_slot.robot.SlotRobot.apply_action>`
    (``{controller_name: args}``, marked ``takes_controller_dict``) needs a dict.
    """

    def __init__(self, group: SlotRobotGroup) -> None:
        self.group = group
        self.name = f'{group.name} (per-slot robot)'

    def parse_action(self, action: Any) -> Any:
        """The action, unchanged; a ``ValueError`` when it is not a dict and the class's
        ``apply_action`` is :class:`~internutopia.per_slot.robot.SlotRobot`'s own (which takes ``{controller_name: args}``)."""
        apply_action = getattr(self.group.instance_class, 'apply_action', None)
        if not isinstance(action, dict) and getattr(apply_action, 'takes_controller_dict', False):
            raise ValueError(f'robot {self.group.name!r} ({self.group.instance_class.__name__}, whose apply_action is the '
                             f'built-in one) takes a dict {{controller_name: args}}; got {type(action).__name__}')
        return action

    def batch(self, parsed: list[Any]) -> list[Any]:
        return list(parsed)

    def apply(self, slots: np.ndarray, actions: list[Any]) -> None:
        each_slot(slots, lambda index, slot: self.group.instance(slot).apply_action(_own(actions[index])))


def _own(action: Any) -> Any:
    """``action`` for one slot: a dict copied (its entries shared), anything else as it is."""
    return dict(action) if isinstance(action, dict) else action


if TYPE_CHECKING:
    # What SlotRobotGroup is put in front of (see robot_group_class): a built-in robot class.
    _BuiltinRobot = BaseRobot
else:
    _BuiltinRobot = object


class SlotRobotGroup(_BuiltinRobot):
    """Put in front of a built-in robot class, the group of an upstream-style robot class: the
    built-in class runs the physics of every slot; the per-slot instances (of :attr:`instance_class`)
    take the slots' actions and make their observations (lists of dicts, so the array API cannot
    serve it)."""

    array_api = False
    #: The class of the per-slot instances (the upstream-style class, see :func:`robot_group_class`).
    instance_class: type

    def __init__(self, config: RobotCfg, env_num: int, sim: SimConfig) -> None:
        super().__init__(config, env_num, sim)  # the built-in robot class behind
        self.instances: dict[int, Any] = {}
        self.slot_configs: dict[int, RobotCfg] = {}
        #: Each slot's row of the built-in observation, with the slot's sim time when it was read.
        self._rows: dict[int, tuple[float, dict[str, Any]]] = {}
        #: Each slot's instance's ``get_obs()`` (or its error), with the slot's sim time: a robot is
        #: observed once a step, however many readers ask (the step's observation, a metric's).
        self._observed: dict[int, tuple[float, Any, Exception | None]] = {}
        self._sink = SlotActionSink(self)

    def commanded(self, controller_actions: Any) -> list[tuple[str | None, Any, Any]]:
        """The whole ``{controller_name: args}`` goes to the slot's instance (its ``apply_action``)."""
        return [(None, self._sink, controller_actions)]

    def reset_slots(self, slots: np.ndarray, configs: Sequence[RobotCfg]) -> None:
        for slot in np.asarray(slots).tolist():
            self._end_instance(slot)  # (the slot's last episode's, if its end was not told)
        super().reset_slots(slots, configs)
        for slot, config in zip(np.asarray(slots).tolist(), configs, strict=True):
            self.slot_configs[slot] = config
            self._rows.pop(slot, None)
            self._observed.pop(slot, None)

    def episode_ended(self, slot: int) -> None:
        """``slot``'s episode is over: its instance's ``cleanup()`` runs (once: not when its task's
        cleanup already took care of it) and the instance goes; then the group's listeners (its
        per-slot controllers and sensors let their instances go)."""
        self._end_instance(slot)
        self._rows.pop(slot, None)
        self._observed.pop(slot, None)
        super().episode_ended(slot)

    def _end_instance(self, slot: int) -> None:
        old = self.instances.pop(slot, None)
        if old is not None:
            try:
                end_robot(old)
            except Exception as exc:
                warn_cleanup_error(old, slot, exc)

    def state_changed(self, slot: int) -> None:
        self._rows.pop(slot, None)
        self._observed.pop(slot, None)
        super().state_changed(slot)  # (the listeners: per-slot sensors and controllers read again)

    # (A list, one observation per slot, where the built-in class has arrays: array_api is False.)
    def get_obs(self, slots: np.ndarray) -> list[Any]:  # type: ignore[override]
        """One observation per slot of ``slots``: its instance's ``get_obs()``, called once per slot
        and step (asked again in the same step, the same observation, or the same error)."""
        times = self.bound_world.data.time
        observed = self._observed
        listed = np.asarray(slots, dtype=np.intp).tolist()
        todo = stale_slots(observed, listed, times)
        if todo:
            tree = self.builtin_obs(np.array(todo, dtype=np.intp))  # read once for these slots; the instances read their rows
            for index, slot in enumerate(todo):
                time = float(times[slot])
                self._rows[slot] = (time, row(tree, index))
                try:
                    observed[slot] = (time, self.instance(slot).get_obs(), None)
                except Exception as exc:  # (kept: the slot's error again if asked again this step)
                    observed[slot] = (time, None, exc)
        out = []
        for slot in listed:
            _, obs, error = observed[slot]
            if error is not None:
                raise error  # (after every other slot was observed: asked again, each gives what it gave)
            out.append(obs)
        return out

    def builtin_obs(self, slots: np.ndarray) -> dict[str, Any]:
        """The built-in class's observation arrays of ``slots``."""
        return super().get_obs(slots)

    def row(self, slot: int) -> dict[str, Any]:
        """``slot``'s row of :meth:`builtin_obs` now (the step's row when it is current)."""
        held = self._rows.get(slot)
        if held is not None and held[0] == float(self.bound_world.data.time[slot]):
            return dict(held[1])
        return row(self.builtin_obs(np.array([slot], dtype=np.intp)), 0)

    def instance(self, slot: int) -> Any:
        """``slot``'s instance of the upstream-style class (made once per slot and episode; one
        whose start raised is dropped: the next call builds and starts another)."""
        made = self.instances.get(slot)
        if made is None:
            made = build_robot(self.instance_class, self, slot, self.slot_configs.get(slot, self.config), self.instances)
            if built_robots_start():
                start_robot(made)
        return made

    def forget_instance(self, slot: int, instance: Any) -> None:
        """Drop ``instance`` (whose start raised) if it is still ``slot``'s, with its ``cleanup``."""
        held: Any = self.instances.get(slot)
        if held is instance:  # (else another one is the slot's now: it stays)
            del self.instances[slot]
            end_robot(held)


def build_robot(cls: Any, group: BaseRobot, slot: int, config: Any, instances: dict[int, Any]) -> Any:
    """A per-slot robot object of class ``cls`` (a :class:`~internutopia.per_slot.robot.SlotRobot`
    subclass) for ``group`` in ``slot``, kept in ``instances`` before its ``__init__`` runs (its
    sensors and controllers ask for it while it builds); a failing ``__init__`` leaves nothing behind."""
    if group.env_view is None:
        raise RuntimeError(f'robot {group.name!r} is not in an env yet; per-slot robots exist once an episode runs')
    scene = SlotScene(group.env_view, slot)
    made = cls.__new__(cls)
    made._slot_group = group
    made._slot = int(slot)
    instances[slot] = made
    token = BUILDING.set(SlotRobotContext(group, int(slot), scene.origin))
    try:
        cls.__init__(made, config, scene)
    except BaseException:
        instances.pop(slot, None)
        raise
    finally:
        BUILDING.reset(token)
    return made
