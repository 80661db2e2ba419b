"""``MocapControlledCamera``: a robot camera the operator's left hand moves during mocap teleoperation.

A :class:`~internutopia_extension.sensors.rep_camera.RepCamera` (same observations; by default
``rgba`` and ``bounding_box_2d_tight``) that the robot's
:class:`~internutopia_extension.controllers.franka_mocap_teleop_controller.FrankaMocapTeleopController`
moves: once the left thumb and index tips have touched (closer than 5 cm) for :data:`HOLD_FRAMES`
frames, the camera moves with the left wrist (its motion in camera axes mapped to the camera's
own ahead, left and up, times :data:`RATE`) from where it was when the move began, and keeps
looking at the controller's ``target_position``; parting the fingers ends the move. The next
episode starts from the configured mount again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from internutopia.core.sensor.base import BaseSensor
from internutopia_extension.configs.robots.franka import look_at
from internutopia_extension.configs.sensors.mocap_controlled_camera import MocapControlledCameraCfg
from internutopia_extension.controllers.kinematics import quat_to_mat
from internutopia_extension.controllers.mocap_frames import COLUMNS, PINCH_DISTANCE
from internutopia_extension.sensors.rep_camera import RepCamera

__all__ = ['HOLD_FRAMES', 'RATE', 'MocapControlledCamera']

#: Frames the left pinch is held before the camera moves (InternUtopia's 60).
HOLD_FRAMES = 60
#: Metres the camera moves per metre of the wrist: ahead, left, up (InternUtopia's 3, 5, 5).
RATE = np.array([3.0, 5.0, 5.0])
_LH = COLUMNS['lh_x']


@BaseSensor.register('MocapControlledCamera')
class MocapControlledCamera(RepCamera):
    """See the module docstring."""

    config: MocapControlledCameraCfg

    def __init__(self, config: MocapControlledCameraCfg, robot: Any) -> None:
        super().__init__(config, robot)
        n = robot.env_num
        self.pinch_frames = np.zeros(n, dtype=np.intp)
        #: Per slot, while a move runs: the left wrist's and the camera's positions when it began.
        self.hand_start = np.full((n, 3), np.nan)
        self.camera_start = np.full((n, 3), np.nan)

    def follow_left_hand(self, slots: np.ndarray, batch: np.ndarray, target: Sequence[float]) -> None:
        """Move the cameras of ``slots`` from their packed frames ``batch`` (``mocap_frames.pack_frame``
        rows), aimed at ``target`` (env-local)."""
        with np.errstate(invalid='ignore'):
            pinched = batch[:, COLUMNS['lh_pinch']] < PINCH_DISTANCE
        released = slots[~pinched]
        self.pinch_frames[released] = 0
        self.hand_start[released] = np.nan
        ready = pinched & (self.pinch_frames[slots] >= HOLD_FRAMES)
        self.pinch_frames[slots[pinched & ~ready]] += 1
        for row in np.flatnonzero(ready):  # (a camera is moved slot by slot; moves are rare)
            slot, wrist = int(slots[row]), batch[row, _LH:_LH + 3]
            position, orientation = self.camera_pose(slot)
            if np.isnan(self.hand_start[slot, 0]):
                self.hand_start[slot], self.camera_start[slot] = wrist, position
            gap = wrist - self.hand_start[slot]
            ahead, left, up = np.array([-gap[2], gap[0], -gap[1]]) * RATE
            # The camera looks along its -z with +y up: ahead is -z, left is -x.
            offset = quat_to_mat(orientation) @ np.array([-left, up, -ahead])
            new_position = self.camera_start[slot] + offset
            x, y, z = (float(v) for v in new_position)
            aim = (float(target[0]), float(target[1]), float(target[2]))
            if np.linalg.norm(np.subtract(aim, new_position)) > 1e-6:
                self.set_camera_pose(slot, new_position, np.asarray(look_at((x, y, z), aim), dtype=float))

    def reset(self, slots: np.ndarray) -> None:
        super().reset(slots)
        self.pinch_frames[slots] = 0
        self.hand_start[slots] = np.nan
