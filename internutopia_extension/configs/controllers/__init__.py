"""Config classes of the built-in controllers (InternUtopia names, types and fields), one module each.

The modules are InternUtopia's paths (``dd_controller``, ``h1_move_by_speed_controller``,
``ik_controller``, ...); ``holonomic_base_controller`` holds the base H1's ``move_by_speed`` extends.
"""

from internutopia_extension.configs.controllers.aliengo_leg_action import AliengoLegActionControllerCfg
from internutopia_extension.configs.controllers.aliengo_move_by_speed_controller import AliengoMoveBySpeedControllerCfg
from internutopia_extension.configs.controllers.dd_controller import DifferentialDriveControllerCfg
from internutopia_extension.configs.controllers.franka_mocap_teleop_controller import FrankaMocapTeleopControllerCfg
from internutopia_extension.configs.controllers.g1_move_by_speed_controller import G1MoveBySpeedControllerCfg
from internutopia_extension.configs.controllers.gr1_leg_action import GR1LegActionControllerCfg
from internutopia_extension.configs.controllers.gr1_move_by_speed_controller import GR1MoveBySpeedControllerCfg
from internutopia_extension.configs.controllers.gr1_teleop_controller import GR1TeleOpControllerCfg
from internutopia_extension.configs.controllers.gripper_controller import GripperControllerCfg
from internutopia_extension.configs.controllers.h1_leg_action import H1LegActionControllerCfg
from internutopia_extension.configs.controllers.h1_move_by_speed_controller import H1MoveBySpeedControllerCfg
from internutopia_extension.configs.controllers.holonomic_base_controller import HolonomicBaseControllerCfg
from internutopia_extension.configs.controllers.ik_controller import IK_REFERENCES, InverseKinematicsControllerCfg
from internutopia_extension.configs.controllers.joint_controller import JointControllerCfg
from internutopia_extension.configs.controllers.move_along_path_points_controller import MoveAlongPathPointsControllerCfg
from internutopia_extension.configs.controllers.move_to_point_by_speed_controller import MoveToPointBySpeedControllerCfg
from internutopia_extension.configs.controllers.recover_controller import RecoverControllerCfg
from internutopia_extension.configs.controllers.rmpflow_controller import RMPFlowControllerCfg
from internutopia_extension.configs.controllers.rotate_controller import RotateControllerCfg

__all__ = [
    'IK_REFERENCES', 'AliengoLegActionControllerCfg', 'AliengoMoveBySpeedControllerCfg', 'DifferentialDriveControllerCfg', 'FrankaMocapTeleopControllerCfg', 'G1MoveBySpeedControllerCfg', 'GR1LegActionControllerCfg', 'GR1MoveBySpeedControllerCfg', 'GR1TeleOpControllerCfg', 'GripperControllerCfg',
    'H1LegActionControllerCfg', 'H1MoveBySpeedControllerCfg', 'HolonomicBaseControllerCfg', 'InverseKinematicsControllerCfg', 'JointControllerCfg',
    'MoveAlongPathPointsControllerCfg', 'MoveToPointBySpeedControllerCfg', 'RMPFlowControllerCfg',
    'RecoverControllerCfg', 'RotateControllerCfg',
]
