"""Episodes H1's walking policy trains in: random velocity commands or goal points, pushes, falls end them.

An H1 stands at the slot origin with a random heading. In half the episodes it gets a new random
command every 4-8 s (forward -0.3 to 1 m/s, lateral up to +-0.5 m/s, yaw rate up to +-1 rad/s,
sometimes zero: stand still); in the other half it steers through 2-4 random goal points the way
``move_to_point`` does (turning in place, walking and turning at once, slowing down and stopping
at each goal, then held on the last one: the commands a navigation user gives), at 0.4-1 m/s. An episode lasts 20 s or until
the robot falls; every 5-10 s it is pushed (0.25-0.5 m/s of pelvis velocity). :func:`walk_sampler` draws them endlessly from a seeded generator; the Gymnasium id
``internutopia/H1Walk-v0`` (:mod:`internutopia.envs.locomotion`) runs them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from internutopia.core.config.fresh_episodes import FreshEpisodes

#: Physics steps per action (a 50 Hz policy over 200 Hz physics).
ACTION_REPEAT = 4
PHYSICS_DT = 0.005
EPISODE_SECONDS = 20.0
#: Seconds a command holds before the next (drawn uniformly).
COMMAND_HOLD = (4.0, 8.0)
#: Command ranges of training episodes: forward, lateral (m/s), yaw rate (rad/s).
FORWARD_RANGE = (-0.3, 1.0)
LATERAL_RANGE = (-0.5, 0.5)
YAW_RATE_RANGE = (-1.0, 1.0)
#: Share of commands that are zero (stand), and of those with a lateral or a yaw part.
STAND_SHARE = 0.15
LATERAL_SHARE = 0.4
YAW_SHARE = 0.5
#: Share of moving commands that are pure side-steps (none by default): forward speed within
#: :data:`SIDESTEP_FORWARD`, lateral speed of :data:`SIDESTEP_LATERAL` either way, no turning. Other
#: commands always carry a forward part from :data:`FORWARD_RANGE`, so without these a policy
#: rarely sees "sideways only" and learns to side-step while walking forward.
SIDESTEP_SHARE = 0.0
SIDESTEP_FORWARD = (-0.1, 0.1)
SIDESTEP_LATERAL = (0.2, 0.5)
#: Share of episodes that steer through goal points, how many goals, how far apart (m), how fast (m/s).
GOAL_SHARE = 0.5
GOAL_COUNT = (2, 4)
GOAL_DISTANCE = (1.0, 4.0)
GOAL_SPEED = (0.4, 1.0)
GOAL_TOLERANCES = (0.05, 0.1)
#: Pelvis height a walking H1 starts at (standing pose, soles 1 cm above the floor).
START_HEIGHT = 1.0
#: Pushes of training episodes: every 5-10 s, up to 0.5 m/s of pelvis velocity.
PUSH_INTERVAL = (5.0, 10.0)
PUSH_SPEED = 0.5


#: The command ranges of H1's training episodes: forward, lateral, yaw rate.
COMMAND_RANGES = (FORWARD_RANGE, LATERAL_RANGE, YAW_RATE_RANGE)


def _uniform(rng: np.random.Generator, low: float, high: float) -> float:
    """``float(rng.uniform(low, high))``, bit for bit and from the same draw: ``Generator.uniform``'s
    own arithmetic (``low + (high - low)`` times one double) without its argument handling, a
    quarter of its cost. An episode takes a dozen such draws, and a walking vector env with random
    actions starts one or two episodes per step."""
    return low + (high - low) * rng.random()


def _pick(rng: np.random.Generator, options: Sequence[float]) -> float:
    """``float(rng.choice(options))`` from the same draw (``Generator.choice`` of a sequence draws
    ``integers(0, len)``), at a ninth of its cost."""
    return float(options[int(rng.integers(0, len(options)))])


def random_command(rng: np.random.Generator, lateral_share: float = LATERAL_SHARE,
                   sidestep_share: float = SIDESTEP_SHARE,
                   ranges: tuple[tuple[float, float], ...] = COMMAND_RANGES, stand_share: float = STAND_SHARE) -> tuple[float, float, float]:
    """One training command ``(forward, lateral, yaw_rate)`` within ``ranges``: ``stand_share`` of
    them zero (stand still); ``sidestep_share`` of the moving ones are pure side-steps, and
    ``lateral_share`` of the others have a lateral part.

    >>> rng = np.random.default_rng(3)
    >>> steps = [random_command(rng, sidestep_share=1.0) for _ in range(200)]
    >>> all(abs(f) <= 0.1 and 0.2 <= abs(lat) <= 0.5 and yaw == 0.0 for f, lat, yaw in steps if any((f, lat, yaw)))
    True
    """
    if rng.random() < stand_share:  # (one draw whatever the share: the stream of later draws stays the same)
        return (0.0, 0.0, 0.0)
    # Drawn only when asked for, so that the default command stream stays the one earlier runs saw.
    if sidestep_share > 0.0 and rng.random() < sidestep_share:
        lateral = _uniform(rng, *SIDESTEP_LATERAL) * _pick(rng, (-1.0, 1.0))
        return (_uniform(rng, *SIDESTEP_FORWARD), lateral, 0.0)
    forward_range, lateral_range, yaw_rate_range = ranges
    forward = _uniform(rng, *forward_range)
    lateral = _uniform(rng, *lateral_range) if rng.random() < lateral_share else 0.0
    yaw_rate = _uniform(rng, *yaw_rate_range) if rng.random() < YAW_SHARE else 0.0
    return (forward, lateral, yaw_rate)


def walk_sampler(batch: int = 16, seconds: float = EPISODE_SECONDS, pushes: bool = True,
                 lateral_share: float = LATERAL_SHARE, reward_scales: dict[str, float] | None = None,
                 sidestep_share: float = SIDESTEP_SHARE, make_robot: Callable[[tuple, tuple], Any] | None = None,
                 ranges: tuple[tuple[float, float], ...] = COMMAND_RANGES, goal_speed: tuple[float, float] = GOAL_SPEED,
                 push_speed: float = PUSH_SPEED, start_height: float = START_HEIGHT, stand_share: float = STAND_SHARE) -> Any:
    """An endless episode sampler ``f(rng) -> list[LocomotionTaskCfg]`` (a
    :class:`~internutopia.core.config.fresh_episodes.FreshEpisodes`: the env takes them uncopied), ``batch`` episodes a call
    (with random pushes unless ``pushes`` is false). ``lateral_share`` is the share of moving
    commands with a lateral part, ``sidestep_share`` the share of pure side-steps, ``stand_share``
    the share of zero commands (:func:`random_command`); ``reward_scales`` overrides reward scales by term name (these are
    how a training run shifts its emphasis, e.g. towards side-stepping).

    Another walking robot's episodes (Aliengo's :mod:`~internutopia_extension.robots.aliengo_locomotion.episodes`)
    come from the same sampler: ``make_robot(position, orientation)`` gives its robot config
    (default: a walking H1 driven by ``leg_action``), ``ranges`` its command ranges, ``goal_speed``
    and ``push_speed`` its goal-steering speeds and pushes, ``start_height`` its base's start height."""
    for name, share in (('lateral_share', lateral_share), ('sidestep_share', sidestep_share), ('stand_share', stand_share)):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f'{name} must be between 0 and 1; got {share!r}')
    from internutopia.macros import gm
    from internutopia_extension.configs.controllers.h1_leg_action import H1LegActionControllerCfg
    from internutopia_extension.configs.robots.h1 import H1RobotCfg
    from internutopia_extension.configs.tasks import LocomotionTaskCfg

    def h1(position: tuple, orientation: tuple) -> Any:
        return H1RobotCfg(locomotion='walking', walking_policy='controller', position=position, orientation=orientation,
                          controllers=[H1LegActionControllerCfg()])

    robot_cfg = make_robot or h1
    # Every episode is its sampler's template (validated once, here) with its own draws put in:
    # the draws are numbers of the validated types, so a copy with them is what validating each
    # episode would give (tests/test_batched_resets.py checks it), at a small part of the cost.
    # Each episode has its own robot and controller configs; the rest is shared, never written.
    template_robot = robot_cfg((0.0, 0.0, start_height), (1.0, 0.0, 0.0, 0.0))
    template = LocomotionTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', robots=[template_robot],
                                 robot=template_robot.name, max_steps=int(round(seconds / PHYSICS_DT)),
                                 push_interval=PUSH_INTERVAL if pushes else None, push_speed=push_speed,
                                 reward_scales=dict(reward_scales) if reward_scales else None)
    family = object()  # the episodes of this sampler share types, files and structure
    own_controllers = 'controllers' in template_robot.model_fields_set and template_robot.controllers is not None

    def episode(rng: np.random.Generator, index: int) -> Any:
        # (draws and arithmetic in Python floats: the numbers numpy's calls gave, at a fraction of the cost)
        yaw = _uniform(rng, -math.pi, math.pi)
        pose: dict[str, Any] = {'position': (0.0, 0.0, start_height), 'orientation': (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))}
        if own_controllers:
            pose['controllers'] = [controller.model_copy() for controller in template_robot.controllers]
        robot = template_robot.model_copy(update=pose)
        steering: dict[str, Any] = {}
        if rng.random() < GOAL_SHARE:
            goals, x, y = [], 0.0, 0.0
            for _ in range(int(rng.integers(GOAL_COUNT[0], GOAL_COUNT[1] + 1))):
                angle = _uniform(rng, -math.pi, math.pi)
                distance = _uniform(rng, *GOAL_DISTANCE)
                x, y = x + distance * math.cos(angle), y + distance * math.sin(angle)
                goals.append((x, y))
            # move_to_point's tolerance or move_along_path's (InternUtopia's H1 config)
            steering = {'goals': goals, 'goal_speed': _uniform(rng, *goal_speed), 'goal_tolerance': _pick(rng, GOAL_TOLERANCES)}
        else:
            commands, start = [], 0.0
            while start < seconds:
                commands.append((start, *random_command(rng, lateral_share, sidestep_share, ranges, stand_share)))
                start += _uniform(rng, *COMMAND_HOLD)
            steering = {'commands': commands}
        if template.reward_scales is not None:
            steering['reward_scales'] = dict(template.reward_scales)
        if template.push_interval is not None:  # (its pushes follow the sampler's seed, as its commands do)
            steering['push_seed'] = int(rng.integers(2 ** 63))
        return template.model_copy(update={'robots': [robot], **steering})

    def sample(rng: np.random.Generator) -> FreshEpisodes:
        return FreshEpisodes([episode(rng, i) for i in range(batch)], family=family)

    sample.first = episode(np.random.default_rng(0), 0)  # type: ignore[attr-defined]
    return sample


__all__ = ['ACTION_REPEAT', 'COMMAND_RANGES', 'PHYSICS_DT', 'STAND_SHARE', 'random_command', 'walk_sampler']
