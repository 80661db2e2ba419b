"""``InverseKinematicsControllerCfg``: an arm's end-effector pose by inverse kinematics (InternUtopia's module path)."""

from __future__ import annotations

from pydantic import field_validator

from internutopia.core.config import ControllerCfg

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


__all__ = ['IK_REFERENCES', 'InverseKinematicsControllerCfg']
