"""G1: robot config and ready-made controller configs (same names as H1's).

>>> from internutopia_extension.configs.robots.g1 import G1RobotCfg, move_along_path_cfg
>>> G1RobotCfg(controllers=[move_along_path_cfg]).type
'G1Robot'
"""

from __future__ import annotations

from pydantic import SerializeAsAny

from internutopia.core.config import ControllerCfg, RobotCfg, SensorCfg
from internutopia.core.config.values import Vec3
from internutopia_extension.configs.controllers import (
    G1MoveBySpeedControllerCfg,
    JointControllerCfg,
    MoveAlongPathPointsControllerCfg,
    MoveToPointBySpeedControllerCfg,
    RotateControllerCfg,
)
from internutopia_extension.configs.sensors import RepCameraCfg

#: The joints of InternUtopia's G1 policy, in its order: the 29 joints' breadth-first order less
#: ``waist_roll_joint`` and ``waist_pitch_joint`` (``move_by_speed_cfg.joint_names``; unused here).
G1_POLICY_JOINT_NAMES = [
    'left_hip_pitch_joint', 'right_hip_pitch_joint', 'waist_yaw_joint', 'left_hip_roll_joint', 'right_hip_roll_joint',
    'left_hip_yaw_joint', 'right_hip_yaw_joint', 'left_knee_joint', 'right_knee_joint', 'left_shoulder_pitch_joint',
    'right_shoulder_pitch_joint', 'left_ankle_pitch_joint', 'right_ankle_pitch_joint', 'left_shoulder_roll_joint',
    'right_shoulder_roll_joint', 'left_ankle_roll_joint', 'right_ankle_roll_joint', 'left_shoulder_yaw_joint',
    'right_shoulder_yaw_joint', 'left_elbow_joint', 'right_elbow_joint', 'left_wrist_roll_joint', 'right_wrist_roll_joint',
    'left_wrist_pitch_joint', 'right_wrist_pitch_joint', 'left_wrist_yaw_joint', 'right_wrist_yaw_joint',
]

move_by_speed_cfg = G1MoveBySpeedControllerCfg(name='move_by_speed', joint_names=G1_POLICY_JOINT_NAMES)

move_to_point_cfg = MoveToPointBySpeedControllerCfg(
    name='move_to_point', forward_speed=0.6, rotation_speed=1.0, threshold=0.1, sub_controllers=[move_by_speed_cfg],
)

move_along_path_cfg = MoveAlongPathPointsControllerCfg(
    name='move_along_path', forward_speed=0.6, rotation_speed=1.0, threshold=0.15, sub_controllers=[move_to_point_cfg],
)

rotate_cfg = RotateControllerCfg(name='rotate', rotation_speed=1.0, threshold=0.05, sub_controllers=[move_by_speed_cfg])

joint_controller = JointControllerCfg(name='joint_controller')

g1_camera_cfg = RepCameraCfg(name='camera', prim_path='torso_link/Camera', resolution=(640, 480))

g1_tp_camera_cfg = RepCameraCfg(name='tp_camera', prim_path='torso_link/TPCamera', resolution=(640, 480))


class G1RobotCfg(RobotCfg):
    """Unitree G1 (29 DoF) walking with holosoma's ONNX policy."""

    name: str = 'g1'
    type: str = 'G1Robot'
    prim_path: str | None = '/g1'
    position: Vec3 = (0.0, 0.0, 0.757)
    controllers: list[SerializeAsAny[ControllerCfg]] | None = None
    sensors: list[SerializeAsAny[SensorCfg]] | None = None
