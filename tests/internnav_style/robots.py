"""An H1 that finds its links by prim path when an episode starts (as InternNav's H1 does)."""

from __future__ import annotations

from internutopia.core.robot.robot import BaseRobot
from internutopia_extension.robots.h1 import H1Robot


@BaseRobot.register('NavH1')
class NavH1(H1Robot):
    def __init__(self, config, scene):
        super().__init__(config, scene)
        self.start_ankle_height = None

    def post_reset(self):
        super().post_reset()
        links = self._rigid_body_map
        self.torso = links[self.config.prim_path + '/torso_link']
        self.ankles = [links[self.config.prim_path + f'/{side}_ankle_link'] for side in ('left', 'right')]
        self.start_ankle_height = self.get_ankle_height()

    def get_ankle_height(self):
        return min(float(ankle.get_pose()[0][2]) for ankle in self.ankles)

    def fallen(self):
        return self.get_ankle_height() - self.start_ankle_height < self.config.fall_height

    def get_obs(self):
        obs = super().get_obs()
        obs['torso_height'] = float(self.torso.get_pose()[0][2])
        obs['ankle_height'] = self.get_ankle_height()
        return obs
