"""Robot and controller configs (InternUtopia's ``internutopia.core.config.robot``)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, SerializeAsAny, ValidationInfo, field_validator

from internutopia.core.config.base import BaseCfg, Quat, Scale, TypedCfg, Vec3, unique_names
from internutopia.core.config.files import AssetPath
from internutopia.core.config.sensor import SensorCfg
from internutopia.core.config.values import check_entity_name, checked_pose


class ControllerCfg(TypedCfg):
    """A controller of a robot; ``sub_controllers`` are the lower-level controllers it drives.

    Keys it does not declare are kept as attributes (as InternUtopia keeps them), with a warning;
    a controller's own parameters belong in declared fields of its config subclass.
    """

    model_config = ConfigDict(extra='allow')

    name: str
    type: str
    sub_controllers: list[SerializeAsAny[ControllerCfg]] | None = None


class RobotCfg(TypedCfg):
    """A robot of an episode. ``position``/``orientation`` (wxyz) are local to the env slot."""

    name: str
    type: str
    prim_path: str | None = None
    usd_path: AssetPath | None = None
    position: Vec3 = (0.0, 0.0, 0.0)
    orientation: Quat | None = None
    scale: Scale | None = None
    controllers: list[SerializeAsAny[ControllerCfg]] | None = None
    sensors: list[SerializeAsAny[SensorCfg]] | None = None

    @field_validator('name')
    @classmethod
    def _usable_name(cls, name: str) -> str:
        return check_entity_name(name, 'robot')

    @field_validator('position', 'orientation', 'scale')
    @classmethod
    def _pose_in_range(cls, value: Any, info: ValidationInfo) -> Any:
        # (Also for a subclass that redeclares the field with a plain tuple type.)
        return checked_pose(value, info.field_name or '')

    @field_validator('controllers')
    @classmethod
    def _unique_controller_names(cls, controllers: list[ControllerCfg] | None) -> list[ControllerCfg] | None:
        return unique_names(controllers, "a robot's controller")

    @field_validator('sensors')
    @classmethod
    def _unique_sensor_names(cls, sensors: list[SensorCfg] | None) -> list[SensorCfg] | None:
        return unique_names(sensors, "a robot's sensor")


__all__ = ['BaseCfg', 'ControllerCfg', 'RobotCfg']
