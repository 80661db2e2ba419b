"""H1 with two dexterous hands: robot config and ready-made controller and camera configs
(InternUtopia's names; the robot is :mod:`internutopia_extension.robots.h1_with_hand`).

>>> from internutopia_extension.configs.robots.h1_with_hand import H1WithHandRobotCfg, hand_controller_cfg
>>> cfg = H1WithHandRobotCfg(controllers=[right_arm_ik_controller_cfg, hand_controller_cfg])
>>> cfg.name, cfg.type, [c.name for c in cfg.controllers]
('h1_with_hand', 'H1WithHandRobot', ['right_arm_ik_controller', 'hand_controller'])
"""

from __future__ import annotations

from typing import Literal

from pydantic import SerializeAsAny

from internutopia.core.config import ControllerCfg, RobotCfg, SensorCfg
from internutopia.core.config.files import AssetPath
from internutopia.core.config.values import Vec3
from internutopia.macros import gm
from internutopia_extension.configs.controllers import (
    H1MoveBySpeedControllerCfg,
    InverseKinematicsControllerCfg,
    JointControllerCfg,
    MoveAlongPathPointsControllerCfg,
    MoveToPointBySpeedControllerCfg,
    RecoverControllerCfg,
    RotateControllerCfg,
)
from internutopia_extension.configs.robots.h1 import H1_JOINT_NAMES
from internutopia_extension.configs.sensors import RepCameraCfg

#: The right arm's joints (shoulder pitch, roll, yaw, elbow), the IK chain from ``torso_link``.
RIGHT_ARM_JOINT_NAMES = ['right_shoulder_pitch_joint', 'right_shoulder_roll_joint', 'right_shoulder_yaw_joint', 'right_elbow_joint']

#: Position targets of H1's 19 body joints (InternUtopia's order, as H1's).
joint_controller = JointControllerCfg(name='joint_controller', joint_names=H1_JOINT_NAMES)

#: ``joint_names``: InternUtopia's (its policy's joint order), accepted and unused here.
move_by_speed_cfg = H1MoveBySpeedControllerCfg(name='move_by_speed', joint_names=H1_JOINT_NAMES)

move_to_point_cfg = MoveToPointBySpeedControllerCfg(
    name='move_to_point', forward_speed=1.0, rotation_speed=1.0, threshold=0.05, sub_controllers=[move_by_speed_cfg],
)

move_along_path_cfg = MoveAlongPathPointsControllerCfg(
    name='move_along_path', forward_speed=1.0, rotation_speed=1.0, threshold=0.1, sub_controllers=[move_to_point_cfg],
)

rotate_cfg = RotateControllerCfg(name='rotate', rotation_speed=2.0, threshold=0.05, sub_controllers=[move_by_speed_cfg])

#: Stands a fallen robot back up at its standing pelvis height (InternUtopia's ``recover_cfg``).
recover_cfg = RecoverControllerCfg(name='recover', recover_height=1.05, sub_controllers=[joint_controller])

right_arm_joint_controller_cfg = JointControllerCfg(name='right_arm_joint_controller', joint_names=RIGHT_ARM_JOINT_NAMES)

#: The right hand's frame to a target (``[position, orientation wxyz or None]``, env-local), by IK
#: over the four right-arm joints (a four-joint arm reaches positions; a full pose only where one fits).
right_arm_ik_controller_cfg = InverseKinematicsControllerCfg(
    name='right_arm_ik_controller',
    robot_description_path=gm.ASSET_PATH + '/robots/h1_with_hand/right_arm_descriptor.yaml',
    robot_urdf_path=gm.ASSET_PATH + '/robots/h1_with_hand/h1_with_hand.urdf',
    end_effector_frame_name='right_hand_link',
    threshold=0.01,
)


class DexterousHandControllerCfg(ControllerCfg):
    """Opens and closes the robot's two hands (:class:`~internutopia_extension.robots.h1_with_hand_hands.DexterousHandController`).

    Action (one env): ``(left, right)``, each ``'open'``, ``'close'``, a closure in ``[0, 1]``
    (0 open, 1 closed) or ``None`` (that hand keeps its last command); one value alone commands
    both hands. Observation: ``closure`` ``(2,)`` as measured from the finger joints, the finger
    joint positions of each hand and ``fingertip_spread`` ``(2,)``: the mean distance (m) from the
    thumb tip to the four other fingertips.
    """

    type: str = 'DexterousHandController'


hand_controller_cfg = DexterousHandControllerCfg(name='hand_controller')

h1_with_hand_camera_cfg = RepCameraCfg(name='camera', prim_path='logo_link/Camera', resolution=(640, 480), depth=True)

h1_with_hand_tp_camera_cfg = RepCameraCfg(name='tp_camera', prim_path='torso_link/TPCamera', resolution=(640, 480), depth=True)


class H1WithHandRobotCfg(RobotCfg):
    """Unitree H1 with two Inspire hands (the Inspire models come from ``fourier-robot-descriptions``:
    ``pip install --no-deps fourier-robot-descriptions``).

    ``locomotion``, ``walking_policy`` and ``walking_policy_symmetric`` mean what they mean for
    :class:`~internutopia_extension.configs.robots.h1.H1RobotCfg`: by default the robot walks with
    H1's trained policy.
    """

    name: str = 'h1_with_hand'
    type: str = 'H1WithHandRobot'
    prim_path: str | None = '/h1_with_hand'
    usd_path: AssetPath | None = gm.ASSET_PATH + '/robots/h1_with_hand/h1_with_hand_rt_v2.usd'
    position: Vec3 = (0.0, 0.0, 1.05)
    controllers: list[SerializeAsAny[ControllerCfg]] | None = None
    sensors: list[SerializeAsAny[SensorCfg]] | None = None
    locomotion: Literal['walking', 'carried'] = 'walking'
    walking_policy: str = 'default'
    walking_policy_symmetric: bool = True


__all__ = [
    'RIGHT_ARM_JOINT_NAMES', 'DexterousHandControllerCfg', 'H1WithHandRobotCfg', 'h1_with_hand_camera_cfg',
    'h1_with_hand_tp_camera_cfg', 'hand_controller_cfg', 'joint_controller', 'move_along_path_cfg', 'move_by_speed_cfg',
    'move_to_point_cfg', 'recover_cfg', 'right_arm_ik_controller_cfg', 'right_arm_joint_controller_cfg', 'rotate_cfg',
]
