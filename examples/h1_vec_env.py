"""The user's vec-env example (two H1s following a path), bounded, checking that both arrive.

Run: ``MUJOCO_GL=egl python examples/h1_vec_env.py`` (add ``--robot g1`` for the walking G1,
``--backend warp`` for MuJoCo Warp on a GPU or, with ``--device cpu``, on Warp's CPU device).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from internutopia.core.config import Config, SimConfig
from internutopia.core.util import has_display
from internutopia.core.vec_env import Env
from internutopia.macros import gm
from internutopia_extension import import_extensions

GOAL = np.array([3.0, 4.0])


def build_config(robot: str, env_num: int, backend: str = 'mujoco', device: str | None = None) -> Config:
    """The user's scenario: ``env_num`` slots, each an empty scene with one humanoid."""
    if robot == 'g1':
        from internutopia_extension.configs.robots.g1 import G1RobotCfg as RobotCfg
        from internutopia_extension.configs.robots.g1 import move_along_path_cfg, move_by_speed_cfg, rotate_cfg
        position = (0.0, 0.0, 0.757)
    else:
        from internutopia_extension.configs.robots.h1 import H1RobotCfg as RobotCfg
        from internutopia_extension.configs.robots.h1 import move_along_path_cfg, move_by_speed_cfg, rotate_cfg
        position = (0.0, 0.0, 1.05)
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    robot_cfg = RobotCfg(position=position, controllers=[move_by_speed_cfg, move_along_path_cfg, rotate_cfg])
    task = SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', scene_scale=(0.01, 0.01, 0.01),
                                  robots=[robot_cfg])
    return Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240, use_fabric=False, headless=not has_display(),
                                      backend=backend, device=device),
                  env_num=env_num, env_offset_size=10, task_configs=[task] * env_num)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--robot', choices=['h1', 'g1'], default='h1')
    parser.add_argument('--env-num', type=int, default=2)
    parser.add_argument('--max-steps', type=int, default=8000)
    parser.add_argument('--backend', choices=['mujoco', 'warp'], default='mujoco', help='physics backend (warp: the warp extra)')
    parser.add_argument('--device', default=None, help='device of the warp backend: cpu or cuda:N (default: a GPU if any)')
    args = parser.parse_args()
    if args.env_num < 1 or args.max_steps < 1:
        parser.error('--env-num and --max-steps must be >= 1')
    tolerance = 0.2 if args.robot == 'h1' else 0.3

    import_extensions()
    try:
        config = build_config(args.robot, args.env_num, args.backend, args.device)
    except ValueError as exc:  # (a bad --device: the config's own message)
        parser.error(str(exc))
    started = time.perf_counter()
    env = Env(config)
    obs, _ = env.reset()
    print(f'first observation after {time.perf_counter() - started:.2f} s')
    name = args.robot
    path = [(1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (3.0, 4.0, 0.0)]
    action = {name: {'move_along_path': [path]}}
    started = time.perf_counter()
    for step in range(1, args.max_steps + 1):
        obs, _, _, _, _ = env.step(action=[action] * args.env_num)
        if step % 500 == 0:
            print(step, [np.round(o[name]['position'][:2], 2).tolist() for o in obs])
        if all(o[name]['controllers']['move_along_path']['finished'] for o in obs):
            break
    elapsed = time.perf_counter() - started
    errors = [float(np.linalg.norm(o[name]['position'][:2] - GOAL)) for o in obs]
    env.close()
    print(f'{step} steps in {elapsed:.1f} s ({step * args.env_num / elapsed:.0f} env-steps/s); distance to (3, 4): '
          + ', '.join(f'{e:.3f} m' for e in errors))
    if not all(e < tolerance for e in errors):  # (not an assert: the check holds under python -O too)
        sys.exit(f'not every {name} reached (3, 4) within {tolerance} m in {step} steps: {errors}')
    print('every robot arrived')


if __name__ == '__main__':
    main()
