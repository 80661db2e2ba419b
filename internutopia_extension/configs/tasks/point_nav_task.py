"""Point-goal navigation: ``PointNavTaskCfg`` and its default reward, ``PointNavProgressRewardCfg``."""

from __future__ import annotations

import math
import numbers
from typing import Any

from pydantic import Field, SerializeAsAny, field_validator, model_validator

from internutopia.core.config import MetricCfg, RewardCfg, TaskCfg
from internutopia.core.config.values import Vec3, check_steps

#: Keys of ``PointNavProgressRewardCfg.reward_settings`` and their defaults.
POINT_NAV_REWARD_DEFAULTS: dict[str, float] = {'scale': 1.0, 'success_bonus': 1.0, 'step_penalty': 0.0}
#: Top-level observation keys a PointNavTask adds next to the robots (so no robot may use them).
POINT_NAV_RESERVED_NAMES = ('task', 'objects')


class PointNavProgressRewardCfg(RewardCfg):
    """Dense point-goal reward: ``scale * (previous - current distance) + success_bonus * success - step_penalty``.

    Distances are xy (metres) from the robot's base to the goal. ``reward_settings`` keys (all
    optional): ``scale`` (1.0), ``success_bonus`` (1.0, paid on the step that reaches the goal),
    ``step_penalty`` (0.0, paid every step).
    """

    type: str = 'PointNavProgressReward'
    reward_settings: dict[str, Any] | None = None

    @field_validator('reward_settings')
    @classmethod
    def _known_settings(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return value
        unknown = sorted(set(value) - set(POINT_NAV_REWARD_DEFAULTS))
        if unknown:
            raise ValueError(f'unknown reward_settings key(s) {unknown}; valid keys: {sorted(POINT_NAV_REWARD_DEFAULTS)}')
        for key, setting in value.items():
            # Any real number (a numpy scalar too: np.float32(0.5)), not a bool; kept as a Python float.
            if isinstance(setting, bool) or not isinstance(setting, numbers.Real) or not math.isfinite(setting):
                raise ValueError(f'reward_settings[{key!r}] must be a finite number; got {setting!r}')
        return {key: float(setting) for key, setting in value.items()}


def _default_point_nav_metrics() -> list[MetricCfg]:
    from internutopia_extension.configs.metrics import (
        CollisionCountMetricCfg,
        DistanceToGoalMetricCfg,
        SPLMetricCfg,
        StepsMetricCfg,
        SuccessMetricCfg,
    )

    return [SuccessMetricCfg(), SPLMetricCfg(), DistanceToGoalMetricCfg(), StepsMetricCfg(), CollisionCountMetricCfg()]


class PointNavTaskCfg(TaskCfg):
    """Drive a robot's base to ``goal`` (env-local xyz; only x, y count).

    The episode terminates (success) on the first step the base is closer than ``success_distance``
    (xy, metres) to the goal and is truncated after ``max_steps`` env steps. ``reward`` defaults to
    :class:`PointNavProgressRewardCfg` (``None``: reward 0). ``shortest_path_length`` (metres) is
    SPL's ``L``; ``None`` uses the straight xy line from the start to the goal. ``robot_name``
    picks the robot (default: the first one). ``metrics`` default to success, spl,
    distance_to_goal, steps and collisions.
    """

    type: str = 'PointNavTask'
    goal: Vec3
    success_distance: float = 0.3
    max_steps: int = 500
    reward: SerializeAsAny[RewardCfg] | None = Field(default_factory=PointNavProgressRewardCfg)
    shortest_path_length: float | None = None
    robot_name: str | None = None
    metrics: list[SerializeAsAny[MetricCfg]] = Field(default_factory=_default_point_nav_metrics)

    @field_validator('success_distance')
    @classmethod
    def _success_distance_positive(cls, value: float) -> float:
        if not value > 0:
            raise ValueError(f'success_distance must be > 0 metres; got {value}')
        return value

    @field_validator('max_steps')
    @classmethod
    def _max_steps_positive(cls, value: int) -> int:
        return check_steps(value)  # >= 1, and far from where the step counters overflow

    @field_validator('reward')
    @classmethod
    def _reward_of_its_type(cls, value: RewardCfg | None) -> RewardCfg | None:
        # A plain RewardCfg(type='PointNavProgressReward', ...) gets its type's own checks here.
        if value is not None:
            target = RewardCfg.config_class_for(value.type)
            if target is not None and issubclass(target, RewardCfg) and not isinstance(value, target):
                return target.model_validate(value.model_dump())
        return value

    @field_validator('shortest_path_length')
    @classmethod
    def _path_length_non_negative(cls, value: float | None) -> float | None:
        if value is not None and value < 0:
            raise ValueError(f'shortest_path_length must be >= 0 metres or None; got {value}')
        return value

    @model_validator(mode='after')
    def _robot_present(self) -> PointNavTaskCfg:
        names = [robot.name for robot in self.robots]
        if not names:
            raise ValueError('a PointNavTask needs a robot: robots is empty')
        if self.robot_name is not None and self.robot_name not in names:
            raise ValueError(f'robot_name {self.robot_name!r} is not one of the robots {names}')
        reserved = sorted(set(names) & set(POINT_NAV_RESERVED_NAMES))
        if reserved:
            raise ValueError(f'robot name(s) {reserved} are reserved: PointNavTask observations use the keys '
                             f'{list(POINT_NAV_RESERVED_NAMES)} next to the robots')
        return self

    def nav_robot_name(self) -> str:
        """The navigating robot: ``robot_name`` or the first robot."""
        return self.robot_name if self.robot_name is not None else self.robots[0].name


__all__ = ['POINT_NAV_RESERVED_NAMES', 'POINT_NAV_REWARD_DEFAULTS', 'PointNavProgressRewardCfg', 'PointNavTaskCfg']
