"""What the camera rows draw: the camera settings, the robots that have camera rows, the config of
their envs and the plain ``mujoco.Renderer`` camera a user would write without us.

Shared by the camera rows (:mod:`internutopia.bench.cameras`), the process pools they are compared
with (:mod:`internutopia.bench.camera_pool`) and the frame breakdown
(:mod:`internutopia.bench.camera_breakdown`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ['RESOLUTION', 'ROBOTS', 'SETTINGS', 'CameraSetting', 'PlainCamera', 'camera_config', 'path_action']

#: Image size of every camera row.
RESOLUTION = (320, 240)


@dataclass(frozen=True)
class CameraSetting:
    """A camera row's camera: ``view`` ``'head'`` or ``'tp'`` (third person), with ``depth`` or not,
    and with ``annotations`` (semantic and instance segmentation and 2D boxes) or not."""

    name: str
    view: str
    depth: bool
    annotations: bool = False


#: Camera settings of the camera rows, by name (``--render-cameras``).
SETTINGS: dict[str, CameraSetting] = {s.name: s for s in (
    CameraSetting('head_rgb', 'head', False), CameraSetting('head_rgbd', 'head', True),
    CameraSetting('head_rgbd_seg', 'head', True, True),
    CameraSetting('tp_rgb', 'tp', False), CameraSetting('tp_rgbd', 'tp', True), CameraSetting('tp_rgbd_seg', 'tp', True, True))}
#: Robots that have camera rows: the configs module and the names of their head and third-person cameras.
ROBOTS = {'h1': ('internutopia_extension.configs.robots.h1', 'H1RobotCfg', 'h1_camera_cfg', 'h1_tp_camera_cfg',
                 [(1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (3.0, 4.0, 0.0)])}


def camera_config(robot: str, setting: str, env_num: int, render_every_step: bool = True,
                  threads: int | None = None) -> Any:
    """A Config of ``env_num`` endless episodes of ``robot`` following its path with the camera of
    ``setting``; with ``render_every_step=False`` our camera renders only at an episode's start
    (the plain-renderer env draws the frames itself). ``threads`` sets ``rendering_threads``."""
    import importlib

    from internutopia.core.config import Config, SimConfig
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    module, cfg_class, head, third, _ = ROBOTS[robot]
    chosen = SETTINGS[setting]
    configs = importlib.import_module(module)
    camera = getattr(configs, head if chosen.view == 'head' else third)
    camera = camera.update(resolution=RESOLUTION, depth=chosen.depth, rgba=True, enable=True,
                           semantic_segmentation=chosen.annotations, instance_segmentation=chosen.annotations,
                           landmarks=chosen.annotations)
    cfg = getattr(configs, cfg_class)(controllers=[configs.move_by_speed_cfg, configs.move_along_path_cfg], sensors=[camera])
    sim = SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240, rendering_interval=None if render_every_step else 10 ** 9,
                    rendering_threads=threads)
    return Config(simulator=sim, env_num=env_num, env_offset_size=10.0, metrics_save_path='none',
                  task_configs=[SingleInferenceTaskCfg(robots=[cfg])] * env_num)


def path_action(robot: str) -> dict:
    """The per-slot action of the camera rows: follow the robot's path."""
    return {robot: {'move_along_path': [ROBOTS[robot][4]]}}


class PlainCamera:
    """What a user writes without us: ``mujoco.Renderer`` at MuJoCo's defaults on camera ``cam``,
    ``render()`` for RGB, with ``depth`` a second ``render()`` with depth rendering on, and with
    ``segmentation`` a third with segmentation rendering on (geom ids per pixel; no boxes)."""

    def __init__(self, model: Any, cam: int, depth: bool, segmentation: bool = False) -> None:
        import mujoco

        self.renderer = mujoco.Renderer(model, RESOLUTION[1], RESOLUTION[0])
        self.cam = int(cam)
        self.depth = depth
        self.segmentation = segmentation
        #: The last segmentation frame (``(H, W, 2)`` int32: object id and type), when made.
        self.ids: np.ndarray | None = None

    def frame(self, data: Any) -> tuple[np.ndarray, np.ndarray | None]:
        renderer = self.renderer
        renderer.update_scene(data, camera=self.cam)
        rgb = renderer.render()
        depth = None
        if self.depth:
            renderer.enable_depth_rendering()
            depth = renderer.render()
            renderer.disable_depth_rendering()
        if self.segmentation:
            renderer.enable_segmentation_rendering()
            self.ids = renderer.render()
            renderer.disable_segmentation_rendering()
        return rgb, depth

    def close(self) -> None:
        self.renderer.close()
