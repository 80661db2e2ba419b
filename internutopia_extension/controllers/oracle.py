"""Oracle base motion: the base is put on its way kinematically, no physics drives it.

InternUtopia's ``MoveToPointOracleController`` and ``RotateOracleController`` hand a pose to a
mocap-driven body (its teleoperation cameras use them). Here they move any mobile robot's base the
same way: each env step the base jumps towards the goal, by at most ``forward_speed`` metres and
``rotation_speed`` radians (per step, as upstream counts them), keeping its height.
``finished`` turns true within ``threshold`` of the goal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.controller.base import BaseController
from internutopia.core.robot.base import take_rows
from internutopia.core.util.math import quat_to_yaw, wrap_angle, yaw_to_quat
from internutopia_extension.controllers.base_motion import MoveToPointBySpeedController, RotateController


def _teleport_all(robot: Any, slots: np.ndarray, positions: np.ndarray | None, yaws: np.ndarray) -> None:
    orientations = yaw_to_quat(yaws)
    for row, slot in enumerate(slots.tolist()):  # a jump per slot (the robot's teleport re-runs its kinematics)
        robot.teleport(slot, None if positions is None else positions[row], orientations[row])


class MoveToPointOracleController(MoveToPointBySpeedController):
    """``[goal_xyz]`` -> the base jumps up to ``forward_speed`` m towards the goal, facing it."""

    def __init__(self, config: Any, robot: Any) -> None:
        BaseController.__init__(self, config, robot)  # (no velocity sub-controller: nothing is driven)
        self.finished = np.zeros(self.env_num, dtype=bool)

    def bind(self, world: Any) -> None:
        BaseController.bind(self, world)

    def drive(self, slots: np.ndarray, goals: np.ndarray) -> np.ndarray:
        position, orientation = self.robot.poses(slots)
        offset = goals[:, :2] - position[:, :2]
        distance = np.hypot(offset[:, 0], offset[:, 1])
        arrived = distance < self.config.threshold
        step = np.minimum(self.config.forward_speed, distance)
        direction = offset / np.maximum(distance, 1e-12)[:, None]
        target = position.copy()
        target[:, :2] += np.where(arrived[:, None], 0.0, direction * step[:, None])
        yaw = np.where(arrived, quat_to_yaw(orientation), np.arctan2(offset[:, 1], offset[:, 0]))
        _teleport_all(self.robot, slots, target, yaw)
        self.finished[slots] = np.hypot(*(goals[:, :2] - target[:, :2]).T) < self.config.threshold
        return self.finished[slots]


class RotateOracleController(RotateController):
    """``[goal_quat_wxyz]`` -> the base turns up to ``rotation_speed`` rad towards that heading."""

    def __init__(self, config: Any, robot: Any) -> None:
        BaseController.__init__(self, config, robot)
        self.finished = np.zeros(self.env_num, dtype=bool)

    def apply(self, slots: np.ndarray, goals: np.ndarray) -> None:
        _, orientation = self.robot.poses(slots)
        heading = quat_to_yaw(orientation)
        error = wrap_angle(quat_to_yaw(goals) - heading)
        turn = np.clip(error, -self.config.rotation_speed, self.config.rotation_speed)
        _teleport_all(self.robot, slots, None, heading + turn)
        self.finished[slots] = np.abs(error - turn) < self.config.threshold

    def get_obs(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        return {'finished': take_rows(self.finished, slots)}


BaseController.register('MoveToPointOracleController')(MoveToPointOracleController)
BaseController.register('RotateOracleController')(RotateOracleController)
