"""Discrete navigation actions on top of a move-by-speed controller (InternNav's composite pattern)."""

from __future__ import annotations

from internutopia.core.robot.controller import BaseController

STOP, FORWARD, LEFT, RIGHT = range(4)


@BaseController.register('DiscreteMove')
class DiscreteMove(BaseController):
    def __init__(self, config, robot, scene):
        super().__init__(config=config, robot=robot, scene=scene)
        self.last_action = STOP

    def forward(self, action: int):
        self.last_action = int(action)
        speed, turn = self.config.forward_speed, self.config.turn_speed
        forward, rotation = {STOP: (0.0, 0.0), FORWARD: (speed, 0.0), LEFT: (0.0, turn), RIGHT: (0.0, -turn)}[self.last_action]
        return self.sub_controllers[0].forward(forward_speed=forward, rotation_speed=rotation, lateral_speed=0.0)

    def action_to_control(self, action):
        return self.forward(action[0])

    def get_obs(self):
        return self._make_ordered({'last_action': self.last_action})
