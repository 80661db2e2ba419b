"""An ``ICamera`` getter of an output the camera was not made with returns ``None``, as
InternUtopia's do (``internutopia/core/sensor/isaacsim/camera.py``: each getter answers ``None``
when its annotator was not attached), while the outputs it was made with give real pixels.

InternManip's ``Camera.get_data`` always calls ``get_distance_to_image_plane()`` and keeps the
depth only when it is an array (``depth_obs`` is off by default): an error there ended the episode.
This holds for cameras made by ``ICamera.create`` and for the built-in cameras seen from one slot,
including a class built on the built-in ``RepCamera``.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from internutopia.core.config import Config, SimConfig
from internutopia.core.config.robot import SensorCfg
from internutopia.core.sensor.camera import ICamera
from internutopia.core.sensor.sensor import BaseSensor
from internutopia.core.vec_env import Env
from internutopia_extension import import_extensions
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.sensors import RepCameraCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.sensors.camera_mounts import forward_camera_quat
from internutopia_extension.sensors.rep_camera import RepCamera

import_extensions()

WIDTH, HEIGHT = 32, 24
GETTERS = ('get_rgba', 'get_distance_to_image_plane', 'get_bounding_box_2d_tight', 'get_camera_params')


def _getters(camera) -> dict:
    return {getter: getattr(camera, getter)() for getter in GETTERS}


class MadeGettersCfg(SensorCfg):
    type: str = 'GettersTestMadeCamera'
    #: The outputs to make the camera with (``ICamera.create``'s arguments); InternManip makes
    #: ``rgba`` alone (``distance_to_image_plane=depth_obs``, off by default).
    outputs: tuple[str, ...] = ()


@BaseSensor.register('GettersTestMadeCamera')
class MadeGettersCamera(BaseSensor):
    """An upstream-style sensor that makes its camera in ``post_reset`` and calls every getter."""

    def __init__(self, config, robot, scene=None):
        super().__init__(config, robot, scene)
        self._camera = None

    def post_reset(self):
        self._camera = ICamera.create(name=self.name, prim_path=f'{self._robot.config.prim_path}/chassis/{self.name}',
                                      resolution=(WIDTH, HEIGHT), translation=(0.1, 0.0, 0.1),
                                      orientation=forward_camera_quat(0.0),  # (looking ahead along the chassis' +x)
                                      **{output: True for output in self.config.outputs},
                                      **({} if 'rgba' in self.config.outputs else {'rgba': False}))

    def get_data(self):
        return OrderedDict(_getters(self._camera))


class GettersGrayCamCfg(RepCameraCfg):
    type: str | None = 'GettersTestGrayCam'


@BaseSensor.register('GettersTestGrayCam')
class GettersGrayCam(RepCamera):
    """A class built on the built-in camera (upstream style): its own getters, from its slot."""

    def get_data(self):
        data = super().get_data()
        data['getters'] = _getters(self)
        return data


def _assert_real_outputs(got: dict, made: set[str]) -> None:
    """The getters in ``made`` give real pixels (or params, or boxes); every other gives ``None``."""
    for getter, value in got.items():
        if getter not in made:
            assert value is None, f'{getter} of an output not made: {type(value).__name__}'
    if 'get_rgba' in made:
        rgba = got['get_rgba']
        assert isinstance(rgba, np.ndarray) and rgba.shape == (HEIGHT, WIDTH, 4) and rgba.dtype == np.uint8
        assert rgba[..., :3].std() > 1.0  # (a picture: the floor and the sky, not one flat colour)
    if 'get_distance_to_image_plane' in made:
        depth = got['get_distance_to_image_plane']
        assert isinstance(depth, np.ndarray) and depth.shape == (HEIGHT, WIDTH) and depth.dtype == np.float32
        assert np.isfinite(depth).all() and depth.min() > 0.0 and depth[-1].mean() < 2.0  # (the floor just ahead, below)
    if 'get_camera_params' in made:
        params = got['get_camera_params']
        assert isinstance(params, dict) and np.asarray(params['cameraViewTransform']).size == 16  # (Isaac's keys)
        assert float(params['cameraFocalLength']) > 0 and tuple(params['renderProductResolution']) == (WIDTH, HEIGHT)
    if 'get_bounding_box_2d_tight' in made:
        boxes = got['get_bounding_box_2d_tight']
        assert isinstance(boxes, dict) and set(boxes) == {'data', 'info'}


def test_getters_of_outputs_a_camera_was_not_made_with_return_none():
    """Made cameras (InternManip's: ``rgba`` alone; one with every output; one with depth alone)
    and built-in cameras seen from a slot (colour alone; the point cloud alone, which makes depth
    and params as upstream's ``RepCamera`` does; a class built on ``RepCamera``) in two slots:
    the getters of the outputs not made answer ``None``, the others real data, and nothing raises."""
    sensors = [
        MadeGettersCfg(name='rgb_only', outputs=('rgba',)),
        MadeGettersCfg(name='every', outputs=('rgba', 'distance_to_image_plane', 'bounding_box_2d_tight', 'camera_params')),
        MadeGettersCfg(name='depth_only', outputs=('distance_to_image_plane',)),
        RepCameraCfg(name='colour', prim_path='chassis/colour', resolution=(WIDTH, HEIGHT)),
        RepCameraCfg(name='cloud', prim_path='chassis/cloud', resolution=(WIDTH, HEIGHT), rgba=False, pointcloud=True),
        GettersGrayCamCfg(name='gray', prim_path='chassis/gray', resolution=(WIDTH, HEIGHT), rgba=False, pointcloud=True),
    ]
    task = FiniteStepTaskCfg(max_steps=20, robots=[JetbotRobotCfg(sensors=sensors)])
    config = Config(simulator=SimConfig(headless=True), env_num=2, metrics_save_path='none', task_configs=[task] * 2)
    with Env(config) as env:
        env.reset()
        obs = env.step([None, None])[0]
        views = [{name: _getters(task.robots['jetbot'].sensors[name]) for name in ('colour', 'cloud')}
                 for task in env.runner.current_tasks.values()]
    depth_and_params = {'get_distance_to_image_plane', 'get_camera_params'}
    for slot_obs, slot_views in zip(obs, views, strict=True):
        got = slot_obs['jetbot']['sensors']
        _assert_real_outputs(dict(got['rgb_only']), {'get_rgba'})
        _assert_real_outputs(dict(got['every']), set(GETTERS))
        _assert_real_outputs(dict(got['depth_only']), {'get_distance_to_image_plane'})
        _assert_real_outputs(slot_views['colour'], {'get_rgba'})
        _assert_real_outputs(slot_views['cloud'], depth_and_params)
        _assert_real_outputs(got['gray']['getters'], depth_and_params)
        # (a point-cloud-only camera gives the depth and params it is made from, as InternUtopia's RepCamera)
        assert {'depth', 'camera_params', 'pointcloud'} <= set(got['gray']) and got['gray']['pointcloud'].shape[1] == 3
        np.testing.assert_array_equal(got['gray']['depth'], got['gray']['getters']['get_distance_to_image_plane'])
        # the depth a point-cloud-only camera gives is its frame's: the same camera, the same view
        np.testing.assert_allclose(got['gray']['getters']['get_distance_to_image_plane'],
                                   slot_views['cloud']['get_distance_to_image_plane'], atol=1e-4)
        np.testing.assert_allclose(got['every']['get_distance_to_image_plane'], got['depth_only']['get_distance_to_image_plane'],
                                   atol=1e-4)
