"""``LocomotionTaskCfg``: a legged robot follows a schedule of velocity commands, or steers through
goal points (for training and measuring a walking controller)."""

from __future__ import annotations

import math
from typing import Any

from pydantic import field_validator, model_validator

from internutopia.core.config import TaskCfg
from internutopia.core.config.task.robot_names import check_robot_name
from internutopia.core.config.values import MAX_COORDINATE_M, check_steps


class LocomotionTaskCfg(TaskCfg):
    """An episode in which robot ``robot`` (a walking H1) is given velocity commands.

    ``robot`` must name one of ``robots`` (a ``ValueError`` when the config is built, naming the
    robots there are; not checked while ``robots`` is empty).

    ``commands`` is the schedule: ``(start_time_s, forward, lateral, yaw_rate)`` entries in
    increasing start time (the first at 0); each holds until the next. The episode ends when the
    robot falls (``terminated``; with ``end_on_fall``) or after ``max_steps`` env steps
    (``truncated``). ``reward_scales`` overrides scales of the walking rewards by term name
    (:data:`internutopia_extension.robots.h1_locomotion.rewards.REWARD_SCALES`). With
    ``push_interval`` (seconds, ``(min, max)``) the robot is pushed at random intervals in that
    range: its pelvis gains a horizontal velocity of half to all of ``push_speed`` m/s in a random direction
    (how a walking policy learns to recover). The pushes' draws come from ``push_seed`` (an int >= 0),
    or, when it is ``None``, from the episode's seed (``EnvView.episode_seed``: its index in the run's
    queue, mixed with the seed of a Gymnasium env's ``reset(seed=...)``): an episode's pushes depend
    on the episode alone, never on the other slots, the slot it runs in or the episodes before it.

    With ``goals`` (points ``(x, y)`` in the slot's frame) the commands come from steering through
    them in turn instead, the way ``move_to_point`` steers (forward up to ``goal_speed`` m/s, turning
    in place when facing away, slowing near a goal); a goal within ``goal_tolerance`` m counts as
    reached. After the last one the robot is held there as ``move_to_point`` called every step
    holds it: a zero command within the tolerance, steering back when it drifts out. ``commands``
    must then be left as it is.
    """

    type: str = 'LocomotionTask'
    max_steps: int = 4000
    robot: str = 'h1'
    commands: list[tuple[float, float, float, float]] = [(0.0, 0.0, 0.0, 0.0)]
    end_on_fall: bool = True
    reward_scales: dict[str, float] | None = None
    push_interval: tuple[float, float] | None = None
    push_speed: float = 0.5
    push_seed: int | None = None
    goals: list[tuple[float, float]] | None = None
    goal_speed: float = 1.0
    goal_tolerance: float = 0.1

    @field_validator('max_steps')
    @classmethod
    def _max_steps_positive(cls, value: int) -> int:
        return check_steps(value)

    @field_validator('commands')
    @classmethod
    def _schedule(cls, value: list[tuple[float, float, float, float]]) -> list[tuple[float, float, float, float]]:
        if not value:
            raise ValueError('commands must have at least one (start_time_s, forward, lateral, yaw_rate) entry')
        if not all(math.isfinite(x) for entry in value for x in entry):
            raise ValueError(f'commands must be finite numbers; got {value!r}')
        times = [entry[0] for entry in value]
        if times[0] != 0.0 or any(b <= a for a, b in zip(times, times[1:], strict=False)):
            raise ValueError(f'command start times must begin at 0 and increase; got {times}')
        return value

    @field_validator('push_interval')
    @classmethod
    def _push_interval(cls, value: tuple[float, float] | None) -> tuple[float, float] | None:
        if value is not None and not (math.isfinite(value[0]) and math.isfinite(value[1]) and 0 < value[0] <= value[1]):
            raise ValueError(f'push_interval must be (min_s, max_s) with 0 < min_s <= max_s; got {value!r}')
        return value

    @field_validator('push_speed')
    @classmethod
    def _push_speed(cls, value: float) -> float:
        if not (math.isfinite(value) and 0.0 <= value <= 5.0):
            raise ValueError(f'push_speed must be a speed in [0, 5] m/s; got {value!r}')
        return value

    @field_validator('push_seed')
    @classmethod
    def _push_seed(cls, value: int | None) -> int | None:
        if value is not None and not 0 <= value < 2 ** 63:
            raise ValueError(f'push_seed must be None or an int in [0, 2**63); got {value!r}')
        return value

    @field_validator('goals')
    @classmethod
    def _goals(cls, value: list[tuple[float, float]] | None) -> list[tuple[float, float]] | None:
        if value is not None and (not value or not all(math.isfinite(x) and abs(x) <= MAX_COORDINATE_M
                                                       for point in value for x in point)):
            raise ValueError(f'goals must be a non-empty list of finite (x, y) points, every coordinate within '
                             f'+-{MAX_COORDINATE_M:g} m; got {value!r}')
        return value

    @field_validator('goal_speed', 'goal_tolerance')
    @classmethod
    def _positive(cls, value: float, info: Any) -> float:
        if not (math.isfinite(value) and value > 0.0):
            raise ValueError(f'{info.field_name} must be a positive number; got {value!r}')
        return value

    @model_validator(mode='after')
    def _goals_or_commands(self) -> LocomotionTaskCfg:
        if self.goals is not None and self.commands != [(0.0, 0.0, 0.0, 0.0)]:
            raise ValueError('give goals or a commands schedule, not both')
        return self

    @model_validator(mode='after')
    def _robots_present(self) -> LocomotionTaskCfg:
        # (Not checked while robots is empty: a template may get its robots later, with update().)
        check_robot_name(self.robot, 'robot', self.robots)
        return self

    @field_validator('reward_scales')
    @classmethod
    def _known_terms(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        from internutopia_extension.robots.h1_locomotion.rewards import REWARD_SCALES

        unknown = sorted(set(value or {}) - set(REWARD_SCALES))
        if unknown:
            raise ValueError(f'unknown reward terms {unknown}; valid terms: {sorted(REWARD_SCALES)}')
        return value


__all__ = ['LocomotionTaskCfg']
