"""Point-goal navigation with a Jetbot over a queue of mixed-scene episodes.

Runs ``configs/jetbot_point_nav.yaml`` (32 episodes over the flat ground, ``two_rooms.usda`` and
``office.xml``, 8 slots) with an oracle policy: when a slot starts an episode, plan a path on the
scene's free-space grid (``internutopia.core.episodes.FreeSpace``) and follow it with the Jetbot's
``move_along_path`` controller. Each finished episode is one JSON line in the config's
``metrics_save_path``; ``env.close()`` prints the run summary (success, SPL, episodes/s).

Run from the repository root (the YAML's scene paths are relative to it)::

    python examples/point_nav.py [--config configs/jetbot_point_nav.yaml] [--episodes 8]
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from internutopia.core.config import Config
from internutopia.core.episodes import FreeSpace
from internutopia.core.vec_env import Env
from internutopia_extension.configs.tasks import PointNavTaskCfg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--config', default='configs/jetbot_point_nav.yaml')
    parser.add_argument('--episodes', type=int, default=None, help='run only the first N episodes')
    args = parser.parse_args()
    if args.episodes is not None and args.episodes < 1:
        parser.error(f'--episodes must be >= 1; got {args.episodes}')
    try:
        config = Config.from_yaml(args.config)
    except ValueError as exc:  # (a ConfigFileError: the file's problems, each with its line)
        parser.error(str(exc))
    if not all(isinstance(task, PointNavTaskCfg) for task in config.task_configs):
        parser.error(f'{args.config}: this example drives to point goals; every episode must be a PointNavTaskCfg')
    if args.episodes is not None:
        config = config.update(task_configs=config.task_configs[:args.episodes])

    planners: dict = {}
    env = Env(config)
    actions: list = [None] * env.env_num

    def plan(slot: int, obs: dict, task) -> None:
        if obs is None:
            actions[slot] = None
            return
        space = planners.get(task.scene_asset_path)
        if space is None:
            space = planners[task.scene_asset_path] = FreeSpace(task.scene_asset_path)
        robot = task.robots[0].name
        waypoints = space.shortest_path(obs[robot]['position'][:2], task.goal[:2])[1:]
        path = [(float(x), float(y), 0.0) for x, y in waypoints] + [tuple(task.goal)]
        actions[slot] = {robot: {'move_along_path': [path]}}

    obs, info = env.reset()
    for slot, (o, task) in enumerate(zip(obs, info, strict=True)):
        plan(slot, o, task)
    for step in itertools.count():
        obs, reward, terminated, truncated, info = env.step(actions)
        # Slots whose episode ended on this step (terminated is also True where no episode runs).
        ended = [slot for slot in range(env.env_num) if terminated[slot] and obs[slot] is not None]
        for slot in ended:
            print(f'step {step}: slot {slot} episode {info[slot]["episode_index"]} {info[slot]["metrics"]}')
        if ended:
            new_obs, new_info = env.reset(ended)
            for slot, o, task in zip(ended, new_obs, new_info, strict=True):
                plan(slot, o, task)
        if env.finished:
            break
    env.close()


if __name__ == '__main__':
    np.set_printoptions(precision=3, suppress=True)
    main()
