"""Pick and place with Franka arms: every slot its own cube and goal, a scripted policy.

Each episode (a ``ManipulationTaskCfg`` whose ``target`` names the cube and whose
``goal_position`` says where the cube must end up) starts a Panda at home with a 5 cm cube on the
floor in front of it, at a random position and yaw, and a translucent marker at a random goal.
The scripted policy (:class:`internutopia_extension.policies.ScriptedPickPlace`) approaches,
grasps, lifts, carries, lowers and releases through the ``arm_ik_controller`` (IK targets,
env-local) and the ``gripper_controller`` (``['open']``/``['close']``). By default it sends each
waypoint at once, as InternUtopia's scripts and InternManip's policies do (the arm moves at its
joint speed and acceleration limits, the hand holds the cube with the Franka Hand's 70 N);
``--stream`` streams a smooth path instead. An episode ends with success once the cube rests
within ``success_distance`` of its goal and the gripper has let go; the example checks that every
episode succeeded, prints each one's metrics, and writes them to the results file.

``--physics-dt`` sets the env step (default 1/240 s; InternManip's GenManip benchmark steps at 1/30
or 1/60 s); ``--table`` stands the arm and the cubes on a 0.75 m lab table instead of the floor.

Run headless from the repository root (needs the ``franka`` extra); ``--config`` runs the
episodes of a YAML config (``configs/franka_pick_place.yaml``: 4 fixed ones) instead::

    python examples/franka_pick_place.py [--episodes 16] [--slots 16] [--stream] [--physics-dt 0.0333] [--table]
    python examples/franka_pick_place.py --config configs/franka_pick_place.yaml
    python examples/franka_pick_place.py --config configs/franka_internmanip.yaml   # tables, cameras, 1/30 s
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia.macros import gm
from internutopia_extension import import_extensions
from internutopia_extension.configs.objects import DynamicCubeCfg, TableCfg, VisualCubeCfg
from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg
from internutopia_extension.configs.tasks import ManipulationTaskCfg
from internutopia_extension.policies import ScriptedPickPlace

PHYSICS_DT = 1 / 240
#: Shortest distance (m) from a random cube to its goal.
MIN_CARRY = 0.15


def episode(index: int, cube: tuple, goal: tuple, yaw: float = 0.0, table: bool = False) -> ManipulationTaskCfg:
    """A pick-and-place episode: a 5 cm cube at ``cube`` (turned by ``yaw``) to bring to ``goal``
    (both relative to the arm's base); with ``table`` the arm and the cube stand on a lab table."""
    turn = (float(np.cos(yaw / 2)), 0.0, 0.0, float(np.sin(yaw / 2)))
    tables = [TableCfg(name='table', position=(0.4, 0.0, 0.0))] if table else []
    lift = np.array([0.0, 0.0, tables[0].top_height if tables else 0.0])
    cube, goal = tuple(float(v) for v in np.add(cube, lift)), tuple(float(v) for v in np.add(goal, lift))
    return ManipulationTaskCfg(
        scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd',
        robots=[FrankaRobotCfg(position=tuple(lift), controllers=[arm_ik_cfg, gripper_cfg])],
        objects=[
            *tables,
            DynamicCubeCfg(name='cube', position=cube, orientation=turn, scale=(0.05, 0.05, 0.05), color=(0.9, 0.2, 0.1)),
            VisualCubeCfg(name='goal_marker', position=goal, scale=(0.05, 0.05, 0.05), color=(0.1, 0.8, 0.2, 0.3)),
        ],
        prompt='put the red cube on the green marker', target='cube', goal_position=goal,
        success_distance=0.03, episode_idx=index, max_steps=3000,
    )


def random_episodes(count: int, seed: int = 0, table: bool = False) -> list[ManipulationTaskCfg]:
    """``count`` episodes with cubes and goals drawn in front of the arm (0.35 to 0.65 m away, within
    40 degrees either side, goals at least :data:`MIN_CARRY` from their cubes) and random cube yaws."""
    rng = np.random.default_rng(seed)

    def spot() -> tuple[float, float, float]:
        reach, bearing = rng.uniform(0.35, 0.65), rng.uniform(-0.7, 0.7)
        return (float(reach * np.cos(bearing)), float(reach * np.sin(bearing)), 0.025)

    episodes = []
    for index in range(count):
        cube, goal = spot(), spot()
        while np.hypot(goal[0] - cube[0], goal[1] - cube[1]) < MIN_CARRY:  # a real carry, not a cube already there
            goal = spot()
        episodes.append(episode(index, cube, goal, float(rng.uniform(-np.pi, np.pi)), table))
    return episodes


def run_episodes(episodes: list, env_num: int, jump: bool = True, results: str = 'none',
                 physics_dt: float = PHYSICS_DT) -> dict[int, dict]:
    """Run ``episodes`` on ``env_num`` slots with the scripted policy; each episode's metrics by index."""
    import_extensions()
    config = Config(simulator=SimConfig(physics_dt=physics_dt, rendering_dt=physics_dt, headless=True), env_num=env_num, env_offset_size=3.0,
                    metrics_save_path=results, task_configs=episodes)
    return run(config, jump)


def run(config: Config, jump: bool) -> dict[int, dict]:
    """Run every episode of ``config``; each one's metrics by episode index."""
    env = Env(config)
    policy = ScriptedPickPlace(physics_dt=config.simulator.physics_dt, jump=jump)
    obs, infos = env.reset()
    slots = np.arange(env.env_num)
    started = [slot for slot in slots if infos[slot] is not None]
    policy.reset(np.array(started), np.array([infos[slot].goal_position for slot in started]))
    # The object each slot's episode moves (its task's target; configs may name it anything).
    target = {slot: infos[slot].target for slot in started}
    results: dict[int, dict] = {}
    while len(results) < len(config.task_configs):
        active = [i for i in slots if obs[i] is not None]
        cube = np.array([obs[i]['objects'][target[i]]['position'] for i in active])
        quat = np.array([obs[i]['objects'][target[i]]['orientation'] for i in active])
        tcp = np.array([obs[i]['franka']['controllers']['arm_ik_controller']['eef_position'] for i in active])
        targets, grip = policy.act(np.array(active), cube, quat, tcp)
        actions: list = [None] * env.env_num
        for row, slot in enumerate(active):
            actions[slot] = {'franka': {'arm_ik_controller': [targets[row, :3], targets[row, 3:]],
                                        'gripper_controller': ['open' if grip[row] > 0.5 else 'close']}}
        obs, _, terminated, _, info = env.step(actions)
        ended = [slot for slot in active if terminated[slot]]
        for slot in ended:
            results[info[slot]['episode_index']] = info[slot]['metrics']
        if ended:  # next episodes from the queue, if any are left (a reset costs about a step)
            new_obs, new_infos = env.reset(ended)
            for slot, slot_obs, slot_info in zip(ended, new_obs, new_infos, strict=True):
                obs[slot] = slot_obs  # None once the queue is out: the slot stays empty
                if slot_info is not None:
                    target[slot] = slot_info.target
                    policy.reset(np.array([slot]), np.array([slot_info.goal_position]))
    env.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--config', default=None, help='a YAML config to run instead of random episodes')
    # (defaults None: given with --config, they are refused rather than silently ignored)
    parser.add_argument('--episodes', type=int, default=None, help='random episodes to run (default 16)')
    parser.add_argument('--slots', type=int, default=None, help='env slots (default 16)')
    parser.add_argument('--seed', type=int, default=None, help='seed of the random episodes')
    parser.add_argument('--stream', action='store_true', help='stream a smooth path instead of jumping to each waypoint')
    parser.add_argument('--physics-dt', type=float, default=None, help='seconds per env step (default 1/240)')
    parser.add_argument('--table', action='store_true', help='stand the arm and the cubes on a lab table')
    parser.add_argument('--results', default=None, help="results file ('none': none; default results/franka_pick_place.jsonl)")
    args = parser.parse_args()
    random_only = {'--episodes': args.episodes, '--slots': args.slots, '--seed': args.seed, '--physics-dt': args.physics_dt,
                   '--table': args.table or None, '--results': args.results}
    if args.config is not None:
        given = [flag for flag, value in random_only.items() if value is not None]
        if given:
            parser.error(f"{', '.join(given)}: for the random episodes only; a --config's episodes run as its file says")
    else:
        args.episodes = 16 if args.episodes is None else args.episodes
        args.slots = 16 if args.slots is None else args.slots
        args.seed = 0 if args.seed is None else args.seed
        args.physics_dt = PHYSICS_DT if args.physics_dt is None else args.physics_dt
        args.results = 'results/franka_pick_place.jsonl' if args.results is None else args.results
        if args.episodes < 1 or args.slots < 1:
            parser.error('--episodes and --slots must be >= 1')
        if not args.physics_dt > 0:
            parser.error(f'--physics-dt must be > 0 seconds; got {args.physics_dt}')
        if args.results not in ('none', 'console'):
            try:  # before the run, not when its first episode ends
                os.makedirs(os.path.dirname(os.path.abspath(args.results)), exist_ok=True)
                with open(args.results, 'a', encoding='utf-8'):
                    pass
            except OSError as exc:
                parser.error(f'--results {args.results}: cannot be written: {exc.strerror or exc}')
    import_extensions()
    if args.config is not None:
        try:
            config = Config.from_yaml(args.config)
        except ValueError as exc:  # (a ConfigFileError: the file's problems, each with its line)
            parser.error(str(exc))
        if not all(isinstance(task, ManipulationTaskCfg) and task.goal_position is not None for task in config.task_configs):
            parser.error(f'{args.config}: this example picks and places; every episode must be a ManipulationTaskCfg '
                         'with a goal_position')
        results = run(config, jump=not args.stream)
    else:
        results = run_episodes(random_episodes(args.episodes, args.seed, args.table), args.slots, jump=not args.stream,
                               results=args.results, physics_dt=args.physics_dt)
    for index in sorted(results):
        metrics = results[index]
        print(f"episode {index}: success={metrics['success']} distance={metrics['distance_to_goal']:.4f} m "
              f"steps={metrics['steps']} dropped={metrics['dropped']}")
    failed = [index for index, metrics in results.items() if not metrics['success']]
    if failed:  # (not an assert: the check holds under python -O too)
        sys.exit(f'episodes {failed} did not place their cube')
    print(f'all {len(results)} cubes placed' + ('' if args.config else f' (results: {args.results})'))


if __name__ == '__main__':
    main()
