"""PointNavTask: drive a robot's base to an env-local goal; vectorized over slots.

State lives in arrays indexed by slot id. Per env step, for all active slots of the task at once:
the xy distance from the robot's base to the goal, success (``distance < success_distance``,
``terminated``), the time limit (``truncated`` at ``max_steps``, unless it succeeded on that step)
and the reward of each slot's reward config (default ``PointNavProgressReward``).

Observations, next to the robots' own dicts::

    obs[i]['task']    = {'goal': (3,) env-local xyz, 'distance_to_goal': float (xy, m)}
    obs[i]['objects'] = {object_name: {'position', 'orientation', ...}}   (see ObjectObservationsMixin)
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from internutopia.core.reward.base import BaseReward
from internutopia.core.task.base import BaseTask
from internutopia_extension.objects.observations import ObjectObservationsMixin

NO_BODY = -1


class BaseBodyTracker:
    """Where one named robot's base is, per slot, through the robots' own entity groups.

    ``track(slot, name)`` when a slot starts an episode; ``positions(slots)`` reads env-local base
    positions of many slots with one ``Entity.poses`` call per robot group (a group lives in one
    pack of the world, so this works whatever the mix of structures). The slot -> group table is
    re-read only when slots changed packs, never per step.
    """

    def __init__(self, runner: Any) -> None:
        self.runner = runner
        self.names: list[Optional[str]] = [None] * runner.env_num
        self.group_of = np.full(runner.env_num, NO_BODY, dtype=np.intp)  # index into self.groups
        self.groups: list[Any] = []
        self._version = -1

    def track(self, slot: int, name: str) -> None:
        """Follow robot ``name`` in ``slot`` (the slot's robots must be bound)."""
        self.refresh()
        self.names[slot] = name
        robot = self.runner.slot_robots[slot][name]
        index = next((k for k, group in enumerate(self.groups) if group is robot), None)
        if index is None:
            index = len(self.groups)
            self.groups.append(robot)
        self.group_of[slot] = index

    def robot(self, slot: int) -> Any:
        """The entity group of the robot followed in ``slot``."""
        return self.runner.slot_robots[slot][self.names[slot]]

    def refresh(self) -> None:
        """Re-read which group holds each tracked robot when slots changed packs (cheap otherwise)."""
        if self.runner.world.version == self._version:
            return
        index: dict[int, int] = {}
        self.groups = []
        for slot, name in enumerate(self.names):
            robot = self.runner.slot_robots[slot].get(name) if name is not None else None
            if robot is None:
                self.group_of[slot] = NO_BODY
                continue
            if id(robot) not in index:
                index[id(robot)] = len(self.groups)
                self.groups.append(robot)
            self.group_of[slot] = index[id(robot)]
        self._version = self.runner.world.version

    def positions(self, slots: np.ndarray) -> np.ndarray:
        """Env-local base positions ``(len(slots), 3)``."""
        self.refresh()
        which = self.group_of[slots]
        if len(self.groups) == 1:
            return self.groups[0].poses(slots)[0]
        out = np.empty((len(slots), 3))
        for g in np.unique(which):
            rows = which == g
            out[rows] = self.groups[g].poses(slots[rows])[0]
        return out


def xy_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise xy distance between ``(k, >=2)`` arrays."""
    return np.hypot(a[:, 0] - b[:, 0], a[:, 1] - b[:, 1])


@BaseTask.register('PointNavTask')
class PointNavTask(ObjectObservationsMixin, BaseTask):
    """All slots running ``PointNavTaskCfg`` episodes. Exposes, per slot: ``goal``, ``distance``
    (current), ``prev_distance`` (one step earlier), ``success`` -- what rewards and metrics read."""

    def __init__(self, runner: Any) -> None:
        super().__init__(runner)
        n = self.env_num
        self.goal = np.zeros((n, 3))
        self.success_distance = np.zeros(n)
        self.max_steps = np.zeros(n, dtype=np.int64)
        self.distance = np.zeros(n)
        self.prev_distance = np.zeros(n)
        self.success = np.zeros(n, dtype=bool)
        self.robot = BaseBodyTracker(runner)
        self.rewards: dict[str, BaseReward] = {}
        self.reward_of = np.full(n, -1, dtype=np.intp)  # index into self._reward_list, -1: no reward
        self._reward_list: list[BaseReward] = []

    def reset_slot(self, slot: int, config: Any) -> None:
        super().reset_slot(slot, config)
        self.goal[slot] = config.goal
        self.success_distance[slot] = config.success_distance
        self.max_steps[slot] = config.max_steps
        self.robot.track(slot, config.nav_robot_name())
        distance = xy_distance(self.robot.positions(np.array([slot])), self.goal[[slot]])[0]
        self.distance[slot] = self.prev_distance[slot] = distance
        self.success[slot] = False
        self.reward_of[slot] = -1
        if config.reward is not None:
            key = config.reward.model_dump_json()
            reward = self.rewards.get(key)
            if reward is None:
                reward = self.rewards[key] = BaseReward.create(config.reward, self.runner, where=f'{config.type}.reward')
                self._reward_list.append(reward)
            self.reward_of[slot] = self._reward_list.index(reward)
            reward.reset_slot(slot, config)

    def step(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        distance = xy_distance(self.robot.positions(slots), self.goal[slots])
        self.prev_distance[slots] = self.distance[slots]
        self.distance[slots] = distance
        success = distance < self.success_distance[slots]
        self.success[slots] = success
        truncated = ~success & (self.runner.steps[slots] >= self.max_steps[slots])
        reward = np.zeros(len(slots))
        which = self.reward_of[slots]
        for index in np.unique(which[which >= 0]):
            rows = np.flatnonzero(which == index)
            reward[rows] = self._reward_list[index].calc(slots[rows])
        return reward, success, truncated

    def get_observations(self, slots: np.ndarray) -> dict[str, Any]:
        return {
            'task': {'goal': self.goal[slots].copy(), 'distance_to_goal': self.distance[slots].copy()},
            **self.object_observations(slots),
        }
