"""Config classes of the built-in controllers (InternUtopia names, types and fields)."""

from __future__ import annotations

from pydantic import field_validator

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
    policy_weights_path: str | None = None
    joint_names: list[str] | None = None


class G1MoveBySpeedControllerCfg(ControllerCfg):
    """G1's ``move_by_speed``: velocity commands fed to the trained ONNX walking policy.

    ``policy`` picks holosoma's ``'ppo'`` or ``'fastsac'`` policy. ``policy_weights_path`` and
    ``joint_names`` (InternUtopia's TorchScript policy and its joint order) are accepted and unused:
    the ONNX policy has its own joint order.
    """

    type: str = 'G1MoveBySpeedController'
    policy: str = 'ppo'
    policy_weights_path: str | None = None
    joint_names: list[str] | None = None


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
    joint_names: list[str] | None = None


#: Frames an :class:`InverseKinematicsControllerCfg` target may be given in.
IK_REFERENCES = ('world', 'robot', 'arm_base')


class InverseKinematicsControllerCfg(ControllerCfg):
    """Moves an arm's end-effector frame to ``[position (3,), orientation wxyz (4,)]``.

    ``end_effector_frame_name`` names a site or body of the robot (the Franka's is
    ``'right_gripper'``, between the fingertips). ``reference`` says which frame targets are in:
    ``'world'`` (default, the env-local frame) or ``'robot'``/``'arm_base'`` (the arm's base).
    ``threshold`` (m) is how close the frame must be for the observation's ``finished``.
    ``robot_description_path`` and ``robot_urdf_path`` name InternUtopia's Lula solver files; they
    are accepted and unused (the IK here works on the MuJoCo model).
    """

    type: str = 'InverseKinematicsController'
    robot_description_path: str | None = None
    robot_urdf_path: str | None = None
    end_effector_frame_name: str = 'right_gripper'
    threshold: float = 0.01
    reference: str | None = None

    @field_validator('threshold')
    @classmethod
    def _threshold_positive(cls, value: float) -> float:
        if not value > 0:
            raise ValueError(f'threshold must be > 0 metres; got {value}')
        return value

    @field_validator('reference')
    @classmethod
    def _known_reference(cls, value: str | None) -> str | None:
        if value is not None and value not in IK_REFERENCES:
            raise ValueError(f'reference must be one of {list(IK_REFERENCES)} or None (world); got {value!r}')
        return value


class GripperControllerCfg(ControllerCfg):
    """Opens and closes a parallel gripper: ``['open']`` or ``['close']``."""

    type: str = 'GripperController'


class RMPFlowControllerCfg(InverseKinematicsControllerCfg):
    """InternUtopia's RMPflow arm controller (Isaac Sim's Lula motion policy), same fields.

    Lula is part of Isaac Sim; here the target ``[position, orientation]`` is reached by the
    inverse-kinematics controller on the MuJoCo model (no obstacle avoidance). The Lula files
    (``robot_description_path``, ``robot_urdf_path``, ``rmpflow_config_path``) are accepted and unused.
    """

    type: str = 'RMPFlowController'
    rmpflow_config_path: str | None = None


class RecoverControllerCfg(ControllerCfg):
    """Puts a robot back on its feet: upright, at ``recover_height`` (m), keeping its x, y and heading.

    InternUtopia's recover controller drives H1's joints back to standing; here the base is set
    upright directly (the action is ignored: send ``[]``).
    """

    type: str = 'RecoverController'
    recover_height: float


__all__ = [
    'DifferentialDriveControllerCfg', 'G1MoveBySpeedControllerCfg', 'GripperControllerCfg', 'H1MoveBySpeedControllerCfg',
    'HolonomicBaseControllerCfg', 'InverseKinematicsControllerCfg', 'JointControllerCfg',
    'MoveAlongPathPointsControllerCfg', 'MoveToPointBySpeedControllerCfg', 'RMPFlowControllerCfg',
    'RecoverControllerCfg', 'RotateControllerCfg',
]
