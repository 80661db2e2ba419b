"""Config classes of the built-in controllers (InternUtopia names, types and fields)."""

from __future__ import annotations

from typing import Optional

from internutopia.core.config import ControllerCfg


class DifferentialDriveControllerCfg(ControllerCfg):
    """Wheel speeds from ``[forward_speed, rotation_speed]`` for a two-wheeled robot."""

    type: str = 'DifferentialDriveController'
    wheel_base: float
    wheel_radius: float


class HolonomicBaseControllerCfg(ControllerCfg):
    """Moves a robot's pelvis/base as a holonomic body at ``[forward, lateral, yaw_rate]``.

    The base is welded to a mocap target that moves at the commanded velocity, so the robot
    still collides with the scene; the joints hold their standing pose.
    """

    type: str = 'HolonomicBaseController'


class H1MoveBySpeedControllerCfg(HolonomicBaseControllerCfg):
    """H1's ``move_by_speed``. No trained H1 walking policy is available on PyPI, so this drives
    the pelvis as a holonomic base; ``policy_weights_path`` is accepted for compatibility and unused."""

    type: str = 'H1MoveBySpeedController'
    policy_weights_path: Optional[str] = None
    joint_names: Optional[list[str]] = None


class G1MoveBySpeedControllerCfg(ControllerCfg):
    """G1's ``move_by_speed``: velocity commands fed to the trained ONNX walking policy."""

    type: str = 'G1MoveBySpeedController'
    policy: str = 'ppo'


class MoveToPointBySpeedControllerCfg(ControllerCfg):
    """Drives the base to ``[goal_xyz]`` (env-local) through its ``move_by_speed`` sub-controller."""

    type: str = 'MoveToPointBySpeedController'
    forward_speed: float = 1.0
    rotation_speed: float = 1.0
    threshold: float = 0.05


class MoveAlongPathPointsControllerCfg(ControllerCfg):
    """Follows ``[[p0, p1, ...]]`` (env-local points) through a ``move_to_point`` sub-controller."""

    type: str = 'MoveAlongPathPointsController'
    forward_speed: float = 1.0
    rotation_speed: float = 1.0
    threshold: float = 0.1


class RotateControllerCfg(ControllerCfg):
    """Turns the base in place to ``[goal_quat_wxyz]`` through its ``move_by_speed`` sub-controller."""

    type: str = 'RotateController'
    rotation_speed: float = 2.0
    threshold: float = 0.02


class JointControllerCfg(ControllerCfg):
    """Position targets for ``joint_names`` (all actuated joints when ``None``)."""

    type: str = 'JointController'
    joint_names: Optional[list[str]] = None


__all__ = [
    'DifferentialDriveControllerCfg', 'G1MoveBySpeedControllerCfg', 'H1MoveBySpeedControllerCfg',
    'HolonomicBaseControllerCfg', 'JointControllerCfg', 'MoveAlongPathPointsControllerCfg',
    'MoveToPointBySpeedControllerCfg', 'RotateControllerCfg',
]
