"""An H1 humanoid walks a three-point path, (1, 0) -> (1, 1) -> (3, 4), with its walking policy.

Run: ``MUJOCO_GL=egl python -m internutopia.demo.h1_locomotion [--steps N]`` (headless it stops
after 3000 env steps, or once the path is walked; with a display it opens MuJoCo's viewer and runs
until the path is walked or ``--steps``). Prints the H1's position every 500 steps and how far from
the last waypoint it ended.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.config import Config, SimConfig
from internutopia.core.gym_env import Env
from internutopia.core.util import has_display
from internutopia.demo.launch import demo_arguments, run_until_finished, step_budget
from internutopia.macros import gm
from internutopia_extension import import_extensions
from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_along_path_cfg, move_by_speed_cfg, rotate_cfg
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

PATH = [(1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (3.0, 4.0, 0.0)]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Walk the path; return ``{'steps', 'position', 'distance_to_goal', 'finished'}``."""
    args = demo_arguments(__doc__, default_steps=3000).parse_args(argv)
    budget = step_budget(args)
    h1 = H1RobotCfg(position=(0.0, 0.0, 1.05), controllers=[move_by_speed_cfg, move_along_path_cfg, rotate_cfg])
    config = Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240, headless=not has_display()),
                    metrics_save_path='none',
                    task_configs=[SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd',
                                                         scene_scale=(0.01, 0.01, 0.01), robots=[h1])])
    import_extensions()
    env = Env(config)
    obs, _ = env.reset()
    print(f'H1 starts at {np.round(obs["position"], 2).tolist()}; path {[p[:2] for p in PATH]}', flush=True)
    action = {move_along_path_cfg.name: [PATH]}
    obs, step, finished = run_until_finished(env, action, move_along_path_cfg.name, budget)
    distance = float(np.linalg.norm(np.asarray(obs['position'][:2]) - PATH[-1][:2]))
    print(f'{step} steps: H1 at {np.round(obs["position"][:2], 2).tolist()}, {distance:.2f} m from the last waypoint; '
          f'path {"walked" if finished else "not finished"}')
    return {'steps': step, 'position': np.asarray(obs['position']).tolist(), 'distance_to_goal': distance, 'finished': finished}


if __name__ == '__main__':
    main()
