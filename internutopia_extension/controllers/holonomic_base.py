"""Holonomic base motion through a mocap target the robot's base is welded to.

Used for H1's ``move_by_speed``: no trained H1 walking policy is published on PyPI, so the pelvis
is carried at the commanded body-frame velocity ``[forward, lateral, yaw_rate]`` while the legs
hold a standing pose. The weld is soft, so the robot still collides with the scene.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.controller.base import BaseController, BaseVelocityController
from internutopia.core.robot.base import rows_of
from internutopia.core.util.math import quat_to_yaw, yaw_to_quat


@BaseController.register('HolonomicBaseController')
class HolonomicBaseController(BaseVelocityController):
    """Integrates the robot's mocap target (``robot.mocap_index``) at the commanded velocity."""

    action_shape = (3,)
    action_text = 'move_by_speed expects [forward_speed, lateral_speed, yaw_rate]; action'

    def bind(self, world: Any) -> None:
        super().bind(world)
        self.world = world

    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        self.apply_base_velocity(slots, batch)

    def apply_base_velocity(self, slots: np.ndarray, velocity: np.ndarray) -> None:
        data = self.world.data
        mocap = self.robot.mocap_index
        rows = rows_of(slots, self.env_num)
        dt = self.world.model.opt.timestep
        yaw = quat_to_yaw(data.mocap_quat[rows, mocap])
        cos, sin = np.cos(yaw), np.sin(yaw)
        step = velocity[:, :2] * dt
        position = data.mocap_pos[rows, mocap]
        position[:, 0] += cos * step[:, 0] - sin * step[:, 1]
        position[:, 1] += sin * step[:, 0] + cos * step[:, 1]
        data.mocap_pos[rows, mocap] = position  # (in place already when rows is every slot)
        data.mocap_quat[rows, mocap] = yaw_to_quat(yaw + velocity[:, 2] * dt)


BaseController.register('H1MoveBySpeedController')(HolonomicBaseController)
