"""InternUtopia's ``RecoverController`` and ``RMPFlowController`` names, with their meaning here.

- ``RecoverController`` puts the robot's base upright at ``recover_height``, keeping x, y and
  heading (InternUtopia drives H1's joints back to standing; here the base is set directly, and
  H1's base target follows). The action is ignored: send ``[]``.
- ``RMPFlowController`` is Isaac Sim's Lula motion policy in InternUtopia; here the same target
  (``[position, orientation]`` of the end effector) is reached by the inverse-kinematics controller.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.controller.base import BaseController
from internutopia.core.util.math import quat_to_yaw, yaw_to_quat
from internutopia_extension.configs.controllers.recover_controller import RecoverControllerCfg
from internutopia_extension.controllers.ik_controller import InverseKinematicsController


@BaseController.register('RecoverController')
class RecoverController(BaseController):
    """See the module docstring."""

    config: RecoverControllerCfg

    def parse_action(self, action: Any) -> bool:
        return True  # InternUtopia's recover takes no arguments

    def batch(self, parsed: list[Any]) -> np.ndarray:
        return np.ones(len(parsed), dtype=bool)

    def parse_batch(self, actions: Any) -> np.ndarray:
        return np.ones(len(actions), dtype=bool)

    def apply(self, slots: np.ndarray, batch: Any) -> None:
        robot = self.robot
        positions, orientations = robot.poses(slots)
        upright = yaw_to_quat(quat_to_yaw(orientations))
        for row, slot in enumerate(np.asarray(slots).tolist()):
            target = np.array([positions[row, 0], positions[row, 1], self.config.recover_height])
            robot.teleport(slot, target, upright[row])


BaseController.register('RMPFlowController')(InverseKinematicsController)

__all__ = ['RecoverController']
