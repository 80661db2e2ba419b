"""Jetbot: robot config and ready-made controller configs.

>>> from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
>>> [c.name for c in JetbotRobotCfg().controllers]
['move_by_speed', 'move_to_point', 'move_along_path', 'rotate']
"""

from __future__ import annotations

from pydantic import Field, SerializeAsAny, field_validator

from internutopia.core.config import ControllerCfg, RobotCfg, SensorCfg
from internutopia_extension.configs.controllers import (
    DifferentialDriveControllerCfg,
    MoveAlongPathPointsControllerCfg,
    MoveToPointBySpeedControllerCfg,
    RotateControllerCfg,
)
from internutopia_extension.configs.sensors import RepCameraCfg

move_by_speed_cfg = DifferentialDriveControllerCfg(name='move_by_speed', wheel_base=0.1125, wheel_radius=0.03)

move_to_point_cfg = MoveToPointBySpeedControllerCfg(
    name='move_to_point', forward_speed=0.5, rotation_speed=3.0, threshold=0.05, sub_controllers=[move_by_speed_cfg],
)

move_along_path_cfg = MoveAlongPathPointsControllerCfg(
    name='move_along_path', forward_speed=0.5, rotation_speed=3.0, threshold=0.1, sub_controllers=[move_to_point_cfg],
)

rotate_cfg = RotateControllerCfg(name='rotate', rotation_speed=3.0, threshold=0.02, sub_controllers=[move_by_speed_cfg])

jetbot_camera_cfg = RepCameraCfg(name='camera', prim_path='chassis/Camera', resolution=(320, 240))

#: InternUtopia's name of the Jetbot camera (its resolution, 640x360; mounted on the chassis).
camera_cfg = jetbot_camera_cfg.update(resolution=(640, 360))


class JetbotRobotCfg(RobotCfg):
    """A small two-wheeled differential-drive robot. ``position`` is its root frame on the ground
    (``z=0`` rests on the floor, as in InternUtopia); the observed ``position`` is the chassis'."""

    name: str = 'jetbot'
    type: str = 'JetbotRobot'
    prim_path: str | None = '/jetbot'
    controllers: list[SerializeAsAny[ControllerCfg]] | None = Field(
        default_factory=lambda: [move_by_speed_cfg, move_to_point_cfg, move_along_path_cfg, rotate_cfg])
    sensors: list[SerializeAsAny[SensorCfg]] | None = None

    @field_validator('scale')
    @classmethod
    def _simulable_scale(cls, value: tuple[float, float, float] | None) -> tuple[float, float, float] | None:
        # The model scales uniformly only (internutopia_extension.robots.scaling); below 1/100 the
        # scaled chassis' inertia is too small for MuJoCo to compile the model.
        if value is not None and not value[0] == value[1] == value[2]:
            raise ValueError(f'a Jetbot scales uniformly only: scale must be three equal numbers (s, s, s) or None; '
                             f'got {tuple(value)}')
        if value is not None and min(value) < 0.01:
            raise ValueError(f'a Jetbot scaled below 0.01 cannot be simulated; got scale {tuple(value)}')
        return value
