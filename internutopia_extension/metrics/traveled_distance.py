"""TraveledDistanceMetric: path length of a robot's base (xyz) over the episode."""

from __future__ import annotations

import numpy as np

from internutopia.core.metric.base import BaseMetric


@BaseMetric.register('TraveledDistanceMetric')
class TraveledDistanceMetric(BaseMetric):
    """Sums the distance the robot's base moves each step (``metric_config['robot_name']``)."""

    def __init__(self, config, view) -> None:
        super().__init__(config, view)
        self.distance = np.zeros(self.env_num)
        self.last_position = np.zeros((self.env_num, 3))
        self.robot = view.tracker()

    def reset_slot(self, slot: int, task) -> None:
        self.robot.track(slot, self.measured_robot(task))
        self.last_position[slot] = self.robot.positions(np.array([slot]))[0]
        self.distance[slot] = 0.0

    def update(self, slots: np.ndarray) -> None:
        position = self.robot.positions(slots)
        self.distance[slots] += np.linalg.norm(position - self.last_position[slots], axis=1)
        self.last_position[slots] = position

    def calc(self, slot: int) -> float:
        return float(self.distance[slot])
