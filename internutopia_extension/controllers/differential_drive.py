"""Two-wheel differential drive: ``[forward_speed, rotation_speed]`` -> wheel velocity targets.

The config's ``wheel_base`` and ``wheel_radius`` are the unscaled robot's: a robot built at
``RobotCfg.scale=(s, s, s)`` has wheels ``s`` times as large and as far apart, and both are
multiplied by ``s`` (as upstream's controller multiplies them by ``robot.get_robot_scale()[0]``), so
the robot drives the commanded m/s and turns the commanded rad/s at any scale.

Wheel targets are clamped to +-:data:`MAX_WHEEL_SPEED` rad/s. The wheel motors are force-limited
far below that speed, so a command beyond the robot's top speed drives it at full torque, as a
real motor would; without the clamp a command over MuJoCo's limit on controls (1e10) is set to
zero by MuJoCo, with only a console warning: ``move_by_speed`` at 1e9 m/s stood still.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.controller.base import BaseController, BaseVelocityController
from internutopia.core.robot.base import rows_of
from internutopia.core.util.jit import Kernel

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack
from internutopia_extension.configs.controllers.dd_controller import DifferentialDriveControllerCfg
from internutopia_extension.robots.scaling import uniform_factor

#: Largest wheel velocity target (rad/s): far beyond what the force-limited wheel motors reach,
#: so clamping changes no reachable motion.
MAX_WHEEL_SPEED = 1000.0


@BaseController.register('DifferentialDriveController')
class DifferentialDriveController(BaseVelocityController):
    """Writes the robot's two wheel velocity actuators (``robot.wheel_actuators``: left, right)."""

    config: DifferentialDriveControllerCfg

    action_shape = (2,)
    action_text = 'move_by_speed expects [forward_speed, rotation_speed]; action'
    #: The wheel speeds are the command's alone (no state read): applying it again writes the same.
    idempotent_apply = True

    def __init__(self, config: DifferentialDriveControllerCfg, robot: Any) -> None:
        super().__init__(config, robot)
        #: The factor the robot's model was scaled by (1 for a robot that is never scaled).
        scaled = getattr(robot, 'supports_scale', False)
        self.scale = uniform_factor(robot.config.scale, f'robot {robot.name!r}') if scaled else 1.0
        #: Half the distance between the wheels and the wheel radius (metres), of the scaled model.
        self.half_base = float(config.wheel_base) * self.scale / 2
        self.radius = float(config.wheel_radius) * self.scale

    def bind(self, world: Pack) -> None:
        super().bind(world)
        self.world = world
        robot = self.robot
        self.actuators = np.full((self.env_num, 2), -1, dtype=np.intp)
        #: The ``ctrl`` columns of the left and right wheel (the same in every slot of the pack).
        self.columns = (-1, -1)
        if len(robot.slots):
            self.actuators[robot.slots] = robot.ids(robot.slots, 'actuator', list(robot.wheel_actuators))
            self.columns = (int(self.actuators[robot.slots[0], 0]), int(self.actuators[robot.slots[0], 1]))
        _wheels_kernel.warm(world.data.ctrl, np.zeros(0, dtype=np.intp), 0, 1, np.zeros((0, 3)), 2, 0.1, 0.1, MAX_WHEEL_SPEED)

    def wheel_speeds(self, forward: np.ndarray, rotation: np.ndarray) -> np.ndarray:
        """Left/right wheel angular speeds ``(k, 2)`` in rad/s."""
        half_base = self.half_base
        speeds = np.stack([forward - rotation * half_base, forward + rotation * half_base], axis=-1) / self.radius
        return np.clip(speeds, -MAX_WHEEL_SPEED, MAX_WHEEL_SPEED)

    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        self._write(slots, batch, 1)

    def apply_base_velocity(self, slots: np.ndarray, velocity: np.ndarray) -> None:
        self._write(slots, velocity, 2)

    def _write(self, slots: np.ndarray, commands: np.ndarray, rotation_column: int) -> None:
        """Wheel targets from ``commands[:, 0]`` (forward) and ``commands[:, rotation_column]`` (yaw rate)."""
        ctrl = self.world.data.ctrl
        left, right = self.columns
        if _wheels_kernel.available:
            _wheels_kernel(ctrl, slots, left, right, commands, rotation_column, self.half_base, self.radius, MAX_WHEEL_SPEED)
            return
        speeds = self.wheel_speeds(commands[:, 0], commands[:, rotation_column])
        rows = rows_of(slots, self.env_num)
        ctrl[rows, left] = speeds[:, 0]
        ctrl[rows, right] = speeds[:, 1]


def _wheels_rows(ctrl: np.ndarray, slots: np.ndarray, left: int, right: int, commands: np.ndarray, rotation_column: int,
                 half_base: float, radius: float, limit: float) -> None:
    """:meth:`DifferentialDriveController.wheel_speeds` written into ``ctrl``, one slot per
    iteration (compiled by numba)."""
    for i in range(slots.shape[0]):
        forward, turn = commands[i, 0], commands[i, rotation_column] * half_base
        ctrl[slots[i], left] = min(max((forward - turn) / radius, -limit), limit)
        ctrl[slots[i], right] = min(max((forward + turn) / radius, -limit), limit)


_wheels_kernel = Kernel(_wheels_rows)
