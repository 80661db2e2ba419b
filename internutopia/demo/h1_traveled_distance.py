"""An H1 with a head camera walks a path for one finite-step episode; its ``TraveledDistanceMetric``
is written to a JSON-lines file when the episode ends.

Run: ``MUJOCO_GL=egl python -m internutopia.demo.h1_traveled_distance [--steps N] [--max-steps 300]
[--out FILE]``. The episode lasts ``--max-steps`` env steps (InternUtopia's demo: 300); headless the
demo stops after the episode (or ``--steps``). Prints the distance walked as the metric recorded it,
the distance between where the H1 started and ended, and the camera's last frame size.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import numpy as np

from internutopia.core.config import Config, SimConfig
from internutopia.core.gym_env import Env
from internutopia.core.util import has_display
from internutopia.demo.launch import demo_arguments, demo_steps, step_budget
from internutopia.macros import gm
from internutopia_extension import import_extensions
from internutopia_extension.configs.metrics.traveled_distance_metric import TraveledDistanceMetricCfg
from internutopia_extension.configs.robots.h1 import (
    H1RobotCfg,
    h1_camera_cfg,
    move_along_path_cfg,
    move_by_speed_cfg,
    rotate_cfg,
)
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

PATH = [(1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (3.0, 4.0, 0.0)]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the episode; return ``{'steps', 'record', 'traveled_distance', 'displacement', 'frame_shape'}``."""
    parser = demo_arguments(__doc__, default_steps=1000)
    parser.add_argument('--max-steps', type=int, default=300, help="the episode's length in env steps (default 300)")
    parser.add_argument('--out', default=None, help='results file (default: a new file in the temp folder)')
    args = parser.parse_args(argv)
    if args.max_steps < 1:
        parser.error(f'--max-steps must be >= 1; got {args.max_steps}')
    budget = step_budget(args)
    out = args.out or os.path.join(tempfile.mkdtemp(prefix='h1_traveled_distance_'), 'h1_traveled_distance_metric.jsonl')
    h1 = H1RobotCfg(position=(0.0, 0.0, 1.05), controllers=[move_by_speed_cfg, move_along_path_cfg, rotate_cfg],
                    sensors=[h1_camera_cfg.update(name='camera', resolution=(320, 240))])
    config = Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240, headless=not has_display()),
                    metrics_save_path=out,
                    task_configs=[FiniteStepTaskCfg(max_steps=args.max_steps, metrics=[TraveledDistanceMetricCfg(robot_name='h1')],
                                                    scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd',
                                                    scene_scale=(0.01, 0.01, 0.01), robots=[h1])])
    import_extensions()
    env = Env(config)
    obs, _ = env.reset()
    start = np.asarray(obs['position'][:2])
    position, frame_shape = start, None
    action = {move_along_path_cfg.name: [PATH]}
    step = 0
    try:
        for step in demo_steps(budget):
            obs, _, terminated, _, _ = env.step(action=action)
            if obs is not None:
                position = np.asarray(obs['position'][:2])
                frame = obs['sensors']['camera'].get('rgba')
                frame_shape = None if frame is None else tuple(np.shape(frame))
            if step % 100 == 0:
                print(f'step {step}: position {np.round(position, 2).tolist()}', flush=True)
            if terminated:
                obs, info = env.reset()
                if info is None:  # the queue is empty: the episode's record is written
                    break
    finally:
        env.close()
    records = [json.loads(line) for line in open(out)] if os.path.exists(out) else []
    record = records[-1] if records else None
    walked = None if record is None else record['metrics'].get('traveled_distance_metric')
    displacement = float(np.linalg.norm(position - start))
    print(f'{step} steps; camera frames {frame_shape}; H1 moved {displacement:.2f} m from its start')
    print(f'TraveledDistanceMetric: {walked:.3f} m walked, written to {out}'
          if record else f'the episode did not end within {step} steps: no record written to {out}')
    return {'steps': step, 'record': record, 'traveled_distance': walked, 'displacement': displacement,
            'frame_shape': frame_shape, 'results_file': out}


if __name__ == '__main__':
    main()
