"""Save what a robot camera sees, side by side: colour, depth and semantic segmentation with boxes.

A jetbot stands in the shipped two-room scene in front of three labelled cubes (one half hidden
behind another); its camera gives RGB, depth, semantic segmentation and tight 2D boxes
(``landmarks=True``). After ``--steps`` physics steps the script writes one PNG of three panels:

- RGB with the 2D boxes drawn and labelled (label and occlusion ratio);
- depth, near bright to far dark (clipped at ``--max-depth`` metres);
- the semantic segmentation, one colour per label (black: background).

    python examples/segmentation.py --out segmentation.png

Needs Pillow (for the PNG), which the ``video`` extra installs: ``pip install 'internutopia[video]'``.
Headless machines need Mesa's EGL (``MUJOCO_GL=egl``, set automatically when there is no display). See ``docs/perception.md``.
"""

from __future__ import annotations

import argparse
import os
import sys

if sys.platform.startswith('linux') and not (os.environ.get('DISPLAY') or os.environ.get('WAYLAND_DISPLAY')):
    os.environ.setdefault('MUJOCO_GL', 'egl')

import numpy as np  # noqa: E402

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.macros import gm  # noqa: E402
from internutopia_extension import import_extensions  # noqa: E402
from internutopia_extension.configs.objects.cube import DynamicCubeCfg, VisualCubeCfg  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg  # noqa: E402
from internutopia_extension.configs.sensors import RepCameraCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402
from internutopia_extension.sensors.rep_camera import forward_camera_quat  # noqa: E402


def build_config(width: int, height: int) -> Config:
    """One slot: a jetbot at the west room's middle looking east, three labelled cubes ahead."""
    camera = RepCameraCfg(name='camera', prim_path='chassis/camera', resolution=(width, height), depth=True,
                          semantic_segmentation=True, landmarks=True, position=(0.0, 0.0, 0.4),
                          orientation=forward_camera_quat(8.0))
    robot = JetbotRobotCfg(position=(-3.0, -1.0, 0.0), sensors=[camera])
    objects = [
        DynamicCubeCfg(name='red_box', label='box', position=(-1.5, -0.7, 0.15), scale=(0.3, 0.3, 0.3), color=(0.8, 0.15, 0.1)),
        VisualCubeCfg(name='blue_box', label='box', position=(-1.2, -1.6, 0.25), scale=(0.5, 0.5, 0.5), color=(0.1, 0.3, 0.8)),
        VisualCubeCfg(name='pillar', position=(-2.0, -1.4, 0.5), scale=(0.12, 0.12, 1.0), color=(0.9, 0.8, 0.2)),
    ]
    task = FiniteStepTaskCfg(max_steps=10_000, scene_asset_path=os.path.join(gm.ASSET_PATH, 'scenes', 'two_rooms.usda'),
                             robots=[robot], objects=objects)
    return Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240), env_num=1, metrics_save_path='none',
                  task_configs=[task])


def colour_labels(semantic: np.ndarray) -> np.ndarray:
    """An RGB image ``(H, W, 3)`` of a semantic id image: a fixed colour per id, black for 0."""
    palette = np.random.default_rng(7).integers(60, 255, size=(int(semantic.max()) + 1, 3), dtype=np.uint8)
    palette[0] = 0
    return palette[semantic]


def panels(reading: dict, max_depth: float) -> np.ndarray:
    """The three panels side by side (``(H, 3 W, 3)`` uint8), boxes not drawn yet."""
    rgb = reading['rgba'][..., :3]
    depth = np.clip(reading['depth'], 0.0, max_depth)
    grey = (255 * (1.0 - depth / max_depth)).astype(np.uint8)
    return np.concatenate([rgb, np.repeat(grey[..., None], 3, axis=2), colour_labels(reading['semantic_segmentation']['data'])],
                          axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', default='segmentation.png', help='PNG to write')
    parser.add_argument('--steps', type=int, default=60, help='physics steps before the picture (the red box settles)')
    parser.add_argument('--size', type=int, nargs=2, default=(320, 240), metavar=('W', 'H'), help='camera resolution')
    parser.add_argument('--max-depth', type=float, default=8.0, help='depth drawn black from here on (m)')
    args = parser.parse_args()
    if args.steps < 1:
        parser.error(f'--steps must be >= 1; got {args.steps}')
    if not all(1 <= side <= 8192 for side in args.size):
        parser.error(f'--size W H must be in 1..8192 pixels each; got {args.size[0]} {args.size[1]}')
    if not args.max_depth > 0:
        parser.error(f'--max-depth must be > 0 metres; got {args.max_depth}')
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        sys.exit("this example writes a PNG with Pillow, which the 'video' extra installs: pip install 'internutopia[video]'")
    # The picture is saved at the end: a file Pillow cannot write, or a folder it cannot go to, is refused now.
    suffix = os.path.splitext(args.out)[1].lower()
    if Image.registered_extensions().get(suffix) not in Image.SAVE:
        parser.error(f"--out {args.out}: Pillow cannot write {suffix or 'a file without a suffix'}; name a .png")
    folder = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        parser.error(f'--out {args.out}: the folder {folder} does not exist or is not writable')
    import_extensions()
    width, height = args.size
    with Env(build_config(width, height)) as env:
        env.reset()
        for _ in range(args.steps):
            obs, *_ = env.step([None])
        reading = obs[0]['jetbot']['sensors']['camera']
    image = Image.fromarray(panels(reading, args.max_depth))
    draw = ImageDraw.Draw(image)
    boxes = reading['bounding_box_2d_tight']
    labels = boxes['info']['idToLabels']
    for row in boxes['data']:
        label = labels[str(row['semanticId'])]['class']
        for offset in (0, 2 * width):  # on the RGB and the segmentation panels
            draw.rectangle([row['x_min'] + offset, row['y_min'], row['x_max'] + offset, row['y_max']], outline=(255, 255, 0))
        draw.text((row['x_min'] + 2, row['y_min'] + 1), f"{label} {row['occlusionRatio']:.2f}", fill=(255, 255, 0))
    image.save(args.out)
    print(f"wrote {args.out}: {width * 3}x{height}; in view: {', '.join(reading['landmarks'])}")
    for row in boxes['data']:
        print(f"  {labels[str(row['semanticId'])]['class']:>8}: x {row['x_min']}-{row['x_max']}, y {row['y_min']}-{row['y_max']}, "
              f"occlusion {row['occlusionRatio']:.2f}")


if __name__ == '__main__':
    main()
