"""``FrankaMocapTeleopControllerCfg``: a Franka's hand and gripper driven by a tracked human hand (InternUtopia's module path)."""

from __future__ import annotations

from pydantic import field_validator

from internutopia.core.config import ControllerCfg
from internutopia.core.config.values import Vec3


class FrankaMocapTeleopControllerCfg(ControllerCfg):
    """Teleoperation of a Franka from motion-capture hand frames (InternUtopia's fields).

    Each action is ``[frame]``, one dict of hand keypoints as a motion-capture server sends it
    (see :mod:`internutopia_extension.controllers.franka_mocap_teleop_controller`). The right
    wrist's motion, mapped from the camera's axes to the robot's and multiplied by ``scale``
    (per robot axis x, y, z), moves the end-effector target, which starts at ``origin_xyz``
    (metres, in the arm's base frame) with the orientation ``origin_xyz_angle`` (extrinsic x-y-z
    Euler angles, radians). ``target_position`` is the point the left-hand-controlled camera
    looks at. ``sub_controllers``: the arm controller (``rmpflow_controller``) first, then the
    gripper controller.
    """

    type: str = 'FrankaMocapTeleopController'
    scale: tuple[float, float, float]
    target_position: Vec3
    origin_xyz: Vec3 | None = None
    origin_xyz_angle: tuple[float, float, float] | None = None

    @field_validator('scale')
    @classmethod
    def _scale_finite(cls, value: tuple[float, float, float]) -> tuple[float, float, float]:
        if not all(abs(v) < 1e3 for v in value):
            raise ValueError(f'scale multiplies the hand motion per robot axis (x, y, z) and must be finite, |s| < 1000; got {value}')
        return value


__all__ = ['FrankaMocapTeleopControllerCfg']
