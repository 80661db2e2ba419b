"""``ManipulationTaskCfg``: InternUtopia's manipulation episode, with pick-and-place goals (InternUtopia's module path)."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator, model_validator

from internutopia.core.config import MetricCfg, TaskCfg
from internutopia.core.config.values import Vec3, check_steps

#: Top-level observation keys a ManipulationTask adds next to the robots (so no robot may use them).
MANIPULATION_RESERVED_NAMES = ('task', 'objects')
#: The shaped reward's terms (``reward_scales`` keys), each in [0, 1] per step: ``reach`` the tool
#: frame near the target object (``1 - tanh(5 d)``), ``grasp`` the object held, ``lift`` held and
#: raised (up to 10 cm), ``place`` the object near the goal while held or resting there
#: (``1 - tanh(5 d)``), ``success`` the episode's success.
REWARD_TERMS = ('reach', 'grasp', 'lift', 'place', 'success')


def _default_manipulation_metrics() -> list[MetricCfg]:
    from internutopia_extension.configs.metrics import (
        DroppedMetricCfg,
        ObjectDistanceToGoalMetricCfg,
        PickPlaceSuccessMetricCfg,
        StepsMetricCfg,
    )

    return [PickPlaceSuccessMetricCfg(), ObjectDistanceToGoalMetricCfg(), StepsMetricCfg(), DroppedMetricCfg()]


class ManipulationTaskCfg(TaskCfg):
    """A manipulation episode (InternUtopia's fields ``prompt``, ``target``, ``episode_idx``, ``max_steps``).

    ``target`` is a free label (InternUtopia uses e.g. ``'franka_manipulation'``): such an episode
    ends with ``truncated=True`` on env step ``max_steps + 1`` (InternUtopia's manipulation task
    ends once its step count exceeds ``max_steps``). For pick and place, let ``target``
    name one of the episode's ``objects`` and set ``goal_position`` (env-local xyz of where that
    object's origin, a cube's centre, should end up): the episode then also ends, with success
    (``terminated``), on the first step the object has rested (slower than 5 cm/s) for 0.1 s within
    ``success_distance`` metres of the goal and the gripper of ``robot_name`` (default: the first
    robot) has let go of it. ``metrics`` then default to ``success``, ``distance_to_goal`` (of the
    object, at the end), ``steps`` and ``dropped``. See ``docs/tasks.md``.
    """

    type: str = 'ManipulationTask'
    max_steps: int
    prompt: str | None = ''
    target: str
    episode_idx: int
    goal_position: Vec3 | None = None
    success_distance: float = 0.03
    robot_name: str | None = None
    #: What counts as success when ``goal_position`` is set: ``'place'`` the object rests at the
    #: goal, let go; ``'pick'`` the object is held 10 cm above where it started; ``'reach'`` the
    #: tool frame is within ``success_distance`` of the target object (e.g. a visual marker).
    goal: Literal['reach', 'pick', 'place'] = 'place'
    #: Whether success ends the episode (``terminated``); ``False`` runs it to the step limit and
    #: the ``success`` metric is the last step's (a reach that must be held, as a learning task
    #: wants: ending on success would cut off the reward for staying there).
    end_on_success: bool = True
    #: Scales of the shaped reward's named terms (:data:`REWARD_TERMS`); ``None``: reward 0.
    reward_scales: dict[str, float] | None = None

    @field_validator('max_steps')
    @classmethod
    def _max_steps_positive(cls, value: int) -> int:
        return check_steps(value)  # >= 1, and far from where the step counters overflow

    @field_validator('reward_scales')
    @classmethod
    def _known_reward_terms(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        unknown = sorted(set(value or {}) - set(REWARD_TERMS))
        if unknown:
            raise ValueError(f'reward_scales: unknown term(s) {unknown}; terms: {list(REWARD_TERMS)}')
        return value

    @field_validator('success_distance')
    @classmethod
    def _success_distance_positive(cls, value: float) -> float:
        if not value > 0:
            raise ValueError(f'success_distance must be > 0 metres; got {value}')
        return value

    @model_validator(mode='after')
    def _goal_names_an_object(self) -> ManipulationTaskCfg:
        robots = [robot.name for robot in self.robots]
        objects = [obj.name for obj in self.objects]
        if self.robot_name is not None and self.robot_name not in robots:
            raise ValueError(f'robot_name {self.robot_name!r} is not one of the robots {robots}')
        if self.goal_position is not None:
            if self.target not in objects:
                raise ValueError(f'goal_position is set, so target must name one of the objects to place; '
                                 f'target {self.target!r} is not among the objects {objects}')
            if not robots:
                raise ValueError('a pick-and-place ManipulationTask needs a robot: robots is empty')
            if 'metrics' not in self.model_fields_set:
                self.metrics = _default_manipulation_metrics()
        reserved = sorted(set(robots) & set(MANIPULATION_RESERVED_NAMES))
        if reserved:
            raise ValueError(f'robot name(s) {reserved} are reserved: ManipulationTask observations use the keys '
                             f'{list(MANIPULATION_RESERVED_NAMES)} next to the robots')
        return self

    def gripper_robot_name(self) -> str | None:
        """The robot whose gripper must let go: ``robot_name``, else the first robot (``None`` if none)."""
        if self.robot_name is not None:
            return self.robot_name
        return self.robots[0].name if self.robots else None

    def place_goal(self) -> bool:
        """Whether this is a pick-and-place episode (``target`` names an object and a goal is set)."""
        return self.goal_position is not None


__all__ = ['MANIPULATION_RESERVED_NAMES', 'REWARD_TERMS', 'ManipulationTaskCfg']
