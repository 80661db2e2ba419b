"""Fourier GR1: robot config and ready-made controller and camera configs (InternUtopia names;
the robot is :mod:`internutopia_extension.robots.gr1`).

>>> from internutopia_extension.configs.robots.gr1 import GR1RobotCfg, move_to_point_cfg
>>> cfg = GR1RobotCfg(controllers=[move_to_point_cfg])
>>> cfg.name, cfg.type, cfg.locomotion, len(GR1_JOINT_NAMES)
('gr1', 'GR1Robot', 'walking', 54)
"""

from __future__ import annotations

from typing import Literal

from pydantic import SerializeAsAny

from internutopia.core.config import ControllerCfg, RobotCfg, SensorCfg
from internutopia.core.config.files import AssetPath
from internutopia.core.config.values import Vec3
from internutopia.macros import gm
from internutopia_extension.configs.controllers import (
    JointControllerCfg,
    MoveAlongPathPointsControllerCfg,
    MoveToPointBySpeedControllerCfg,
    RotateControllerCfg,
)
from internutopia_extension.configs.controllers.gr1_move_by_speed_controller import GR1MoveBySpeedControllerCfg
from internutopia_extension.configs.controllers.gr1_teleop_controller import GR1TeleOpControllerCfg
from internutopia_extension.configs.sensors import RepCameraCfg

_SIDES = ('left', 'right')
_HANDS = ('L', 'R')


def _both(*joints: str) -> list[str]:
    return [f'{side}_{joint}_joint' for joint in joints for side in _SIDES]


def _hands(*joints: str) -> list[str]:
    return [f'{hand}_{joint}_joint' for hand in _HANDS for joint in joints]


#: GR1's 54 joints as InternUtopia orders them (its articulation's order, the order of
#: ``joint_positions``, ``joint_velocities`` and a ``joint_controller`` vector): Isaac's
#: breadth-first order from the torso, then the fingers level by level. The thumbs' intermediate
#: joints are not among them (InternUtopia's GR1 has 11 joints per hand).
GR1_JOINT_NAMES: list[str] = [
    'head_roll_joint', *_both('shoulder_pitch'), 'waist_roll_joint',
    'head_pitch_joint', *_both('shoulder_roll'), 'waist_pitch_joint',
    'head_yaw_joint', *_both('shoulder_yaw'), 'waist_yaw_joint',
    *_both('elbow_pitch', 'hip_roll', 'wrist_yaw', 'hip_yaw', 'wrist_roll', 'hip_pitch', 'wrist_pitch', 'knee_pitch',
           'ankle_pitch', 'ankle_roll'),
    *_hands('index_proximal', 'middle_proximal', 'pinky_proximal', 'ring_proximal', 'thumb_proximal_yaw'),
    *_hands('index_intermediate', 'middle_intermediate', 'pinky_intermediate', 'ring_intermediate', 'thumb_proximal_pitch'),
    *_hands('thumb_distal'),
]


#: GR1's joints but the hands' (legs, waist, head, arms) in :data:`GR1_JOINT_NAMES`' order: the
#: joints of :class:`GR1WeldedHandsRobotCfg`.
GR1_BODY_JOINT_NAMES: list[str] = [name for name in GR1_JOINT_NAMES if not name.startswith(('L_', 'R_'))]

#: The joints of InternUtopia's GR1 locomotion policy, in its order (legs, waist, head, then each
#: arm with its hand; the same 54 joints).
GR1_POLICY_JOINT_NAMES: list[str] = [
    *[f'{side}_{joint}_joint' for side in _SIDES for joint in ('hip_roll', 'hip_yaw', 'hip_pitch', 'knee_pitch', 'ankle_pitch', 'ankle_roll')],
    'waist_yaw_joint', 'waist_pitch_joint', 'waist_roll_joint', 'head_roll_joint', 'head_pitch_joint', 'head_yaw_joint',
    *[name for side, hand in zip(_SIDES, _HANDS, strict=True) for name in (
        *[f'{side}_{joint}_joint' for joint in ('shoulder_pitch', 'shoulder_roll', 'shoulder_yaw', 'elbow_pitch', 'wrist_yaw',
                                                 'wrist_roll', 'wrist_pitch')],
        *[f'{hand}_{joint}_joint' for joint in ('index_proximal', 'index_intermediate', 'middle_proximal', 'middle_intermediate',
                                                 'pinky_proximal', 'pinky_intermediate', 'ring_proximal', 'ring_intermediate',
                                                 'thumb_proximal_yaw', 'thumb_proximal_pitch', 'thumb_distal')])],
]

#: The order of InternUtopia's teleoperation targets (breadth first from the pelvis).
GR1_TELEOP_JOINT_NAMES: list[str] = [
    *_both('hip_roll'), 'waist_yaw_joint', *_both('hip_yaw'), 'waist_pitch_joint', *_both('hip_pitch'), 'waist_roll_joint',
    *_both('knee_pitch', 'ankle_pitch'), 'head_roll_joint', *_both('shoulder_pitch', 'ankle_roll'), 'head_pitch_joint',
    *_both('shoulder_roll'), 'head_yaw_joint', *_both('shoulder_yaw', 'elbow_pitch', 'wrist_yaw', 'wrist_roll', 'wrist_pitch'),
    *_hands('index_proximal', 'middle_proximal', 'pinky_proximal', 'ring_proximal', 'thumb_proximal_yaw'),
    *_hands('index_intermediate', 'middle_intermediate', 'pinky_intermediate', 'ring_intermediate', 'thumb_proximal_pitch'),
    *_hands('thumb_distal'),
]

move_by_speed_cfg = GR1MoveBySpeedControllerCfg(
    name='move_by_speed', joint_names=GR1_POLICY_JOINT_NAMES,
    policy_weights_path=gm.ASSET_PATH + '/robots/gr1/policy/move_by_speed/gr1_policy.onnx',
)

move_to_point_cfg = MoveToPointBySpeedControllerCfg(
    name='move_to_point', forward_speed=1.0, rotation_speed=4.0, threshold=0.05, sub_controllers=[move_by_speed_cfg],
)

move_along_path_cfg = MoveAlongPathPointsControllerCfg(
    name='move_along_path', forward_speed=1.0, rotation_speed=4.0, threshold=0.1, sub_controllers=[move_to_point_cfg],
)

rotate_cfg = RotateControllerCfg(name='rotate', rotation_speed=4.0, threshold=0.05, sub_controllers=[move_by_speed_cfg])

#: Position targets of all 54 joints in :data:`GR1_TELEOP_JOINT_NAMES` order (see
#: :class:`~internutopia_extension.configs.controllers.gr1_teleop_controller.GR1TeleOpControllerCfg`).
teleop_cfg = GR1TeleOpControllerCfg(name='teleop', joint_names=GR1_TELEOP_JOINT_NAMES)

#: Position targets of all 54 joints in :data:`GR1_JOINT_NAMES` order.
joint_controller = JointControllerCfg(name='joint_controller', joint_names=GR1_JOINT_NAMES)

#: The two head cameras: on ``head_yaw_link``, 3.2 cm either side of the middle, just ahead of the face.
camera_left_cfg = RepCameraCfg(name='camera_left', prim_path='head_yaw_link/CameraLeft', resolution=(1280, 720),
                               translation=(0.15, 0.032, 0.1))

camera_right_cfg = RepCameraCfg(name='camera_right', prim_path='head_yaw_link/CameraRight', resolution=(1280, 720),
                                translation=(0.15, -0.032, 0.1))


class GR1RobotCfg(RobotCfg):
    """Fourier GR1 T2 with Inspire hands (the model comes from ``fourier-robot-descriptions``:
    ``pip install --no-deps fourier-robot-descriptions``; see :mod:`internutopia_extension.robots.gr1`).

    ``locomotion``: ``'walking'`` (the default: the physics-honest model, nothing holding the
    pelvis, a walking policy setting the leg servo targets, ``move_by_speed`` its velocity command)
    or ``'carried'`` (the pelvis follows a target that ``move_by_speed`` moves, the joints hold a
    standing pose; cheaper and exact, but a statue gliding). ``walking_policy`` (walking only) is
    ``'default'`` (the policy this project trained for GR1, shipped with the package), the path of
    an exported ONNX policy, or ``'controller'`` (the leg actions come from a training loop).
    ``walking_policy_symmetric`` runs an ONNX policy as the mean of itself and its mirror image.
    ``walking_stand_hold`` (default true): a GR1 told to stand holds the spot it stopped at (its
    policy alone creeps about 5 mm/s; :mod:`internutopia_extension.robots.stand_hold`).
    """

    name: str = 'gr1'
    type: str = 'GR1Robot'
    prim_path: str | None = '/gr1'
    usd_path: AssetPath | None = gm.ASSET_PATH + '/robots/gr1/gr1.usd'
    position: Vec3 = (0.0, 0.0, 0.95)
    controllers: list[SerializeAsAny[ControllerCfg]] | None = None
    sensors: list[SerializeAsAny[SensorCfg]] | None = None
    locomotion: Literal['walking', 'carried'] = 'walking'
    walking_policy: str = 'default'
    walking_policy_symmetric: bool = True
    walking_stand_hold: bool = True


class GR1WeldedHandsRobotCfg(GR1RobotCfg):
    """GR1 on its walking model with both hands welded to the wrists (``GR1WeldedHandsRobot``): the
    model the walking trainer trains GR1 on (:func:`~internutopia_extension.robots.gr1_model.weld_hands`).
    Its joints are :data:`GR1_BODY_JOINT_NAMES` (32: no finger joints); walking only.

    >>> GR1WeldedHandsRobotCfg().type, len(GR1_BODY_JOINT_NAMES)
    ('GR1WeldedHandsRobot', 32)
    """

    type: str = 'GR1WeldedHandsRobot'
    locomotion: Literal['walking', 'carried'] = 'walking'


__all__ = [
    'GR1_BODY_JOINT_NAMES', 'GR1WeldedHandsRobotCfg', 'GR1_JOINT_NAMES', 'GR1_POLICY_JOINT_NAMES', 'GR1_TELEOP_JOINT_NAMES', 'GR1MoveBySpeedControllerCfg', 'GR1RobotCfg',
    'GR1TeleOpControllerCfg', 'camera_left_cfg', 'camera_right_cfg', 'joint_controller', 'move_along_path_cfg',
    'move_by_speed_cfg', 'move_to_point_cfg', 'rotate_cfg', 'teleop_cfg',
]
