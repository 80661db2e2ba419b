"""Point-goal navigation metrics: success, SPL, distance to goal, steps, collisions.

Each metric object serves every slot whose episode lists its config; state is in arrays indexed by
slot id and ``update`` runs once per env step for all those slots with numpy. The goal,
``success_distance`` and ``shortest_path_length`` come from the episode's task config (a
``PointNavTaskCfg``, or any task config with a ``goal``); the robot is
``metric_config['robot_name']``, else the task's ``robot_name``, else its first robot. All
distances are in the xy plane, in metres.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from internutopia.core.backend.model import Contacts, GeomType
from internutopia.core.metric.base import BaseMetric
from internutopia.core.robot.base import rows_of
from internutopia_extension.tasks import point_nav_kernels
from internutopia_extension.tasks.point_nav import xy_distance

if TYPE_CHECKING:
    from internutopia.core.backend.interface import ModelLookup

#: Contacts with static geoms whose normal is this close to vertical count as floor.
_FLOOR_NORMAL_Z = float(np.cos(np.radians(25.0)))
_FLOOR_TYPES = (int(GeomType.PLANE), int(GeomType.HFIELD))


class _GoalMetric(BaseMetric):
    """Shared set-up: which robot to follow and where its goal is, per slot."""

    def __init__(self, config, view) -> None:
        super().__init__(config, view)
        self.robot = view.tracker()
        self.goal = np.zeros((self.env_num, 3))
        self.success_distance = np.zeros(self.env_num)
        #: Per slot, whether its task keeps this robot's distance to this goal after each step it
        #: completed (a ``PointNavTask`` measuring the same robot): the end distance is read there.
        self.task_tracks_distance = np.zeros(self.env_num, dtype=bool)

    def reset_slot(self, slot: int, task) -> None:
        goal = getattr(task, 'goal', None)
        if goal is None:
            raise ValueError(f'{self.name} ({self.config.type}) needs a task with a goal (e.g. PointNavTaskCfg); '
                             f'{task.type} has none')
        self.goal[slot] = goal
        self.success_distance[slot] = getattr(task, 'success_distance', 0.3)
        robot = self.measured_robot(task)
        self.robot.track(slot, robot)
        running = self.view.task(slot)
        nav_robot = getattr(task, 'nav_robot_name', None)
        self.task_tracks_distance[slot] = (isinstance(getattr(running, 'distance', None), np.ndarray)
                                           and callable(nav_robot) and nav_robot() == robot)

    def distance(self, slots: np.ndarray) -> np.ndarray:
        return xy_distance(self.robot.positions(slots), self.goal[slots])

    def end_distance(self, slot: int) -> float:
        """The distance at the end of ``slot``'s episode: the task's after its last completed step
        where it keeps one, else measured now. The same for an episode its task ended; for one
        whose simulation diverged, the engine has put the robot back to its rest pose at the slot's
        origin, which the task's distance never saw (measured, the goal's own distance from the
        origin would be scored)."""
        if self.task_tracks_distance[slot]:
            return float(self.view.task(slot).distance[slot])
        return float(self.distance(np.array([slot]))[0])


@BaseMetric.register('SuccessMetric')
class SuccessMetric(_GoalMetric):
    """Whether the episode ended within ``success_distance`` of the goal."""

    def calc(self, slot: int) -> bool:
        return bool(self.end_distance(slot) < self.success_distance[slot])


@BaseMetric.register('DistanceToGoalMetric')
class DistanceToGoalMetric(_GoalMetric):
    """xy distance from the robot's base to the goal at the end of the episode."""

    def calc(self, slot: int) -> float:
        return self.end_distance(slot)


@BaseMetric.register('SPLMetric')
class SPLMetric(_GoalMetric):
    """``success * L / max(P, L)``: ``L`` shortest path length (or straight line), ``P`` travelled."""

    def __init__(self, config, view) -> None:
        super().__init__(config, view)
        self.shortest = np.zeros(self.env_num)
        self.travelled = np.zeros(self.env_num)
        self.last_xy = np.zeros((self.env_num, 2))
        self._travel = point_nav_kernels.travel_kernel.compiled_or(None)
        if self._travel is not None:
            point_nav_kernels.warm()

    def reset_slot(self, slot: int, task) -> None:
        super().reset_slot(slot, task)
        start = self.robot.positions(np.array([slot]))[0]
        self.last_xy[slot] = start[:2]
        self.travelled[slot] = 0.0
        length = getattr(task, 'shortest_path_length', None)
        self.shortest[slot] = length if length is not None else float(np.hypot(*(self.goal[slot, :2] - start[:2])))

    def update(self, slots: np.ndarray) -> None:
        if self._travel is not None:  # (the same arithmetic as below, in one call)
            self._travel(slots, point_nav_kernels.positions_by_slot(self.robot, slots, self.env_num), self.last_xy, self.travelled)
            return
        rows = rows_of(slots, self.env_num)  # every physics step: views, not gathers, when all slots run
        xy = self.robot.positions(slots)[:, :2]
        last = self.last_xy[rows]
        self.travelled[rows] += np.hypot(xy[:, 0] - last[:, 0], xy[:, 1] - last[:, 1])
        self.last_xy[rows] = xy

    def calc(self, slot: int) -> float:
        if not self.end_distance(slot) < self.success_distance[slot]:
            return 0.0
        shortest, travelled = self.shortest[slot], self.travelled[slot]
        return float(shortest / max(travelled, shortest)) if max(travelled, shortest) > 0 else 1.0


@BaseMetric.register('StepsMetric')
class StepsMetric(BaseMetric):
    """Env steps the episode ran (its last step included)."""

    def calc(self, slot: int) -> int:
        return int(self.view.steps[slot])


@BaseMetric.register('CollisionCountMetric')
class CollisionCountMetric(_GoalMetric):
    """Onsets of contact between the robot and anything but the floor (see the config's docs).

    Per step, the robot's contact summary (the pack's
    :meth:`~internutopia.core.backend.interface.Pack.contact_readings`: the world keeps one for
    each robot, see :class:`~internutopia.core.backend.parts.SlotPart`) is read for all slots at
    once: a slot whose robot touches only static world geoms with near-vertical normals touches
    nothing but floor. Any other slot (rare: a robot against a wall or an object) is decided exactly from
    its contact list at its current state. A collision ends after ``metric_config['release_steps']`` (default 12, i.e.
    0.05 s at 240 Hz) steps without such contact, so a robot chattering against a wall counts once,
    not once per bounce.
    """

    def __init__(self, config, view) -> None:
        super().__init__(config, view)
        self.count = np.zeros(self.env_num, dtype=np.int64)
        self.in_collision = np.zeros(self.env_num, dtype=bool)
        self.free_steps = np.zeros(self.env_num, dtype=np.int64)
        self.release_steps = int(config.metric_option('release_steps', 12))  # (checked by its config class)
        if self.release_steps < 1:
            raise ValueError(f'{self.name}: metric_config release_steps must be >= 1; got {self.release_steps}')
        self._tables: dict[tuple[int, str], tuple] = {}  # (id(lookup), robot) -> geom tables

    def reset_slot(self, slot: int, task) -> None:
        # Only the robot matters here; a goal is not needed (works with any task).
        self.robot.track(slot, self.measured_robot(task))
        self.count[slot] = 0
        self.in_collision[slot] = self._touching(np.array([slot]))[0]  # contact at the start is not a collision
        self.free_steps[slot] = 0

    def _tables_of(self, lookup: ModelLookup, robot: str) -> tuple:
        """Per-geom tables (robot's own, floor type, static) of ``robot`` in the model of ``lookup``."""
        key = (id(lookup), robot)
        tables = self._tables.get(key)
        if tables is None or tables[0] is not lookup:
            prefix = f'{robot}/'
            own_body = np.array([name.startswith(prefix) for name in lookup.names('body')])
            geoms = lookup.geoms()
            tables = (lookup, own_body[geoms.body], np.isin(geoms.type, _FLOOR_TYPES), geoms.static)
            if len(self._tables) > 64:  # forget models no longer in use
                self._tables.clear()
            self._tables[key] = tables
        return tables

    def _touching(self, slots: np.ndarray) -> np.ndarray:
        """Per slot of ``slots``: does its tracked robot touch a non-floor geom now?"""
        touching = np.zeros(len(slots), dtype=bool)
        for group, rows, members in self.robot.groups(slots):
            pack = group.world
            readings = pack.contact_readings(f'{group.name}/', members)
            found, static_found, normal = readings.count, readings.static_count, readings.normal
            capacity = normal.shape[1]
            listed = np.arange(capacity) < found[:, None]
            steep = listed & (np.abs(normal[:, :, 2]) <= _FLOOR_NORMAL_Z)
            unsure = (found > static_found) | (found > capacity) | steep.any(axis=1)
            if not unsure.any():
                continue
            _, own, floor_type, static = self._tables_of(pack.lookup, group.name)
            for row, slot in zip(rows[unsure].tolist(), members[unsure].tolist(), strict=True):
                touching[row] = self._touching_exactly(pack.contacts(slot), own, floor_type, static)
        return touching

    @staticmethod
    def _touching_exactly(contacts: Contacts, own: np.ndarray, floor_type: np.ndarray, static: np.ndarray) -> bool:
        n = len(contacts.geom)
        if not n:
            return False
        geom = contacts.geom
        tracked = own[geom]
        one_side = tracked[:, 0] != tracked[:, 1]  # contacts within the robot itself do not count
        rows = np.arange(n)
        other = geom[rows, np.where(tracked[:, 0], 1, 0)]
        vertical = np.abs(contacts.normal[:, 2]) > _FLOOR_NORMAL_Z
        return bool(np.any(one_side & ~(floor_type[other] | (static[other] & vertical))))

    def update(self, slots: np.ndarray) -> None:
        now = self._touching(slots)
        self.count[slots] += now & ~self.in_collision[slots]
        free = np.where(now, 0, self.free_steps[slots] + 1)
        self.free_steps[slots] = free
        self.in_collision[slots] = now | (self.in_collision[slots] & (free < self.release_steps))

    def calc(self, slot: int) -> int:
        return int(self.count[slot])
