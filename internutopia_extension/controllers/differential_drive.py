"""Two-wheel differential drive: ``[forward_speed, rotation_speed]`` -> wheel velocity targets."""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.controller.base import BaseController, BaseVelocityController


@BaseController.register('DifferentialDriveController')
class DifferentialDriveController(BaseVelocityController):
    """Writes the robot's two wheel velocity actuators (``robot.wheel_actuators``: left, right)."""

    action_shape = (2,)
    action_text = 'move_by_speed expects [forward_speed, rotation_speed]; action'

    def bind(self, world: Any) -> None:
        super().bind(world)
        self.world = world
        robot = self.robot
        self.actuators = np.full((self.env_num, 2), -1, dtype=np.intp)
        if len(robot.slots):
            self.actuators[robot.slots] = robot.ids(robot.slots, 'actuator', list(robot.wheel_actuators))

    def wheel_speeds(self, forward: np.ndarray, rotation: np.ndarray) -> np.ndarray:
        """Left/right wheel angular speeds ``(k, 2)`` in rad/s."""
        half_base = self.config.wheel_base / 2
        return np.stack([forward - rotation * half_base, forward + rotation * half_base], axis=-1) / self.config.wheel_radius

    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        self.world.data.ctrl[slots[:, None], self.actuators[slots]] = self.wheel_speeds(batch[:, 0], batch[:, 1])

    def apply_base_velocity(self, slots: np.ndarray, velocity: np.ndarray) -> None:
        self.world.data.ctrl[slots[:, None], self.actuators[slots]] = self.wheel_speeds(velocity[:, 0], velocity[:, 2])
