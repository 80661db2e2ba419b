"""Record a short video of the tutorial scenario: two H1s walking a path to (3, 4), seen from above.

This is ``vec_env_example.py`` (the user's example) with a bounded number of steps, headless: every
``--every`` physics steps it appends ``env.render()`` (the whole grid, both slots) to the video
``--out``. With ``--head-camera`` slot 0's head camera (``h1_camera_cfg``, 320x240) is enabled too
and its frames go to a second file named ``<out>_head.<suffix>``; cameras then render only on the
recorded steps (``SimConfig.rendering_interval = --every``).

    python examples/record_video.py --steps 2400 --out h1_overview.mp4 --head-camera

It prints a progress line about every tenth of the run, and the files it wrote at the end. The
output's suffix picks the format: ``.mp4`` needs ``pip install imageio imageio-ffmpeg`` (the
``video`` extra), ``.gif`` needs Pillow. When the requested format cannot be written here the
script stops at once, before building anything, and says what to install. Headless machines need
Mesa's EGL (``MUJOCO_GL=egl``, set automatically when there is no display).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

if sys.platform.startswith('linux') and not (os.environ.get('DISPLAY') or os.environ.get('WAYLAND_DISPLAY')):
    os.environ.setdefault('MUJOCO_GL', 'egl')

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.util.video import VideoRecorder, format_problem  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.macros import gm  # noqa: E402
from internutopia_extension import import_extensions  # noqa: E402
from internutopia_extension.configs.robots.h1 import (  # noqa: E402
    H1RobotCfg,
    h1_camera_cfg,
    h1_tp_camera_cfg,
    move_along_path_cfg,
    move_by_speed_cfg,
    rotate_cfg,
)
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg  # noqa: E402


def build_config(head_camera: bool, every: int) -> Config:
    """The tutorial's config (two slots, 10 m apart), headless; cameras render every ``every`` steps."""
    h1 = H1RobotCfg(
        position=(0.0, 0.0, 1.05),
        controllers=[move_by_speed_cfg, move_along_path_cfg, rotate_cfg],
        sensors=[
            h1_camera_cfg.update(name='camera', resolution=(320, 240), enable=head_camera),
            h1_tp_camera_cfg.update(enable=False),
        ],
    )
    task = SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', scene_scale=(0.01, 0.01, 0.01),
                                  robots=[h1])
    return Config(
        simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240, rendering_interval=every, use_fabric=False,
                            headless=True),
        env_num=2,
        env_offset_size=10,
        metrics_save_path='none',
        task_configs=[task, task],
    )


def head_path(out: str) -> str:
    """Where the head camera's video goes: ``<out>_head.<suffix>``."""
    stem, suffix = os.path.splitext(out)
    return f'{stem}_head{suffix}'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--steps', type=int, default=2400, help='physics steps to run (240 per simulated second)')
    parser.add_argument('--every', type=int, default=8, help='record a frame every N steps (8 -> 30 fps of sim time)')
    parser.add_argument('--out', default='h1_overview.mp4', help='overview video (.mp4 or .gif)')
    parser.add_argument('--width', type=int, default=640)
    parser.add_argument('--height', type=int, default=480)
    parser.add_argument('--head-camera', action='store_true', help="also record slot 0's head camera to <out>_head")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.every < 1:
        parser.error('--steps and --every must be >= 1')
    if not (1 <= args.width <= 8192 and 1 <= args.height <= 8192):
        parser.error('--width and --height must be in 1..8192 pixels')
    problem = format_problem(args.out)
    if problem:
        parser.error(problem)  # before anything is built or rendered
    folder = os.path.dirname(os.path.abspath(args.out))
    try:  # (the videos are finished at the end of the run: a folder they cannot go to is refused now)
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        parser.error(f'cannot write {args.out}: its folder cannot be created ({exc.strerror or exc})')
    if not os.access(folder, os.W_OK):
        parser.error(f'cannot write {args.out}: its folder {folder} is not writable')

    import_extensions()
    env = Env(build_config(args.head_camera, args.every))
    fps = 240.0 / args.every
    overview = VideoRecorder(args.out, fps=fps)
    head = VideoRecorder(head_path(args.out), fps=fps) if args.head_camera else None
    obs, _ = env.reset()
    path = [(1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (3.0, 4.0, 0.0)]
    action = {'h1': {move_along_path_cfg.name: [path]}}
    started = time.perf_counter()
    report_every = max(1, args.steps // 10)
    print(f'running {args.steps} steps, a frame every {args.every} steps ({-(-args.steps // args.every)} frames)', flush=True)
    for step in range(args.steps):
        obs, _, _, _, _ = env.step(action=[action, action])
        if step % args.every == 0:
            overview.append(env.render(args.width, args.height))
            if head is not None:
                head.append(obs[0]['h1']['sensors']['camera']['rgba'])
        done = step + 1
        if done % report_every == 0 or done == args.steps:
            elapsed = time.perf_counter() - started
            left = elapsed / done * (args.steps - done)
            print(f'step {done}/{args.steps} ({100 * done // args.steps}%): {overview.frames} frames, '
                  f'{elapsed:.1f} s elapsed, about {left:.0f} s left', flush=True)
    positions = [o['h1']['position'].round(2).tolist() for o in obs]
    env.close()
    written = [overview] + ([head] if head is not None else [])
    print(f'{args.steps} steps in {time.perf_counter() - started:.1f} s; robots at {positions} (env-local)')
    for video in written:
        name = video.close()
        print(f'wrote {name} ({os.path.getsize(name) / 1e6:.2f} MB, {video.frames} frames at {fps:g} fps)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
