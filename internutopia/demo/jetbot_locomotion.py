"""A Jetbot at scale 5 follows a four-point path and settles at its last waypoint.

Run: ``MUJOCO_GL=egl python -m internutopia.demo.jetbot_locomotion [--steps N]`` (headless it stops
after 8000 env steps, or 200 steps after the path is done). Prints the position and the distance
to the current waypoint every 1000 steps, and where the Jetbot came to rest.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.config import Config, SimConfig
from internutopia.core.gym_env import Env
from internutopia.core.util import has_display
from internutopia.demo.launch import demo_arguments, demo_steps, step_budget
from internutopia.macros import gm
from internutopia_extension import import_extensions
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, move_along_path_cfg, move_to_point_cfg
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

PATH = [(3.0, 3.0, 0.0), (1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (-1.0, 0.5, 0.0)]
#: Steps the demo keeps stepping after the path is done, to show the Jetbot stays put.
SETTLE_STEPS = 200


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Follow the path; return ``{'steps', 'position', 'distance_to_goal', 'finished', 'drift'}``
    (``drift``: metres moved over the last half of the steps after the path was done, once the
    braking has died down)."""
    args = demo_arguments(__doc__, default_steps=8000).parse_args(argv)
    budget = step_budget(args)
    jetbot = JetbotRobotCfg(position=(0.0, 0.0, 0.0), controllers=[move_to_point_cfg, move_along_path_cfg], scale=(5.0, 5.0, 5.0))
    config = Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240, headless=not has_display()),
                    metrics_save_path='none',
                    task_configs=[SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', robots=[jetbot])])
    import_extensions()
    env = Env(config)
    obs, _ = env.reset()
    action = {move_along_path_cfg.name: [PATH]}
    print(f'actions: {action}', flush=True)
    done_at, done_position, step = None, None, 0
    try:
        for step in demo_steps(budget):
            obs, _, _, _, _ = env.step(action=action)
            path_state = obs['controllers'][move_along_path_cfg.name]
            position = np.asarray(obs['position'][:2])
            if step % 1000 == 0:
                error = np.linalg.norm(position - np.asarray(path_state['current_point'][:2]))
                print(f'step {step}: position {np.round(position, 3).tolist()}, {error:.3f} m from the current waypoint', flush=True)
            if path_state['finished'] and done_at is None:
                done_at = step
            if done_at is not None and step - done_at == SETTLE_STEPS // 2:
                done_position = position
            if done_at is not None and step - done_at >= SETTLE_STEPS or not env.simulation_app.is_running():
                break
    finally:
        env.close()
    position = np.asarray(obs['position'][:2])
    distance = float(np.linalg.norm(position - PATH[-1][:2]))
    drift = None if done_position is None else float(np.linalg.norm(position - done_position))
    if done_at is None:
        print(f'{step} steps: Jetbot at {np.round(position, 3).tolist()}, {distance:.3f} m from the last waypoint; path not finished')
    else:
        print(f'path done at step {done_at}; {step} steps: Jetbot at rest at {np.round(position, 3).tolist()}, '
              f'{distance:.3f} m from the last waypoint, moved {drift:.4f} m over the last {SETTLE_STEPS // 2} steps')
    return {'steps': step, 'position': position.tolist(), 'distance_to_goal': distance, 'finished': done_at is not None,
            'drift': drift}


if __name__ == '__main__':
    main()
