"""A Franka Panda moves its hand to two IK targets and opens and closes its gripper, recording its
joint actions with ``RecordingMetric`` (needs the ``franka`` extra).

Run: ``MUJOCO_GL=egl python -m internutopia.demo.franka_manipulation [--steps N] [--phase-steps 400]``.
Four phases of ``--phase-steps`` env steps each, as InternUtopia's demo: the hand to (0.4, 0, 0.45)
pointing down, open the gripper, the hand to (0.4, 0.4, 0.1) turned, close the gripper. Headless it
stops after the four phases (or ``--steps``). Prints where the hand got to at the end of each phase
and how many joint actions the metric recorded.
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
from internutopia.core.util.rotations import euler_angles_to_quat
from internutopia.demo.launch import demo_arguments, demo_steps, require_extra, step_budget
from internutopia.macros import gm
from internutopia_extension import import_extensions


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the four phases; return ``{'steps', 'phases': [{'name', 'eef_position', 'error'}], 'recorded_steps'}``."""
    parser = demo_arguments(__doc__, default_steps=1600)
    parser.add_argument('--phase-steps', type=int, default=400, help='env steps of each phase (default 400)')
    args = parser.parse_args(argv)
    if args.phase_steps < 1:
        parser.error(f'--phase-steps must be >= 1; got {args.phase_steps}')
    budget = step_budget(args)
    require_extra('robot', 'FrankaRobot')
    from internutopia_extension.configs.metrics import RecordingMetricCfg
    from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg
    from internutopia_extension.configs.tasks import ManipulationTaskCfg

    out = os.path.join(tempfile.mkdtemp(prefix='franka_manipulation_'), 'franka_manipulation.jsonl')
    task = ManipulationTaskCfg(metrics=[RecordingMetricCfg(robot_name='franka', fields=['joint_action'])],
                               scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd',
                               robots=[FrankaRobotCfg(position=(0, 0, 0), controllers=[arm_ik_cfg, gripper_cfg])],
                               prompt='Prompt test 1', target='franka_manipulation', episode_idx=0,
                               # the episode ends on step max_steps + 1: with the last phase's last step
                               max_steps=max((4 * args.phase_steps if budget is None else min(budget, 4 * args.phase_steps)) - 1, 1))
    config = Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240, headless=not has_display()),
                    metrics_save_path=out, task_configs=[task])
    phases: list[tuple[str, dict[str, Any], np.ndarray | None]] = [
        ('hand to (0.4, 0, 0.45)', {arm_ik_cfg.name: [np.array([0.4, 0.0, 0.45]), euler_angles_to_quat((0.0, 0.0, 0.0))]},
         np.array([0.4, 0.0, 0.45])),
        ('open gripper', {gripper_cfg.name: ['open']}, None),
        ('hand to (0.4, 0.4, 0.1)', {arm_ik_cfg.name: [np.array([0.4, 0.4, 0.1]),
                                                       euler_angles_to_quat((np.pi / 2, np.pi / 2, np.pi / 2))]},
         np.array([0.4, 0.4, 0.1])),
        ('close gripper', {gripper_cfg.name: ['close']}, None),
    ]
    import_extensions()
    env = Env(config)
    obs, _ = env.reset()
    reached: list[dict[str, Any]] = []
    arm_target: np.ndarray | None = None
    step = 0
    try:
        for step in demo_steps(budget):
            phase = (step - 1) // args.phase_steps
            name, action, target = phases[phase % 4]
            target = arm_target = target if target is not None else arm_target
            new_obs, _, terminated, _, _ = env.step(action=action if (step - 1) % args.phase_steps == 0 else {})
            obs = new_obs if new_obs is not None else obs
            if step % args.phase_steps == 0 or terminated:
                eef = np.asarray(obs['controllers'][arm_ik_cfg.name]['eef_position'])
                error = None if target is None else float(np.linalg.norm(eef - target))
                reached.append({'name': name, 'eef_position': eef.tolist(), 'error': error})
                print(f'step {step}: {name}: hand at {np.round(eef, 3).tolist()}'
                      + ('' if error is None else f', {error:.3f} m from its target'), flush=True)
            if terminated:
                _, info = env.reset()
                if info is None:  # no more episodes: the record is written
                    break
    finally:
        env.close()
    records = [json.loads(line) for line in open(out)] if os.path.exists(out) else []
    recorded = len(records[-1]['metrics']['recording_metric']) if records else 0
    print(f'{step} steps; RecordingMetric kept joint_action for {recorded} steps ({out})')
    return {'steps': step, 'phases': reached, 'recorded_steps': recorded, 'results_file': out}


if __name__ == '__main__':
    main()
