"""The entity groups of the world: one robot or object group per structure and name.

A group drives one named robot (or object) in every slot whose episode has the same structure,
so all its slots share one pack (the same model ids) and a slot keeps its group objects, and so
its controller state, while its episode's structure is unchanged. :meth:`EntityGroups.place`
rebuilds the groups and the world's packs when a reset changes structures; every other slot's
state stays as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from internutopia.core.backend.parts import SlotPart
from internutopia.core.config import ObjectCfg, RobotCfg, SimConfig, TaskCfg
from internutopia.core.entity import Entity
from internutopia.core.object.base import BaseObject
from internutopia.core.robot.base import BaseRobot
from internutopia.core.runner.slots import SlotTable
from internutopia.core.scene import scene_spec

_Cfg = TypeVar('_Cfg', RobotCfg, ObjectCfg)
_Group = TypeVar('_Group', BaseRobot, BaseObject)


class EntityGroups:
    """The robot and object groups in use, keyed ``'{structure}|{name}'``.

    Attributes:
        robots: robot groups (a new dict whenever :meth:`place` changes them, so identity tells a change).
        objects: object groups (likewise).
    """

    def __init__(self, env_num: int, sim: SimConfig, world: Any, view: Any) -> None:
        self.env_num = env_num
        self.sim = sim
        self.world = world
        self.view = view
        self.robots: dict[str, BaseRobot] = {}
        self.objects: dict[str, BaseObject] = {}
        self._hooks: tuple[dict[str, BaseRobot], list[Callable[[], None]], list[Callable[[], None]], list[BaseRobot]] | None = None
        self._by_name: tuple[dict[str, BaseRobot], dict[str, list[BaseRobot]]] | None = None

    def parts_for(self, task: TaskCfg, where: str) -> list[SlotPart]:
        """The parts of a slot holding ``task``, from fresh groups (to compile its model ahead of a reset)."""
        robots = {e.name: BaseRobot.create(e, self.env_num, self.sim, where=where) for e in task.robots}
        objects = {e.name: BaseObject.create(e, self.env_num, self.sim, where=where) for e in task.objects}
        return slot_parts(task, robots, objects)

    def place(self, table: SlotTable, slots: list[int], configs: list[TaskCfg | None], structures: list[str | None]) -> None:
        """Give ``slots`` the groups of their new episodes and rebuild the packs that changed.

        ``configs`` and ``structures`` hold every slot's episode config and structure after the
        reset (those of ``slots`` new, the others as they are). Writes the table's
        ``slot_robots``, ``slot_objects`` and ``structures``; groups nobody uses any more go.
        """
        robot_members: dict[str, list[int]] = {}
        object_members: dict[str, list[int]] = {}
        robots = dict(self.robots)
        objects = dict(self.objects)
        slot_robots: list[dict[str, BaseRobot]] = [{} for _ in range(self.env_num)]
        slot_objects: list[dict[str, BaseObject]] = [{} for _ in range(self.env_num)]
        for slot, task in enumerate(configs):
            if task is None:
                continue
            self._join(slot, structures[slot], task.robots, BaseRobot.create, robot_members, robots, slot_robots[slot])
            self._join(slot, structures[slot], task.objects, BaseObject.create, object_members, objects, slot_objects[slot])

        def parts_of(slot: int) -> list[SlotPart]:
            task = configs[slot]
            return slot_parts(task, slot_robots[slot], slot_objects[slot]) if task is not None else []

        changed = self.world.place({slot: structures[slot] for slot in slots}, parts_of)
        self.robots = {k: g for k, g in robots.items() if k in robot_members}
        self.objects = {k: g for k, g in objects.items() if k in object_members}
        for groups, members in ((self.robots, robot_members), (self.objects, object_members)):
            for key, group in groups.items():
                pack = self.world.pack(members[key][0])
                if pack.key in changed or group.world is not pack:
                    group.bind(pack, np.array(members[key]))
        table.slot_robots, table.slot_objects = slot_robots, slot_objects
        table.structures = structures

    def _join(self, slot: int, structure: str | None, entities: Sequence[_Cfg],
              factory: Callable[[_Cfg, int, SimConfig, str], _Group], members: dict[str, list[int]],
              groups: dict[str, _Group], slot_map: dict[str, _Group]) -> None:
        """Give ``slot`` (of ``structure``) the group of each of ``entities``, made by ``factory`` for
        a key not in ``groups`` yet; the slot joins the key's ``members`` and its ``slot_map``."""
        for entity in entities:
            key = f'{structure}|{entity.name}'
            if key not in groups:
                groups[key] = factory(entity, self.env_num, self.sim, f'slot {slot}')
                groups[key].env_view = self.view
            members.setdefault(key, []).append(slot)
            slot_map[entity.name] = groups[key]

    def quiet_steps(self, limit: int) -> int:
        """How many env steps after the coming one (at most ``limit``) no robot group's step hooks
        would change anything on (see :meth:`BaseRobot.quiet_steps`): ``limit`` when no group
        has hooks."""
        self.step_hooks()
        assert self._hooks is not None  # (made by step_hooks)
        for group in self._hooks[3]:
            limit = min(limit, group.quiet_steps(limit))
            if limit <= 0:
                return 0
        return limit

    def step_hooks(self) -> tuple[list[Callable[[], None]], list[Callable[[], None]]]:
        """The ``begin_step`` and ``before_physics`` methods of the robot groups that define them
        (the base ones do nothing: no call per step for them), cached until the groups change."""
        cached = self._hooks
        if cached is None or cached[0] is not self.robots:
            groups = self.robots.values()
            begin = [group for group in groups if type(group).begin_step is not Entity.begin_step]
            before = [group for group in groups if type(group).before_physics is not Entity.before_physics]
            cached = self._hooks = (self.robots, [group.begin_step for group in begin],
                                    [group.before_physics for group in before],
                                    list({id(group): group for group in (*begin, *before)}.values()))
        return cached[1], cached[2]

    def robots_by_name(self) -> dict[str, list[BaseRobot]]:
        """Robot groups by robot name (one per structure that has the name), cached until the groups change."""
        cached = self._by_name
        if cached is None or cached[0] is not self.robots:
            named: dict[str, list[BaseRobot]] = {}
            for group in self.robots.values():
                named.setdefault(group.name, []).append(group)
            cached = self._by_name = (self.robots, named)
        return cached[1]


def slot_parts(task: TaskCfg, robots: dict[str, BaseRobot], objects: dict[str, BaseObject]) -> list[SlotPart]:
    """The parts of a slot holding ``task``: its scene, then its robots and objects by name."""
    return ([SlotPart('scene/', scene_spec(task))]
            + [SlotPart(f'{name}/', robot.spec(), contact_root=robot.base_body, max_dt=robot.max_physics_dt,
                        draws=any(sensor.draws_structure for sensor in robot.sensors.values()))
               for name, robot in robots.items()]
            + [SlotPart(f'{name}/', entity.spec(), max_dt=entity.max_physics_dt) for name, entity in objects.items()])


__all__ = ['EntityGroups', 'slot_parts']
