"""``FrankaMocapTeleopController``: a Franka's hand follows a tracked human hand, for all slots at once.

Action (one slot): ``[frame]``, one motion-capture frame dict as InternUtopia's mocap server sends
it (a bare dict works too; keys and shapes in :mod:`~internutopia_extension.controllers.mocap_frames`).
Per step, for each slot:

* **right wrist -> end-effector target.** The wrist's motion since the slot's last frame
  (camera axes mapped to the robot's: ahead = -camera z, left = camera x, up = -camera y),
  multiplied by the config's ``scale`` per robot axis, moves the target, which starts at
  ``origin_xyz`` (in the arm's base frame). The first frame that sees the hand only takes its
  position as the reference; a frame without the right hand holds the target, and the next one
  that sees it takes a new reference (a clutch: move the hand back out of view and in again).
* **right-hand orientation -> gripper orientation**: ``CAMERA_TO_ROBOT @ R_hand @ GRIPPER_FROM_HAND``.
* **right thumb-index pinch** (tips closer than 5 cm) closes the gripper, opening them opens it
  (commanded on a change only, as InternUtopia does).
* **left-hand gestures**, each after 12 frames held: thumb on the little-finger tip re-takes the
  wrist's reference each frame, so the right hand moves without moving the target (a clutch);
  thumb on the ring-finger tip halves the motion (fine positioning); thumb on the middle-finger
  tip keeps the gripper's present orientation instead of the hand's. Thumb on the index tip held for 60 frames moves a
  ``MocapControlledCamera`` of the robot with the left wrist (see
  :mod:`internutopia_extension.sensors.mocap_controlled_camera`).

The target goes to the first sub-controller, an inverse-kinematics controller
(``rmpflow_controller``; InternUtopia's is Isaac Sim's RMPflow, a reactive motion policy: see
``docs/robots.md`` for what differs), in the arm's base frame (or env-local when that controller's
``reference`` is ``'world'``), and the gripper command to the second (``gripper_controller``).

Observation (per slot): ``target_position`` (3,) and ``target_orientation`` (4,) wxyz, env-local;
``gripper_closed``; and the arm controller's ``eef_position``, ``eef_orientation``, ``success``,
``finished``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.controller.base import BaseController
from internutopia.core.util.rotations import euler_angles_to_quat
from internutopia_extension.configs.controllers.franka_mocap_teleop_controller import FrankaMocapTeleopControllerCfg
from internutopia_extension.controllers.gripper_controller import GripperController
from internutopia_extension.controllers.ik_controller import POSE, InverseKinematicsController
from internutopia_extension.controllers.kinematics import mat_to_quat, quat_to_mat
from internutopia_extension.controllers.mocap_frames import (
    CAMERA_TO_ROBOT,
    COLUMNS,
    GRIPPER_FROM_HAND,
    PINCH_DISTANCE,
    WIDTH,
    pack_frame,
)

__all__ = ['GESTURE_FRAMES', 'FrankaMocapTeleopController']

#: Frames a left-hand gesture must be held before it acts (InternUtopia's 12).
GESTURE_FRAMES = 12
_GESTURES = ('lh_thumb_little', 'lh_thumb_ring', 'lh_thumb_middle')
_REBASE, _HALF, _KEEP_ORIENTATION = 0, 1, 2
_RH = COLUMNS['rh_x']
_RH_ROT = COLUMNS['rh_rot0']


@BaseController.register('FrankaMocapTeleopController')
class FrankaMocapTeleopController(BaseController):
    """Mocap teleoperation of a Franka; see the module docstring."""

    config: FrankaMocapTeleopControllerCfg

    def __init__(self, config: FrankaMocapTeleopControllerCfg, robot: Any) -> None:
        super().__init__(config, robot)
        self.arm = self.sub_controller(InverseKinematicsController)
        grippers = [sub for sub in self.sub_controllers if isinstance(sub, GripperController)]
        self.gripper: GripperController | None = grippers[0] if grippers else None
        n = self.env_num
        self.scale = np.asarray(config.scale, dtype=float)
        self.origin = np.asarray(config.origin_xyz if config.origin_xyz is not None else (0.0, 0.0, 0.0), dtype=float)
        angles = config.origin_xyz_angle if config.origin_xyz_angle is not None else (0.0, 0.0, 0.0)
        self.origin_rot = quat_to_mat(np.asarray(euler_angles_to_quat(angles), dtype=float))
        #: Per slot, in the arm's base frame: the end-effector target and its rotation.
        self.target_pos = np.tile(self.origin, (n, 1))
        self.target_rot = np.tile(self.origin_rot, (n, 1, 1))
        #: Per slot: the right wrist's last position (camera frame) and whether there is one.
        self.wrist_ref = np.zeros((n, 3))
        self.has_ref = np.zeros(n, dtype=bool)
        #: Per slot: frames each left-hand gesture has been held (little, ring, middle finger).
        self.gesture_count = np.zeros((n, len(_GESTURES)), dtype=np.intp)
        self.gripper_closed = np.zeros(n, dtype=bool)
        self._gesture_columns = [COLUMNS[g] for g in _GESTURES]

    # -- parsing -----------------------------------------------------------------------------
    def parse_action(self, action: Any) -> np.ndarray:
        frame = action
        if isinstance(action, (list, tuple)):
            if len(action) != 1:
                raise ValueError(f'controller {self.name!r} takes [frame], a list holding one mocap frame dict; '
                                 f'got a {type(action).__name__} of {len(action)} items')
            frame = action[0]
        return pack_frame(frame)

    def parse_batch(self, actions: Any) -> np.ndarray:
        if isinstance(actions, np.ndarray) and actions.dtype.kind == 'f' and actions.ndim == 2 and actions.shape[1] == WIDTH:
            return actions  # packed rows (pack_frame's) as they are
        return self.batch([self.parse_action(action) for action in actions])

    # -- stepping ----------------------------------------------------------------------------
    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        slots = np.asarray(slots, dtype=np.intp)
        gestures = self._left_gestures(slots, batch)
        seen = batch[:, COLUMNS['has_rh']] > 0.5
        wrist = batch[:, _RH:_RH + 3]
        # Wrist motion since the last frame that saw the hand; none on a first sight (a new reference).
        moved = seen & self.has_ref[slots]
        delta = np.where(moved[:, None], wrist - self.wrist_ref[slots], 0.0)
        step = (delta @ CAMERA_TO_ROBOT.T) * self.scale
        step[gestures[:, _HALF]] *= 0.5
        step[gestures[:, _REBASE]] = 0.0  # the wrist's reference re-taken before the motion (InternUtopia's order)
        self.target_pos[slots] += step
        self.wrist_ref[slots[seen]] = wrist[seen]
        self.has_ref[slots] = seen
        # The gripper's orientation from the hand's, or kept where the left hand asks.
        hand_rot = batch[:, _RH_ROT:_RH_ROT + 9].reshape(-1, 3, 3)
        follow = seen & ~gestures[:, _KEEP_ORIENTATION]
        if np.any(follow):
            self.target_rot[slots[follow]] = CAMERA_TO_ROBOT @ hand_rot[follow] @ GRIPPER_FROM_HAND
        keep = seen & gestures[:, _KEEP_ORIENTATION]
        if np.any(keep):
            self.target_rot[slots[keep]] = self._present_rotation(slots[keep])
        self._command_arm(slots)
        self._command_gripper(slots, batch, seen)
        self._move_cameras(slots, batch)

    def _left_gestures(self, slots: np.ndarray, batch: np.ndarray) -> np.ndarray:
        """``(k, 3)`` bools: each left-hand gesture held long enough (and count the frames)."""
        with np.errstate(invalid='ignore'):
            touching = batch[:, self._gesture_columns] < PINCH_DISTANCE  # (NaN, no left hand: False)
        count = self.gesture_count[slots]
        active = touching & (count >= GESTURE_FRAMES)
        self.gesture_count[slots] = np.where(touching, np.minimum(count + 1, GESTURE_FRAMES), 0)
        return active

    def _present_rotation(self, slots: np.ndarray) -> np.ndarray:
        """Rotations ``(k, 3, 3)`` of the arm's end-effector frame now, in its base frame."""
        arm, robot = self.arm, self.robot
        _, _, rotation = robot.frame_pose(arm.chain, arm.columns, slots, rotation=True)
        _, base_rot = robot.base_frame(slots)
        return np.swapaxes(base_rot, 1, 2) @ rotation

    def _command_arm(self, slots: np.ndarray) -> None:
        position, rotation = self.target_pos[slots], self.target_rot[slots]
        if self.arm.reference == 'world':  # the arm controller takes env-local targets
            base_pos, base_rot = self.robot.base_frame(slots)
            position = base_pos + np.einsum('kij,kj->ki', base_rot, position)
            rotation = base_rot @ rotation
        rows = np.empty((len(slots), 8))
        rows[:, :3], rows[:, 3:7], rows[:, 7] = position, mat_to_quat(rotation), POSE
        self.arm.apply(slots, rows)

    def _command_gripper(self, slots: np.ndarray, batch: np.ndarray, seen: np.ndarray) -> None:
        with np.errstate(invalid='ignore'):
            close = batch[:, COLUMNS['rh_pinch']] < PINCH_DISTANCE
        changed = seen & (close != self.gripper_closed[slots])
        if not np.any(changed):
            return
        self.gripper_closed[slots[changed]] = close[changed]
        if self.gripper is not None:
            self.gripper.apply(slots[changed], np.where(close[changed], 0.0, 1.0))

    def _move_cameras(self, slots: np.ndarray, batch: np.ndarray) -> None:
        for sensor in self.robot.sensors.values():
            follow = getattr(sensor, 'follow_left_hand', None)
            if follow is not None:
                follow(slots, batch, self.config.target_position)

    def get_obs(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        obs = dict(self.arm.get_obs(slots))
        base_pos, base_rot = self.robot.base_frame(slots)
        obs['target_position'] = base_pos + np.einsum('kij,kj->ki', base_rot, self.target_pos[slots])
        obs['target_orientation'] = mat_to_quat(base_rot @ self.target_rot[slots])
        obs['gripper_closed'] = self.gripper_closed[slots].copy()
        return obs

    def reset(self, slots: np.ndarray) -> None:
        super().reset(slots)
        self.target_pos[slots] = self.origin
        self.target_rot[slots] = self.origin_rot
        self.has_ref[slots] = False
        self.gesture_count[slots] = 0
        self.gripper_closed[slots] = False
