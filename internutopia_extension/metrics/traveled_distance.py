"""TraveledDistanceMetric: path length of a robot's base (xyz) over the episode."""

from __future__ import annotations

import numpy as np

from internutopia.core.metric.base import BaseMetric


@BaseMetric.register('TraveledDistanceMetric')
class TraveledDistanceMetric(BaseMetric):
    """Sums the distance the robot's base moves each step (``metric_config['robot_name']``)."""

    def __init__(self, config, runner) -> None:
        super().__init__(config, runner)
        self.distance = np.zeros(self.env_num)
        self.last_position = np.zeros((self.env_num, 3))
        self.robot_names: list[str | None] = [None] * self.env_num

    def reset_slot(self, slot: int, task) -> None:
        name = self.robot_names[slot] = self.measured_robot(task)
        robot = self.runner.slot_robots[slot][name]
        self.last_position[slot] = robot.poses(np.array([slot]))[0][0]
        self.distance[slot] = 0.0

    def update(self, slots: np.ndarray) -> None:
        for robot, members in self._by_robot(slots):
            position = robot.poses(members)[0]
            self.distance[members] += np.linalg.norm(position - self.last_position[members], axis=1)
            self.last_position[members] = position

    def _by_robot(self, slots: np.ndarray):
        groups: dict[int, tuple] = {}
        for slot in slots:
            robot = self.runner.slot_robots[slot][self.robot_names[slot]]
            groups.setdefault(id(robot), (robot, []))[1].append(slot)
        return [(robot, np.array(members)) for robot, members in groups.values()]

    def calc(self, slot: int) -> float:
        return float(self.distance[slot])
