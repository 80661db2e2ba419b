"""A navigation task that adds GPS readings to the robot's observations (InternNav's VLN tasks do)."""

from __future__ import annotations

import numpy as np

from internutopia.core.task import BaseTask


@BaseTask.register('NavTask')
class NavTask(BaseTask):
    def __init__(self, config, scene):
        super().__init__(config, scene)
        self.goal = np.asarray(config.goal, dtype=float)
        self.robot_name = config.robots[0].name

    def get_observations(self):
        obs = super().get_observations()
        robot_obs = obs[self.robot_name]
        robot_obs['globalgps'] = np.asarray(robot_obs['position'], dtype=float)[:2]
        robot_obs['goal_distance'] = float(np.linalg.norm(robot_obs['globalgps'] - self.goal))
        return obs

    def is_done(self):
        robot = self.robots[self.robot_name]
        arrived = np.linalg.norm(np.asarray(robot.get_pose()[0])[:2] - self.goal) < self.config.success_distance
        return bool(arrived or robot.fallen() or self.steps >= self.config.max_steps)
