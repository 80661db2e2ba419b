"""Joint position targets for a robot's position-servo actuators."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.controller.base import BaseController, as_float_array

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack
from internutopia_extension.configs.controllers.joint_controller import JointControllerCfg


@BaseController.register('JointController')
class JointController(BaseController):
    """``[q_1, ..., q_n]`` -> position targets of ``joint_names`` (actuators named after joints)."""

    config: JointControllerCfg

    def bind(self, world: Pack) -> None:
        super().bind(world)
        self.world = world
        robot = self.robot
        self.joint_names = list(self.config.joint_names or robot.actuated_joints)
        self.actuators = np.full((self.env_num, len(self.joint_names)), -1, dtype=np.intp)
        if len(robot.slots):
            self.actuators[robot.slots] = robot.ids(robot.slots, 'actuator', self.joint_names)

    def parse_action(self, action: Any) -> np.ndarray:
        if isinstance(action, (list, tuple)) and len(action) == 1 and np.ndim(action[0]) == 1:
            action = action[0]
        return as_float_array(action, (len(self.joint_names),), f'joint_controller expects {len(self.joint_names)} joint targets; action')

    def parse_batch(self, actions: Any) -> np.ndarray:
        return as_float_array(actions, (-1, len(self.joint_names)), f'joint_controller expects {len(self.joint_names)} joint targets per env; actions')

    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        self.world.data.ctrl[slots[:, None], self.actuators[slots]] = batch
