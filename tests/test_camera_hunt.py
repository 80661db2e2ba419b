"""Camera defects found by hunting, each checked by what a user sees (pixels, depth, poses)."""

from __future__ import annotations

import os

os.environ.setdefault('MUJOCO_GL', 'egl')

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.config.sensor import SensorCfg  # noqa: E402
from internutopia.core.sensor.camera import ICamera  # noqa: E402
from internutopia.core.sensor.sensor import BaseSensor  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg  # noqa: E402
from internutopia_extension.configs.sensors import RepCameraCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402
from internutopia_extension.sensors.rep_camera import forward_camera_quat  # noqa: E402

WIDTH, HEIGHT = 64, 48
MOUNT = dict(position=(0.0, 0.0, 0.3), orientation=forward_camera_quat(0.0))


def _env(sensors) -> Env:
    task = FiniteStepTaskCfg(max_steps=100, robots=[JetbotRobotCfg(sensors=sensors)])
    return Env(Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240), env_num=1,
                      metrics_save_path='none', task_configs=[task]))


def test_a_moved_camera_with_camera_params_only_reports_the_moved_pose():
    """A camera that draws nothing (``camera_params`` alone) moved with ``set_world_pose`` reports
    the new pose in its ``camera_params``, as a drawing camera moved the same way does (it used to
    report the configured mount)."""
    params_only = RepCameraCfg(name='params', prim_path='chassis/params', resolution=(WIDTH, HEIGHT), rgba=False,
                               camera_params=True, **MOUNT)
    drawing = RepCameraCfg(name='drawing', prim_path='chassis/drawing', resolution=(WIDTH, HEIGHT), camera_params=True,
                           **MOUNT)
    with _env([params_only, drawing]) as env:
        env.reset()
        env.step([None])
        sensors = next(iter(env.runner.current_tasks.values())).robots['jetbot'].sensors
        for name in ('params', 'drawing'):
            sensors[name].set_world_pose(np.array([0.0, 0.0, 2.0]), None)
        obs, *_ = env.step([None])
        got = obs[0]['jetbot']['sensors']
        moved = got['drawing']['camera_params']['pose']['position']
        assert moved[2] == pytest.approx(2.0, abs=0.01)
        np.testing.assert_allclose(got['params']['camera_params']['pose']['position'], moved, atol=1e-9)
        np.testing.assert_allclose(got['params']['camera_params']['cameraViewTransform'],
                                   got['drawing']['camera_params']['cameraViewTransform'], atol=1e-9)


def test_multisampled_depth_is_the_pixel_centres_and_its_points_lie_on_the_floor():
    """A multisampled camera's depth is read at the pixel centres, as a single-sample one's: a
    floor pixel near the horizon read several percent too near (one sample's depth, off the centre),
    and its point cloud floated up to 14 cm above the floor."""
    common = dict(resolution=(WIDTH, HEIGHT), depth=True, pointcloud=True, **MOUNT)
    sensors = [RepCameraCfg(name='plain', prim_path='chassis/plain', **common),
               RepCameraCfg(name='msaa', prim_path='chassis/msaa', multisamples=4, **common),
               RepCameraCfg(name='msaa_seg', prim_path='chassis/msaa_seg', multisamples=4, semantic_segmentation=True,
                            **common),
               RepCameraCfg(name='msaa_depth_only', prim_path='chassis/msaa_depth_only', multisamples=4, rgba=False,
                            **common)]
    with _env(sensors) as env:
        env.reset()
        obs, *_ = env.step([None])
    got = obs[0]['jetbot']['sensors']
    plain = got['plain']['depth']
    floor = plain < 999.0
    assert floor.sum() > WIDTH * HEIGHT // 3
    for name in ('msaa', 'msaa_seg', 'msaa_depth_only'):
        np.testing.assert_allclose(got[name]['depth'][floor], plain[floor], rtol=1e-5, err_msg=name)
        points = got[name]['pointcloud']
        assert len(points) == floor.sum() and np.abs(points[:, 2]).max() < 1e-3, name
    # Colour stays anti-aliased, and the segmentation of a multisampled frame marks the floor where its depth does.
    assert got['msaa']['rgba'].shape == (HEIGHT, WIDTH, 4) and got['msaa']['rgba'][..., :3].std() > 5.0
    seg = got['msaa_seg']['semantic_segmentation']
    np.testing.assert_array_equal(seg['data'] != 0, got['msaa_seg']['depth'] < 999.0)


class _ZeroTurnCameraCfg(SensorCfg):
    type: str = 'HuntZeroTurnCamera'
    orientation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)


@BaseSensor.register('HuntZeroTurnCamera')
class _ZeroTurnCamera(BaseSensor):
    """An upstream-style sensor whose ``ICamera.create`` gets a translation and an all-zero orientation."""

    def __init__(self, config, robot, scene=None):
        super().__init__(config, robot, scene)
        self._camera = None

    def post_reset(self):
        self._camera = ICamera.create(name=self.name, prim_path=self._robot.config.prim_path + '/chassis/cam', rgba=True,
                                      distance_to_image_plane=True, camera_params=True, resolution=(WIDTH, HEIGHT),
                                      translation=(0.0, 0.0, 0.3), orientation=self.config.orientation)

    def get_data(self):
        return {'depth': self._camera.get_distance_to_image_plane(), 'params': self._camera.get_camera_params()}


def test_icamera_create_rejects_an_all_zero_orientation_beside_a_translation():
    """``ICamera.create(translation=..., orientation=(0, 0, 0, 0))`` used to make a camera with a NaN
    view transform that saw nothing (depth all far clip); it is an error naming the orientation,
    as the same orientation without a translation was."""
    with _env([_ZeroTurnCameraCfg(name='made', prim_path='chassis/made')]) as env, \
            pytest.warns(RuntimeWarning, match='non-zero wxyz quaternion'):
        env.reset()
