"""``TaskCfg``: one episode (scene, robots, objects, metrics, reward)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ConfigDict, Field, SerializeAsAny, ValidationInfo, field_validator, model_validator

from internutopia.core.config.base import Quat, Scale, TypedCfg, Vec3, unique_names
from internutopia.core.config.files import AssetPath
from internutopia.core.config.metric import MetricCfg
from internutopia.core.config.object import ObjectCfg
from internutopia.core.config.robot import RobotCfg
from internutopia.core.config.task.reward import RewardCfg
from internutopia.core.config.task.robot_names import check_metric_robot_names
from internutopia.core.config.values import checked_pose
from internutopia.core.util.caller import caller_stacklevel


class TaskCfg(TypedCfg):
    """One episode: scene, robots, objects, metrics and an optional ``reward``. Never mutated by the env.

    Keys it does not declare are kept as attributes (as InternUtopia keeps them), with a warning.
    """

    model_config = ConfigDict(extra='allow')

    type: str
    metrics: list[SerializeAsAny[MetricCfg]] = Field(default_factory=list)
    reward: SerializeAsAny[RewardCfg] | None = None
    #: Not read: every episode's record goes to ``Config.metrics_save_path`` (InternUtopia's
    #: ``TaskCfg`` has no such field; kept so that YAML files written with it still load). A value
    #: other than the default warns that it changes nothing.
    metrics_save_path: str = 'console'
    #: Where the scene, robots and objects live in a USD stage (InternUtopia's fields; kept for
    #: configs written for it: a MuJoCo slot has no stage paths, so they change nothing here).
    scene_root_path: str | None = '/scene'
    robots_root_path: str | None = '/robots'
    objects_root_path: str | None = '/objects'
    #: The scene file (MJCF, USD); a ``package://`` path names a file of an installed package.
    scene_asset_path: AssetPath | None = None
    scene_scale: Scale = (1.0, 1.0, 1.0)
    scene_position: Vec3 = (0.0, 0.0, 0.0)
    scene_orientation: Quat = (1.0, 0.0, 0.0, 0.0)
    robots: list[SerializeAsAny[RobotCfg]] = Field(default_factory=list)
    objects: list[SerializeAsAny[ObjectCfg]] = Field(default_factory=list)
    #: ``None`` as InternUtopia reads it: a scene unscaled (it creates the scene prim with
    #: ``scale=None``) and unrotated (it never reads ``scene_orientation``); no results file (as
    #: ``Config.metrics_save_path``). ``None`` for ``robots``, ``objects``, ``metrics`` or
    #: ``scene_position`` is an error: InternUtopia iterates over them, or adds the slot's offset.
    _none_means: ClassVar[Mapping[str, Any]] = {
        'scene_scale': (1.0, 1.0, 1.0), 'scene_orientation': (1.0, 0.0, 0.0, 0.0), 'metrics_save_path': 'none',
    }

    @field_validator('scene_position', 'scene_orientation', 'scene_scale')
    @classmethod
    def _scene_pose_in_range(cls, value: Any, info: ValidationInfo) -> Any:
        # (Also for a subclass that redeclares the field with a plain tuple type.)
        return checked_pose(value, (info.field_name or '').removeprefix('scene_'))

    @field_validator('robots')
    @classmethod
    def _unique_robot_names(cls, robots: list[RobotCfg]) -> list[RobotCfg]:
        return unique_names(robots, 'robot')

    @field_validator('objects')
    @classmethod
    def _unique_object_names(cls, objects: list[ObjectCfg]) -> list[ObjectCfg]:
        return unique_names(objects, 'object')

    @field_validator('metrics')
    @classmethod
    def _unique_metric_names(cls, metrics: list[MetricCfg]) -> list[MetricCfg]:
        return unique_names(metrics, 'metric')  # (a metric without a name is reported under its type)

    @field_validator('metrics_save_path')
    @classmethod
    def _metrics_save_path_not_read(cls, value: str) -> str:
        if value != 'console':
            warnings.warn(f'TaskCfg.metrics_save_path={value!r} changes nothing: every episode\'s record goes to '
                          'Config.metrics_save_path (InternUtopia\'s TaskCfg has no such field)', UserWarning,
                          stacklevel=caller_stacklevel())
        return value

    @model_validator(mode='after')
    def _robots_and_objects_named_apart(self) -> TaskCfg:
        # A slot's model names each robot's and object's bodies and joints after it, so a robot
        # and an object of one name collide there.
        shared = sorted({r.name for r in self.robots} & {o.name for o in self.objects}, key=str)
        if shared:
            raise ValueError(f'a robot and an object of a task must not share a name; shared: {shared}')
        return self

    @model_validator(mode='after')
    def _metric_robots_present(self) -> TaskCfg:
        # (Every task config, an extension's too: a metric naming a robot the task lacks would
        # fail every episode's start; see robot_names.)
        check_metric_robot_names(self.metrics, self.robots)
        return self


__all__ = ['TaskCfg']
