"""A metric fed the task's observations (InternNav's metrics read ``globalgps`` from them)."""

from __future__ import annotations

import numpy as np

from internutopia.core.task.metric import BaseMetric


@BaseMetric.register('PathMetric')
class PathMetric(BaseMetric):
    def __init__(self, config, task_config):
        super().__init__(config, task_config)
        self.robot_name = task_config.robots[0].name
        self.positions = []
        self.last_distance = None
        self.updates = 0

    def update(self, task_obs):
        robot_obs = task_obs[self.robot_name]
        self.positions.append(np.asarray(robot_obs['globalgps'], dtype=float))
        self.last_distance = robot_obs['goal_distance']
        self.updates += 1

    def calc(self):
        steps = np.diff(np.array(self.positions), axis=0) if len(self.positions) > 1 else np.zeros((0, 2))
        return {'path_length': float(np.linalg.norm(steps, axis=1).sum()), 'updates': self.updates,
                'final_distance': self.last_distance}
