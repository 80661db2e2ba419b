"""A navigation task that adds GPS readings to the robot's observations (InternNav's VLN tasks do).

As InternNav's evaluation task does, it sets itself up in ``load()`` and decides that the episode
is over while it observes (``get_observations``), leaving ``is_done`` to report it.
"""

from __future__ import annotations

import numpy as np

from internutopia.core.task import BaseTask


@BaseTask.register('NavTask')
class NavTask(BaseTask):
    def __init__(self, config, scene):
        super().__init__(config, scene)
        self.robot_name = None
        self.finished = False

    def load(self):
        super().load()
        self.goal = np.asarray(self.config.goal, dtype=float)
        self.robot_name = self.config.robots[0].name

    def get_observations(self):
        obs = super().get_observations()
        robot_obs = obs[self.robot_name]
        robot_obs['globalgps'] = np.asarray(robot_obs['position'], dtype=float)[:2]
        robot_obs['goal_distance'] = float(np.linalg.norm(robot_obs['globalgps'] - self.goal))
        robot = self.robots[self.robot_name]
        arrived = robot_obs['goal_distance'] < self.config.success_distance
        self.finished = bool(arrived or robot.fallen() or self.steps >= self.config.max_steps)
        return obs

    def is_done(self):
        return self.finished
