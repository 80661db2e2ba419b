"""Measure a walking policy (H1's by default, ``--robot aliengo`` or ``--robot gr1`` for theirs) the way a
navigation user would use it, over many slots at once.

Six measurements, all but tracking over ``--num-envs`` slots of one world:

1. **paths**: the user's example's path ``(1, 0) -> (1, 1) -> (3, 4)`` with ``move_along_path``
   (InternUtopia's H1 config, tolerance 0.1 m), from a random heading, within ``--seconds``;
2. **point goals**: a goal 1-4 m away in a random direction with ``move_to_point``
   (tolerance 0.05 m as configured, success counted within the path tolerance, 0.1 m);
3. **falls**: random velocity commands and goal points (the training distribution) for
   ``--seconds`` each, on flat ground without pushes (the issue's measure), and again with the
   training's random pushes (a robustness figure); the falls are also split between episodes
   with a lateral command faster than :data:`FAST_LATERAL` and the others, and given for the
   episodes that steer through goal points (``goal_points``, a subset of the others);
4. **weight on the feet**: the soles' normal force over the falls run, as a share of H1's weight;
5. **tracking**: one slot per command of :data:`TRACKED_COMMANDS` held for ``--seconds``; the
   velocity reached (pelvis heading frame), averaged after the first third;
6. **standing**: every slot told to stand (``move_by_speed`` ``[0, 0, 0]``, as a user stops a robot)
   for ``--seconds``, half from the spawn pose, half after walking for 3 s (forward and turning at
   random speeds, as the navigation controllers drive): falls, and how far the base drifts from
   where it stood 2 s after it was told to stand (a stop from 1 m/s ramps down over a second and
   finishes its stride) to the end, and how far it turns meanwhile.

A slot has fallen when the robot's rewards module says so (``fallen``: H1's pelvis below 0.6 m or
tilted past about 50 degrees; Aliengo's base below 0.2 m or past 60 degrees; GR1's as its rewards
module says). The result
is printed and, with ``--json``, written as JSON. ``--measures`` picks some of them (``tracking``
alone screens a training run's checkpoints in seconds). The policy runs as the walker runs it,
averaged with its mirror image (:class:`~internutopia_extension.robots.h1_locomotion.walker.OnnxPolicy`),
and with the walker's stand hold where the robot has one (GR1: :mod:`internutopia_extension.robots.stand_hold`);
``--network-only`` measures the network without its mirror mean, ``--no-stand-hold`` without the hold. Run::

    python -m internutopia_extension.robots.h1_locomotion.policy.evaluate --policy runs/h1_walk/h1_walk.onnx
    python -m internutopia_extension.robots.h1_locomotion.policy.evaluate --robot aliengo --policy runs/aliengo_walk/aliengo_walk.onnx
    python -m internutopia_extension.robots.h1_locomotion.policy.evaluate --robot gr1 \
        --policy internutopia_extension/robots/gr1_locomotion/policy/run/gr1_walk.onnx
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

#: The user's example's path (``vec_env_example.py``).
SEED_PATH = [(1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (3.0, 4.0, 0.0)]
#: Success tolerance (m): ``move_along_path``'s threshold in InternUtopia's H1 and Aliengo configs.
TOLERANCE = 0.1
GRAVITY = 9.81
#: A lateral command faster than this (m/s) counts an episode as a lateral one in the falls' breakdown.
FAST_LATERAL = 0.25


@dataclass(frozen=True)
class EvaluatedRobot:
    """What the measurements need to know of one walking robot."""

    #: The robot's name in observations and actions (its config's default ``name``).
    name: str
    #: Module with the robot config class and its controller configs (InternUtopia's layout).
    configs: str
    config_class: str
    #: Height its base starts at (m).
    start_height: float
    #: The whole robot's mass (kg, the compiled walking model's), for the weight on the feet.
    mass: float
    #: ``module:function`` of its training episodes' sampler.
    sampler: str
    #: The commands whose tracking is reported: (forward, lateral, yaw rate), the ranges' corners.
    tracked_commands: tuple[tuple[float, float, float], ...]


#: The commands tracked for the humanoids (H1's command ranges, which GR1 trains with too).
HUMANOID_COMMANDS = ((0.0, 0.0, 0.0), (0.3, 0.0, 0.0), (0.6, 0.0, 0.0), (1.0, 0.0, 0.0), (-0.3, 0.0, 0.0),
                     (0.0, 0.25, 0.0), (0.0, -0.25, 0.0), (0.0, 0.5, 0.0), (0.0, -0.5, 0.0), (0.5, 0.3, 0.0),
                     (0.0, 0.0, 1.0), (0.0, 0.0, -1.0), (0.6, 0.0, 0.5))

ROBOTS: dict[str, EvaluatedRobot] = {
    'h1': EvaluatedRobot('h1', 'internutopia_extension.configs.robots.h1', 'H1RobotCfg', 1.0, 51.4,
                         'internutopia_extension.robots.h1_locomotion.episodes:walk_sampler',
                         HUMANOID_COMMANDS),
    'aliengo': EvaluatedRobot('aliengo', 'internutopia_extension.configs.robots.aliengo', 'AliengoRobotCfg', 0.37, 24.6,
                              'internutopia_extension.robots.aliengo_locomotion.episodes:aliengo_walk_sampler',
                              ((0.0, 0.0, 0.0), (0.5, 0.0, 0.0), (1.0, 0.0, 0.0), (1.2, 0.0, 0.0), (-0.5, 0.0, 0.0),
                               (0.0, 0.3, 0.0), (0.0, -0.3, 0.0), (0.0, 0.6, 0.0), (0.0, -0.6, 0.0), (0.8, 0.3, 0.0),
                               (0.0, 0.0, 1.0), (0.0, 0.0, -1.0), (0.0, 0.0, 2.0), (0.0, 0.0, -2.0), (1.0, 0.0, 1.0))),
    # GR1 as users drive it (its hands on their servos, not the trainer's welded ones); H1's command ranges.
    'gr1': EvaluatedRobot('gr1', 'internutopia_extension.configs.robots.gr1', 'GR1RobotCfg', 0.95, 54.9,
                          'internutopia_extension.robots.gr1_locomotion.episodes:gr1_walk_sampler',
                          HUMANOID_COMMANDS),
}
#: H1's tracked commands (kept under their old name).
TRACKED_COMMANDS = list(ROBOTS['h1'].tracked_commands)
#: The measurements, by the name each has in the result.
MEASURES = ('paths', 'point_goals', 'random_commands', 'random_commands_pushed', 'tracking', 'standing')
#: Seconds the standing measure lets a robot settle after it is told to stand, before it measures the drift.
SETTLE_SECONDS = 2.0
#: Seconds the standing measure's odd slots walk (a random command) before they are told to stand.
WALK_BEFORE_STANDING = 3.0
#: The range of the standing measure's walks (forward, lateral, yaw rate): what the navigation
#: controllers send (``move_to_point`` and ``move_along_path`` walk forward and turn).
NAVIGATION_COMMAND_LOW, NAVIGATION_COMMAND_HIGH = (0.0, 0.0, -1.0), (1.0, 0.0, 1.0)


def _env(tasks: list, num_envs: int, physics_dt: float) -> Any:
    from internutopia.core.config import Config, SimConfig
    from internutopia.core.vec_env import Env

    config = Config(simulator=SimConfig(physics_dt=physics_dt, rendering_dt=physics_dt), env_num=num_envs,
                    env_offset_size=12.0, metrics_save_path='none', task_configs=tasks)
    env = Env(config)
    env.reset()
    return env


def _walking(config_class: type, policy: str, symmetric: bool, stand_hold: bool) -> dict[str, Any]:
    """The config fields that run ``policy`` as asked (the stand hold only where the robot has one)."""
    fields: dict[str, Any] = {'walking_policy': policy, 'walking_policy_symmetric': symmetric}
    if 'walking_stand_hold' in config_class.model_fields:  # type: ignore[attr-defined]
        fields['walking_stand_hold'] = stand_hold
    return fields


def _robot(robot: EvaluatedRobot, policy: str, rng: np.random.Generator, controllers: list, symmetric: bool,
           stand_hold: bool = True) -> Any:
    config_class = getattr(importlib.import_module(robot.configs), robot.config_class)
    yaw = float(rng.uniform(-np.pi, np.pi))
    # H1 and GR1 have a carried mode too (GR1's is its default); Aliengo always walks.
    mode = {'locomotion': 'walking'} if 'locomotion' in config_class.model_fields else {}
    return config_class(**mode, **_walking(config_class, policy, symmetric, stand_hold), position=(0.0, 0.0, robot.start_height),
                        orientation=(float(np.cos(yaw / 2)), 0.0, 0.0, float(np.sin(yaw / 2))), controllers=controllers)


def _fallen(env: Any, name: str) -> np.ndarray:
    group = env.runner.slot_robots[0][name]
    return group.locomotion_rewards.fallen(group.walker.state(np.arange(env.env_num)))


def _user_driven_env(evaluated: EvaluatedRobot, policy: str, num_envs: int, physics_dt: float, seed: int,
                     symmetric: bool, stand_hold: bool = True) -> tuple[Any, np.random.Generator]:
    """``num_envs`` slots of the robot with its navigation controllers, each at a random heading."""
    from internutopia.macros import gm
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    configs = importlib.import_module(evaluated.configs)
    rng = np.random.default_rng(seed)
    controllers = [configs.move_by_speed_cfg, configs.move_to_point_cfg, configs.move_along_path_cfg]
    tasks = [SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd',
                                    robots=[_robot(evaluated, policy, rng, controllers, symmetric, stand_hold)])
             for _ in range(num_envs)]
    return _env(tasks, num_envs, physics_dt), rng


def navigate(policy: str, num_envs: int, seconds: float, physics_dt: float, goal_kind: str, seed: int,
             symmetric: bool = True, robot: str = 'h1', stand_hold: bool = True) -> dict[str, Any]:
    """Path or point-goal success and falls (see the module docstring)."""
    env, rng = _user_driven_env(ROBOTS[robot], policy, num_envs, physics_dt, seed, symmetric, stand_hold)
    actions: list[dict[str, Any]]
    if goal_kind == 'path':
        goals = np.tile(np.array(SEED_PATH[-1][:2]), (num_envs, 1))
        actions = [{robot: {'move_along_path': [SEED_PATH]}}] * num_envs
    else:
        angle, distance = rng.uniform(-np.pi, np.pi, num_envs), rng.uniform(1.0, 4.0, num_envs)
        goals = np.stack([distance * np.cos(angle), distance * np.sin(angle)], axis=1)
        actions = [{robot: {'move_to_point': [[float(g[0]), float(g[1]), 0.0]]}} for g in goals]
    fell = np.zeros(num_envs, dtype=bool)
    reached = np.zeros(num_envs, dtype=bool)
    steps = int(round(seconds / physics_dt))
    for i in range(steps):
        obs, *_ = env.step(actions)
        if i % 20 == 0 or i == steps - 1:
            fell |= _fallen(env, robot)
            position = np.array([o[robot]['position'][:2] for o in obs])
            reached |= (np.linalg.norm(position - goals, axis=1) < TOLERANCE) & ~fell
    env.close()
    return {'success': float(np.mean(reached)), 'fall_rate': float(np.mean(fell)), 'episodes': num_envs}


def standing(policy: str, num_envs: int, seconds: float, physics_dt: float, seed: int, symmetric: bool = True,
             robot: str = 'h1', stand_hold: bool = True) -> dict[str, Any]:
    """Falls and drift of robots told to stand (see the module docstring): the even slots from their
    spawn pose, the odd ones after walking a random command for :data:`WALK_BEFORE_STANDING` seconds.
    The drift is measured from :data:`SETTLE_SECONDS` after the stop: with ``seconds`` no longer than
    that, only the falls are reported (and a ``note`` says why)."""
    env, rng = _user_driven_env(ROBOTS[robot], policy, num_envs, physics_dt, seed, symmetric, stand_hold)
    stand = {robot: {'move_by_speed': [0.0, 0.0, 0.0]}}
    after_walking = np.arange(num_envs) % 2 == 1
    speeds = rng.uniform(NAVIGATION_COMMAND_LOW, NAVIGATION_COMMAND_HIGH, (num_envs, 3))
    walk = [{robot: {'move_by_speed': [float(v) for v in speed]}} if walks else stand
            for speed, walks in zip(speeds, after_walking, strict=True)]
    stop, settle = int(round(WALK_BEFORE_STANDING / physics_dt)), int(round(SETTLE_SECONDS / physics_dt))
    steps = stop + int(round(seconds / physics_dt))
    fell = np.zeros(num_envs, dtype=bool)
    settled, settled_heading = np.zeros((num_envs, 2)), np.zeros(num_envs)

    def heading(observations: list) -> np.ndarray:
        quat = np.array([o[robot]['orientation'] for o in observations])
        return 2.0 * np.arctan2(quat[:, 3], quat[:, 0])

    for i in range(steps):
        obs, *_ = env.step(walk if i < stop else [stand] * num_envs)
        if i % 20 == 0 or i == steps - 1:
            fell |= _fallen(env, robot)
        if i == stop + settle:
            settled, settled_heading = np.array([o[robot]['position'][:2] for o in obs]), heading(obs)
    drift = np.linalg.norm(np.array([o[robot]['position'][:2] for o in obs]) - settled, axis=1)
    turned = np.abs(np.angle(np.exp(1j * (heading(obs) - settled_heading))))
    env.close()
    span = seconds - SETTLE_SECONDS

    def summary(chosen: np.ndarray) -> dict[str, Any]:
        upright = chosen & ~fell
        if not upright.any() or span <= 0:  # (none up, or no settled pose to measure the drift from)
            return {'fall_rate': float(np.mean(fell[chosen])), 'episodes': int(chosen.sum())}
        return {'fall_rate': float(np.mean(fell[chosen])), 'episodes': int(chosen.sum()),
                'drift_mean_m': float(np.mean(drift[upright])), 'drift_max_m': float(np.max(drift[upright])),
                'drift_speed_mean_m_s': float(np.mean(drift[upright])) / span,
                'turn_mean_rad': float(np.mean(turned[upright])), 'turn_max_rad': float(np.max(turned[upright]))}

    result = {'seconds': seconds, 'from_spawn': summary(~after_walking), 'after_walking': summary(after_walking)}
    if span <= 0:
        result['note'] = (f'no drift: it is measured from {SETTLE_SECONDS:g} s after the stop to the end, and the run '
                          f'stood {seconds:g} s')
    return result


def falls_and_weight(policy: str, num_envs: int, seconds: float, seed: int, pushes: bool = False,
                     symmetric: bool = True, robot: str = 'h1', stand_hold: bool = True) -> dict[str, Any]:
    """Falls under random commands (with the training's pushes if ``pushes``), and the soles'
    share of the weight while walking."""
    from internutopia_extension.robots.h1_locomotion.episodes import PHYSICS_DT

    evaluated = ROBOTS[robot]
    module, function = evaluated.sampler.split(':')
    sampler = getattr(importlib.import_module(module), function)(batch=num_envs, seconds=seconds, pushes=pushes)
    tasks = sampler(np.random.default_rng(seed))
    for task in tasks:
        config = task.robots[0]
        # The policy walks instead of the training's leg actions (the sampler's only controller).
        for field, value in _walking(type(config), policy, symmetric, stand_hold).items():
            setattr(config, field, value)
        config.controllers = []
    env = _env(tasks, num_envs, PHYSICS_DT)
    weight = evaluated.mass * GRAVITY
    group = env.runner.slot_robots[0][robot]
    slots = np.arange(num_envs)
    fell = np.zeros(num_envs, dtype=bool)
    weight_share: list[float] = []
    velocity_error: list[float] = []
    started = time.perf_counter()
    for i in range(int(round(seconds / PHYSICS_DT))):
        env.step_arrays({})
        if i % 20 == 0:
            state = group.walker.state(slots)
            fell |= _fallen(env, robot)
            upright = ~fell
            if upright.any():
                weight_share.append(float(np.mean(state.touch[upright].sum(axis=1)) / weight))
                velocity_error.append(float(np.mean(np.linalg.norm(state.command[upright, :2] - state.lin_vel[upright, :2], axis=1))))
    env.close()
    # Lateral stepping is the policy's weak point: report the falls of episodes with and without it.
    lateral = np.array([any(abs(command[2]) > FAST_LATERAL for command in (task.commands or [])) for task in tasks])
    # Goal-point episodes are held at their last goal for the rest of the run: a policy that cannot
    # turn in place without drifting circles there, and falls there, under commands it handles in training.
    goal_points = np.array([bool(task.goals) for task in tasks])
    splits = {name: {'fall_rate': float(np.mean(fell[chosen])) if chosen.any() else float('nan'), 'episodes': int(chosen.sum())}
                  for name, chosen in (('fast_lateral', lateral), ('no_fast_lateral', ~lateral), ('goal_points', goal_points))}
    return {'fall_rate': float(np.mean(fell)), **splits, 'weight_on_soles': float(np.mean(weight_share)) if weight_share else 0.0,
            'velocity_error': float(np.mean(velocity_error)) if velocity_error else float('nan'),
            'episodes': num_envs, 'seconds': seconds, 'wall_s': round(time.perf_counter() - started, 1)}


def tracking(policy: str, seconds: float, seed: int, symmetric: bool = True, robot: str = 'h1',
             stand_hold: bool = True) -> list[dict[str, Any]]:
    """Each of the robot's tracked commands held by one slot: the mean velocity reached."""
    from internutopia.macros import gm
    from internutopia_extension.configs.tasks import LocomotionTaskCfg
    from internutopia_extension.robots.h1_locomotion.episodes import PHYSICS_DT

    evaluated = ROBOTS[robot]
    commands = evaluated.tracked_commands
    rng = np.random.default_rng(seed)
    steps = int(round(seconds / PHYSICS_DT))
    tasks = [LocomotionTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', robots=[_robot(evaluated, policy, rng, [], symmetric, stand_hold)],
                               commands=[(0.0, *command)], max_steps=steps + 1, robot=robot) for command in commands]
    env = _env(tasks, len(tasks), PHYSICS_DT)
    group = env.runner.slot_robots[0][robot]
    slots = np.arange(len(tasks))
    velocity: list[np.ndarray] = []
    fell = np.zeros(len(tasks), dtype=bool)
    for i in range(steps):
        env.step_arrays({})
        if i % 20 == 0:
            fell |= _fallen(env, robot)
            if i >= steps // 3:
                state = group.walker.state(slots)
                velocity.append(np.concatenate([state.lin_vel[:, :2], state.ang_vel[:, 2:]], axis=1))
    env.close()
    reached = np.mean(velocity, axis=0) if velocity else np.full((len(tasks), 3), np.nan)
    return [{'command': list(command), 'reached': [round(float(v), 3) for v in row], 'fell': bool(f)}
            for command, row, f in zip(commands, reached, fell, strict=True)]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robot', choices=sorted(ROBOTS), default='h1', help='the walking robot (default h1)')
    parser.add_argument('--policy', default='default', help="'default' (the shipped policy) or the path of an ONNX policy")
    parser.add_argument('--num-envs', type=int, default=64)
    parser.add_argument('--seconds', type=float, default=60.0)
    parser.add_argument('--physics-dt', type=float, default=1 / 240, help="the navigation runs' physics step (the user's example's)")
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--json', help='write the results here')
    parser.add_argument('--network-only', action='store_true',
                        help='run the network as it is, not averaged with its mirror image (walking_policy_symmetric=False)')
    parser.add_argument('--no-stand-hold', action='store_true',
                        help="the policy alone told to stand, without its walker's stand hold (GR1's; walking_stand_hold=False)")
    parser.add_argument('--measures', default=','.join(MEASURES),
                        help=f'comma-separated measurements to take (default all: {",".join(MEASURES)}); e.g. '
                             'tracking alone screens a checkpoint in seconds')
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.measures.split(',') if name.strip()]
    unknown = sorted(set(chosen) - set(MEASURES))
    if unknown or not chosen:
        parser.error(f'--measures {args.measures!r}: unknown {unknown}; valid measurements: {", ".join(MEASURES)}')
    if args.num_envs < 1:
        parser.error(f'--num-envs must be >= 1; got {args.num_envs}')
    if not (args.seconds > 0 and args.physics_dt > 0):
        parser.error(f'--seconds and --physics-dt must be > 0; got {args.seconds:g} and {args.physics_dt:g}')
    if args.policy != 'default' and not os.path.isfile(args.policy):
        parser.error(f"--policy {args.policy}: no such file ('default' is the shipped policy)")
    if args.json:  # (written after the measurements, which may take long: a path it cannot go to is refused now)
        folder = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            parser.error(f'--json {args.json}: the folder {folder} does not exist or is not writable')
    how = {'symmetric': not args.network_only, 'robot': args.robot, 'stand_hold': not args.no_stand_hold}
    run = {
        'paths': lambda: navigate(args.policy, args.num_envs, args.seconds, args.physics_dt, 'path', args.seed, **how),
        'point_goals': lambda: navigate(args.policy, args.num_envs, args.seconds, args.physics_dt, 'point', args.seed + 1, **how),
        'random_commands': lambda: falls_and_weight(args.policy, args.num_envs, args.seconds, args.seed + 2, **how),
        'random_commands_pushed': lambda: falls_and_weight(args.policy, args.num_envs, args.seconds, args.seed + 3, pushes=True,
                                                           **how),
        'tracking': lambda: tracking(args.policy, min(args.seconds, 15.0), args.seed + 4, **how),
        'standing': lambda: standing(args.policy, args.num_envs, args.seconds, args.physics_dt, args.seed + 5, **how),
    }
    result = {name: run[name]() for name in MEASURES if name in chosen}
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, 'w', encoding='utf-8') as stream:
            json.dump(result, stream, indent=2)
    return result


if __name__ == '__main__':
    main()
