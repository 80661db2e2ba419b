"""A Franka on a table follows a tracked hand: teleoperation from motion-capture frames, recording
its joint actions with ``RecordingMetric`` (needs the ``franka`` extra).

Run: ``MUJOCO_GL=egl python -m internutopia.demo.franka_manipulation_mocap_teleop [--steps N] [--source S]``.
InternUtopia's demo (its robot, controller, camera, task and metric; its scene's path holds a table
written for this project), with its frames from one of three sources (``--source``):

- ``scripted`` (default): a scripted hand circles the end effector 10 cm around its start, the
  gripper pointing down, closing for the second half of each circle (no camera, no server);
- ``http``: a mocap server's ``/results`` at ``--mocap-url`` (InternUtopia's webcam hand tracker,
  or ``python -m internutopia_extension.interactions.motion_capture``, which serves the scripted
  hand or the frames POST-ed to it);
- ``viewer``: the web viewer at ``--port``; drag the handle in the page (and tick
  **gripper closed**): the arm follows.

Headless it stops after 960 env steps (``--steps``; ``0``: until Ctrl-C). Prints the end-effector
target and where the end effector is every 240 steps, and the gripper's state.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from internutopia.core.config import Config, SimConfig
from internutopia.core.util import has_display
from internutopia.core.vec_env import Env
from internutopia.demo.launch import demo_arguments, demo_steps, require_extra, step_budget
from internutopia.macros import gm
from internutopia_extension import import_extensions

#: Where InternUtopia's demo stands the arm: on the table of its scene.
BASE = (-0.35, 0.0, 1.05)


def _source(args: Any, env: Env, teleop_cfg: Any) -> Any:
    from internutopia_extension.interactions.motion_capture import HandleMocap, IteratorMocap, MocapInteraction, scripted_frames

    if args.source == 'http':
        return MocapInteraction(args.mocap_url)
    if args.source == 'viewer':
        from internutopia.viewer import PoseHandle, attach_viewer

        viewer = attach_viewer(env, port=args.port)
        start = np.asarray(BASE) + np.asarray(teleop_cfg.origin_xyz)
        handle = PoseHandle(viewer, position=start, wxyz=(0.0, 1.0, 0.0, 0.0))
        print(f'[internutopia] drag the handle at {viewer.url}', flush=True)
        return HandleMocap(handle, scale=teleop_cfg.scale)
    return IteratorMocap(scripted_frames(scale=teleop_cfg.scale))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the teleoperation; return ``{'steps', 'reports': [{'step', 'target', 'eef_position', 'gripper_closed'}],
    'recorded_steps'}``."""
    parser = demo_arguments(__doc__, default_steps=960)
    parser.add_argument('--source', choices=('scripted', 'http', 'viewer'), default='scripted', help='where hand frames come from')
    parser.add_argument('--mocap-url', default='http://127.0.0.1:5001', help="the mocap server of --source http (InternUtopia's)")
    parser.add_argument('--port', type=int, default=8080, help='the web viewer of --source viewer')
    args = parser.parse_args(argv)
    budget = step_budget(args)
    require_extra('robot', 'MocapControlledFrankaRobot')
    from internutopia_extension.configs.metrics import RecordingMetricCfg
    from internutopia_extension.configs.robots.mocap_controlled_franka import (
        MocapControlledFrankaRobotCfg,
        lh_controlled_camera_cfg,
        teleop_cfg,
    )
    from internutopia_extension.configs.tasks import ManipulationTaskCfg

    franka = MocapControlledFrankaRobotCfg(position=BASE, controllers=[teleop_cfg], sensors=[lh_controlled_camera_cfg])
    out = os.path.join(tempfile.mkdtemp(prefix='franka_mocap_teleop_'), 'franka_mocap_teleop.jsonl')
    task = ManipulationTaskCfg(metrics=[RecordingMetricCfg(robot_name=franka.name, fields=['joint_action'])],
                               scene_asset_path=gm.ASSET_PATH + '/scenes/demo_scenes/franka_mocap_teleop/table_scene.usd',
                               robots=[franka], prompt='Prompt test 1', target='franka_manipulation_mocap_teleop',
                               episode_idx=0, max_steps=10000 if budget is None else max(budget - 1, 1))
    # The camera renders 30 frames a second (InternUtopia's demo: every physics step, 240).
    config = Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 30, headless=not has_display()),
                    metrics_save_path=out, task_configs=[task])
    import_extensions()
    env = Env(config)
    env.reset()
    try:
        source = _source(args, env, teleop_cfg)
    except (ConnectionError, RuntimeError) as error:  # no mocap server there: one line, the env closed
        env.close()
        raise SystemExit(f'this demo cannot run: {error}') from None
    reports: list[dict[str, Any]] = []
    step = 0
    try:
        for step in demo_steps(budget):
            obs, _, terminated, _, _ = env.step([{franka.name: {teleop_cfg.name: [source.step()]}}])
            if obs[0] is not None and (step % 240 == 0 or terminated[0]):
                teleop = obs[0][franka.name]['controllers'][teleop_cfg.name]
                report = {'step': step, 'target': np.round(teleop['target_position'], 3).tolist(),
                          'eef_position': np.round(teleop['eef_position'], 3).tolist(),
                          'gripper_closed': bool(teleop['gripper_closed'])}
                reports.append(report)
                print(f"step {step}: target {report['target']}, end effector at {report['eef_position']}, "
                      f"gripper {'closed' if report['gripper_closed'] else 'open'}", flush=True)
            if terminated[0]:
                break
    finally:
        source.server_stop()
        env.close()
    import json

    records = [json.loads(line) for line in open(out)] if os.path.exists(out) else []
    recorded = len(records[-1]['metrics']['recording_metric']) if records and 'metrics' in records[-1] else 0
    print(f'{step} steps; RecordingMetric kept joint_action for {recorded} steps ({out})')
    return {'steps': step, 'reports': reports, 'recorded_steps': recorded, 'results_file': out}


if __name__ == '__main__':
    main()
