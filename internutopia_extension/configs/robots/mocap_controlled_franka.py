"""Mocap-teleoperated Franka: robot config and ready-made controller and camera configs (InternUtopia names).

``teleop_cfg`` (``franka_mocap_teleop_controller``) takes ``[frame]``, one motion-capture hand
frame dict (:mod:`internutopia_extension.controllers.mocap_frames`), and drives its sub-controllers
``rmpflow_controller_cfg`` (the arm's end-effector pose, in the arm's base frame) and
``gripper_controller_cfg``. ``lh_controlled_camera_cfg`` is a camera above and behind the arm,
looking at the table, that the left hand can move. Sources of frames (a Python iterator, an HTTP
endpoint, a handle dragged in the web viewer): :mod:`internutopia_extension.interactions.motion_capture`.
See ``docs/robots.md``.

>>> from internutopia_extension.configs.robots.mocap_controlled_franka import MocapControlledFrankaRobotCfg, teleop_cfg
>>> franka = MocapControlledFrankaRobotCfg(position=(-0.35, 0.0, 1.05), controllers=[teleop_cfg])
>>> franka.name, franka.type, [c.name for c in franka.controllers[0].sub_controllers]
('mocap_controlled_franka', 'MocapControlledFrankaRobot', ['rmpflow_controller', 'gripper_controller'])
"""

from __future__ import annotations

from internutopia.macros import gm
from internutopia_extension.configs.controllers import (
    FrankaMocapTeleopControllerCfg,
    GripperControllerCfg,
    RMPFlowControllerCfg,
)
from internutopia_extension.configs.robots.franka import FrankaRobotCfg, look_at
from internutopia_extension.configs.sensors.mocap_controlled_camera import MocapControlledCameraCfg

rmpflow_controller_cfg = RMPFlowControllerCfg(
    name='rmpflow_controller',
    # InternUtopia's Lula/RMPflow files: accepted for compatibility, unused here.
    robot_description_path=gm.ASSET_PATH + '/robots/franka/rmpflow/robot_descriptor.yaml',
    robot_urdf_path=gm.ASSET_PATH + '/robots/franka/lula_franka_gen.urdf',
    rmpflow_config_path=gm.ASSET_PATH + '/robots/franka/franka_rmpflow_common.yaml',
    end_effector_frame_name='right_gripper',
    # RMPflow's targets are in the arm's base frame (its robot base is never set upstream).
    reference='robot',
)

gripper_controller_cfg = GripperControllerCfg(name='gripper_controller')

teleop_cfg = FrankaMocapTeleopControllerCfg(
    name='franka_mocap_teleop_controller',
    scale=(0.25, 0.75, 0.75),
    target_position=(0.0, 0.0, 1.0),
    origin_xyz=(0.46, 0.0, 0.38),
    origin_xyz_angle=(0.0, 0.0, 0.0),
    sub_controllers=[rmpflow_controller_cfg, gripper_controller_cfg],
)

#: On the arm's base, 0.9 m behind and 0.8 m above it, looking at the table ahead of the arm
#: (InternUtopia mounts its camera on a body of its own USD scene; MuJoCo's cameras look along -z).
_CAMERA_AT = (-0.9, 0.0, 0.8)
lh_controlled_camera_cfg = MocapControlledCameraCfg(
    name='lh_controlled_camera',
    prim_path='panda_link0/lh_controlled_camera',
    translation=_CAMERA_AT,
    orientation=look_at(_CAMERA_AT, (0.45, 0.0, 0.0)),
)


class MocapControlledFrankaRobotCfg(FrankaRobotCfg):
    """The Franka of :class:`FrankaRobotCfg` (same fields), as InternUtopia's mocap-teleoperated robot
    (:mod:`internutopia_extension.robots.mocap_controlled_franka`)."""

    name: str = 'mocap_controlled_franka'
    type: str = 'MocapControlledFrankaRobot'
    prim_path: str | None = '/mocap_controlled_franka'


__all__ = ['MocapControlledFrankaRobotCfg', 'gripper_controller_cfg', 'lh_controlled_camera_cfg', 'rmpflow_controller_cfg',
           'teleop_cfg']
