"""H1: robot config and ready-made controller and camera configs (InternUtopia names).

>>> from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_along_path_cfg
>>> H1RobotCfg(controllers=[move_along_path_cfg]).name
'h1'
"""

from __future__ import annotations

from typing import Literal

from pydantic import SerializeAsAny

from internutopia.core.config import ControllerCfg, RobotCfg, SensorCfg
from internutopia.core.config.values import Vec3
from internutopia_extension.configs.controllers import (
    H1MoveBySpeedControllerCfg,
    JointControllerCfg,
    MoveAlongPathPointsControllerCfg,
    MoveToPointBySpeedControllerCfg,
    RecoverControllerCfg,
    RotateControllerCfg,
)
from internutopia_extension.configs.sensors import RepCameraCfg

#: H1's joints as InternUtopia names and orders them (the order of a ``joint_controller`` vector
#: and of ``joint_positions``): Isaac's breadth-first order down the body tree.
H1_JOINT_NAMES = [
    'left_hip_yaw_joint', 'right_hip_yaw_joint', 'torso_joint',
    'left_hip_roll_joint', 'right_hip_roll_joint', 'left_shoulder_pitch_joint', 'right_shoulder_pitch_joint',
    'left_hip_pitch_joint', 'right_hip_pitch_joint', 'left_shoulder_roll_joint', 'right_shoulder_roll_joint',
    'left_knee_joint', 'right_knee_joint', 'left_shoulder_yaw_joint', 'right_shoulder_yaw_joint',
    'left_ankle_joint', 'right_ankle_joint', 'left_elbow_joint', 'right_elbow_joint',
]

#: ``joint_names``: InternUtopia's (its policy's joint order), accepted and unused here.
move_by_speed_cfg = H1MoveBySpeedControllerCfg(name='move_by_speed', joint_names=H1_JOINT_NAMES)

move_to_point_cfg = MoveToPointBySpeedControllerCfg(
    name='move_to_point', forward_speed=1.0, rotation_speed=1.0, threshold=0.05, sub_controllers=[move_by_speed_cfg],
)

move_along_path_cfg = MoveAlongPathPointsControllerCfg(
    name='move_along_path', forward_speed=1.0, rotation_speed=1.0, threshold=0.1, sub_controllers=[move_to_point_cfg],
)

rotate_cfg = RotateControllerCfg(name='rotate', rotation_speed=2.0, threshold=0.02, sub_controllers=[move_by_speed_cfg])

joint_controller = JointControllerCfg(name='joint_controller', joint_names=H1_JOINT_NAMES)

#: Stands a fallen H1 back up at its standing pelvis height (InternUtopia's ``recover_cfg``).
recover_cfg = RecoverControllerCfg(name='recover', recover_height=1.05, sub_controllers=[joint_controller])

h1_camera_cfg = RepCameraCfg(name='camera', prim_path='logo_link/Camera', resolution=(640, 480), depth=True)

h1_tp_camera_cfg = RepCameraCfg(name='tp_camera', prim_path='torso_link/TPCamera', resolution=(640, 480), depth=True)


class H1RobotCfg(RobotCfg):
    """Unitree H1 (see :mod:`internutopia_extension.robots.h1` for how it moves).

    ``locomotion`` chooses how the base moves: ``'walking'`` (the default: only the joint servos
    move it, driven by a walking policy) or ``'carried'`` (the pelvis follows a target that
    ``move_by_speed`` moves, the legs hold a standing pose; cheaper and exact, but a statue
    gliding). ``walking_policy`` (walking only) is
    ``'default'`` (the policy shipped with the package), the path of an exported ONNX policy, or
    ``'controller'``: the ``leg_action`` controller gives the actions (for training a policy).
    ``walking_policy_symmetric`` (default true) runs an ONNX policy as the mean of itself and its
    mirror image, so the gait is the same on both sides
    (:class:`~internutopia_extension.robots.h1_locomotion.walker.OnnxPolicy`); set it false for a
    policy of your own trained without the mirror loss.
    """

    name: str = 'h1'
    type: str = 'H1Robot'
    prim_path: str | None = '/h1'
    position: Vec3 = (0.0, 0.0, 1.05)
    controllers: list[SerializeAsAny[ControllerCfg]] | None = None
    sensors: list[SerializeAsAny[SensorCfg]] | None = None
    locomotion: Literal['walking', 'carried'] = 'walking'
    walking_policy: str = 'default'
    walking_policy_symmetric: bool = True
