"""Franka Panda: robot config and ready-made controller and camera configs (InternUtopia names).

``arm_ik_cfg`` (``arm_ik_controller``) takes ``[position (3,), orientation wxyz (4,)]`` of the
``right_gripper`` frame, env-local; ``gripper_cfg`` (``gripper_controller``) takes ``['open']`` or
``['close']``; ``joint_controller`` takes the seven arm joint targets (rad). See ``docs/robots.md``.

>>> from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg
>>> franka = FrankaRobotCfg(position=(0, 0, 0), controllers=[arm_ik_cfg, gripper_cfg])
>>> franka.name, [c.name for c in franka.controllers]
('franka', ['arm_ik_controller', 'gripper_controller'])
"""

from __future__ import annotations

import numpy as np
from pydantic import SerializeAsAny, field_validator

from internutopia.core.config import ControllerCfg, RobotCfg, SensorCfg
from internutopia.core.config.files import AssetPath
from internutopia.macros import gm
from internutopia_extension.configs.controllers import (
    GripperControllerCfg,
    InverseKinematicsControllerCfg,
    JointControllerCfg,
)
from internutopia_extension.configs.sensors import RepCameraCfg

FRANKA_ARM_JOINTS = [f'panda_joint{i}' for i in range(1, 8)]

arm_ik_cfg = InverseKinematicsControllerCfg(
    name='arm_ik_controller',
    # InternUtopia's Lula solver files: accepted for compatibility, unused here.
    robot_description_path=gm.ASSET_PATH + '/robots/franka/rmpflow/robot_descriptor.yaml',
    robot_urdf_path=gm.ASSET_PATH + '/robots/franka/lula_franka_gen.urdf',
    end_effector_frame_name='right_gripper',
    threshold=0.01,
)

gripper_cfg = GripperControllerCfg(name='gripper_controller')

joint_controller_cfg = JointControllerCfg(name='joint_controller', joint_names=FRANKA_ARM_JOINTS)

#: A camera on the hand, beside the fingers, looking where the gripper points (along the hand's z).
wrist_camera_cfg = RepCameraCfg(name='wrist_camera', prim_path='panda_hand/wrist_camera', resolution=(320, 240),
                                position=(0.06, 0.0, 0.02), orientation=(0.0, 1.0, 0.0, 0.0), fovy_deg=70.0)


def look_at(position: tuple[float, float, float], target: tuple[float, float, float]) -> tuple[float, float, float, float]:
    """The wxyz orientation of a camera at ``position`` looking at ``target`` (in its parent's
    frame, z up), image up towards +z: a camera looks along its own -z axis, its image up is +y."""
    forward = np.asarray(target, dtype=float) - np.asarray(position, dtype=float)
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, (0.0, 0.0, 1.0))
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    m = np.column_stack([right, up, -forward])  # the camera's axes in the parent frame
    # Shepperd's method (signs from the antisymmetric part alone are lost near half turns: a camera
    # looking along -y is one).
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0.0:
        f = 2.0 * np.sqrt(trace + 1.0)
        w, x, y, z = 0.25 * f, (m[2, 1] - m[1, 2]) / f, (m[0, 2] - m[2, 0]) / f, (m[1, 0] - m[0, 1]) / f
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        f = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        w, x, y, z = (m[2, 1] - m[1, 2]) / f, 0.25 * f, (m[0, 1] + m[1, 0]) / f, (m[0, 2] + m[2, 0]) / f
    elif m[1, 1] > m[2, 2]:
        f = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        w, x, y, z = (m[0, 2] - m[2, 0]) / f, (m[0, 1] + m[1, 0]) / f, 0.25 * f, (m[1, 2] + m[2, 1]) / f
    else:
        f = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        w, x, y, z = (m[1, 0] - m[0, 1]) / f, (m[0, 2] + m[2, 0]) / f, (m[1, 2] + m[2, 1]) / f, 0.25 * f
    sign = -1.0 if w < 0.0 else 1.0
    return (float(sign * w), float(sign * x), float(sign * y), float(sign * z))


#: InternManip-style cameras (256x256 RGB-D, as its benchmark's three views): one in front of the
#: arm and one to its side, both on the fixed base (so fixed in the slot) looking at the workspace,
#: and one on the hand.
_WORKSPACE_CENTRE = (0.5, 0.0, 0.1)
front_camera_256_cfg = RepCameraCfg(name='front_camera', prim_path='panda_link0/front_camera', resolution=(256, 256),
                                    depth=True, position=(1.3, 0.0, 0.7), orientation=look_at((1.3, 0.0, 0.7), _WORKSPACE_CENTRE),
                                    fovy_deg=60.0)
side_camera_256_cfg = RepCameraCfg(name='side_camera', prim_path='panda_link0/side_camera', resolution=(256, 256),
                                   depth=True, position=(0.5, -0.9, 0.6), orientation=look_at((0.5, -0.9, 0.6), _WORKSPACE_CENTRE),
                                   fovy_deg=60.0)
wrist_camera_256_cfg = wrist_camera_cfg.update(resolution=(256, 256), depth=True)
#: The three cameras of an InternManip-style episode.
internmanip_cameras = [front_camera_256_cfg, side_camera_256_cfg, wrist_camera_256_cfg]


class FrankaRobotCfg(RobotCfg):
    """Franka Emika Panda on a fixed base at ``position``/``orientation`` (env-local).

    See :mod:`internutopia_extension.robots.franka`; ``usd_path`` is accepted and unused (the model
    comes from the ``franka`` extra's assets package).

    ``grip_force``: newtons each finger presses a held object with (the Franka Hand: 70 N
    continuous, the default, and up to 140 N peak); ``finger_speed``: metres per second each finger
    moves at (the hand's largest, 0.05, the default). ``physics_substep``: the longest physics
    step (s) of a slot holding this arm; each env step is run in equal substeps no longer than
    it. The grip's hold on fast moves depends on it (the finger pads' contact time constant is
    two substeps): 1 ms, the default, keeps a 1 kg cube within millimetres through many far jumps;
    ``None`` runs one physics step per env step, several times cheaper for an arm, with a hold
    that lets heavy objects slip on fast moves.
    """

    name: str = 'franka'
    type: str = 'FrankaRobot'
    prim_path: str | None = '/franka'
    usd_path: AssetPath | None = None
    controllers: list[SerializeAsAny[ControllerCfg]] | None = None
    sensors: list[SerializeAsAny[SensorCfg]] | None = None
    grip_force: float = 70.0
    finger_speed: float = 0.05
    physics_substep: float | None = 0.001

    @field_validator('grip_force')
    @classmethod
    def _grip_force_in_range(cls, value: float) -> float:
        if not 0.0 < value <= 140.0:
            raise ValueError(f'grip_force must be in (0, 140] N (the Franka Hand: 70 N continuous, 140 N peak); got {value}')
        return value

    @field_validator('finger_speed')
    @classmethod
    def _finger_speed_in_range(cls, value: float) -> float:
        if not 0.0 < value <= 0.05:
            raise ValueError(f'finger_speed must be in (0, 0.05] m/s (the Franka Hand moves each finger at up to '
                             f'0.05 m/s); got {value}')
        return value

    @field_validator('physics_substep')
    @classmethod
    def _substep_in_range(cls, value: float | None) -> float | None:
        if value is not None and not 1e-4 <= value <= 0.05:
            raise ValueError(f'physics_substep must be in [0.0001, 0.05] s, or None (one physics step per env step); '
                             f'got {value}')
        return value


__all__ = ['FRANKA_ARM_JOINTS', 'FrankaRobotCfg', 'arm_ik_cfg', 'front_camera_256_cfg', 'gripper_cfg', 'internmanip_cameras',
           'joint_controller_cfg', 'look_at', 'side_camera_256_cfg', 'wrist_camera_256_cfg', 'wrist_camera_cfg']
