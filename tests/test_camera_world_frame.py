"""Camera frames in slots away from the world origin, as InternUtopia's code reads them.

InternUtopia's ``camera_params`` come from Isaac Sim's annotator, in the world frame (env ``i``
sits at its env offset on one stage), and its ``RepCamera.get_pointcloud_gpu``
(``internutopia_extension/sensors/rep_camera.py``) un-projects the depth image with the intrinsics
and ``cameraViewTransform`` and then subtracts ``self._camera.offset`` (the env offset) to give
env-local points. Code ported from there (or written like it) must get the right points in every
slot here: the view transform is the world's (the slot's origin included), ``offset`` is the
slot's origin, and the built-in ``pointcloud`` stays env-local, as upstream's is. Checked for a
configured camera (its observation, its ``ICamera`` seen from the slot, and a class built on
``RepCamera`` the upstream way) and for a camera made by ``ICamera.create``, in four slots 10 m
apart, each with a crate at its own place.
"""

from __future__ import annotations

import os

os.environ.setdefault('MUJOCO_GL', 'egl')

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.config.sensor import SensorCfg  # noqa: E402
from internutopia.core.grid import slot_origins  # noqa: E402
from internutopia.core.sensor.camera import ICamera  # noqa: E402
from internutopia.core.sensor.sensor import BaseSensor  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension import import_extensions  # noqa: E402
from internutopia_extension.configs.objects.cube import VisualCubeCfg  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg  # noqa: E402
from internutopia_extension.configs.sensors import RepCameraCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402
from internutopia_extension.sensors.rep_camera import RepCamera, forward_camera_quat  # noqa: E402

import_extensions()

WIDTH, HEIGHT = 64, 48
ENV_NUM, OFFSET = 4, 10.0
NEAR, FAR = 0.01, 1000.0  # (RepCameraCfg's clipping range, and a made camera's)
MOUNT = dict(position=(0.0, 0.0, 0.3), orientation=forward_camera_quat(15.0))
#: Each slot's crate (env-local): a different place in each, so a view of the wrong slot shows.
CRATES = [(1.5, 0.0, 0.3), (1.5, 0.35, 0.3), (2.0, -0.3, 0.3), (1.2, 0.15, 0.3)]
HALF = 0.15  # (half the crate's side)


def upstream_intrinsics(params) -> np.ndarray:
    """InternUtopia's ``RepCamera.get_intrinsic_matrix``."""
    width, height = params['renderProductResolution']
    focal_length = params['cameraFocalLength'] / 10.0
    horizontal_aperture, _ = params['cameraAperture'] / 10.0
    vertical_aperture = horizontal_aperture * (float(height) / width)
    fx, fy = width * focal_length / horizontal_aperture, height * focal_length / vertical_aperture
    return np.array([[fx, 0.0, width * 0.5], [0.0, fy, height * 0.5], [0.0, 0.0, 1.0]])


def upstream_extrinsics(params) -> np.ndarray:
    """InternUtopia's ``RepCamera.get_extrinsic_matrix_gpu``: world to the ROS camera frame."""
    return np.diag([1.0, -1.0, -1.0, 1.0]) @ np.asarray(params['cameraViewTransform']).reshape(4, 4).T


def upstream_pointcloud(depth, params, offset, *, centres: bool = False) -> np.ndarray:
    """InternUtopia's ``RepCamera.get_pointcloud_gpu`` in numpy, on the pixels that hit something
    (here the sky reads the far clip, Isaac's ``inf``; upstream keeps ``0.01 < depth < 10000``).
    ``centres``: at pixel centres ``(u + 0.5, v + 0.5)``, where the built-in point cloud puts its
    points; upstream un-projects the pixels' corners ``(u, v)``."""
    depth = np.asarray(depth, dtype=np.float64)
    v, u = np.nonzero((depth > NEAR) & (depth < FAR * (1 - 1e-4)))
    homogeneous = np.stack([u, v, np.ones_like(u)], axis=1).astype(np.float64)
    if centres:
        homogeneous[:, :2] += 0.5
    camera = (np.linalg.inv(upstream_intrinsics(params)) @ (homogeneous * depth[v, u][:, None]).T).T
    world = np.c_[camera, np.ones(len(camera))] @ np.linalg.inv(upstream_extrinsics(params)).T
    return world[:, :3] - np.asarray(offset, dtype=float)


def upstream_pixel(params, world_point) -> tuple[np.ndarray, float]:
    """Pixel coordinates ``(u, v)`` and the depth along the optical axis of a world point."""
    camera = (upstream_extrinsics(params) @ np.r_[world_point, 1.0])[:3]
    return (upstream_intrinsics(params) @ (camera / camera[2]))[:2], float(camera[2])


class UpstreamCloudCfg(RepCameraCfg):
    type: str | None = 'WorldFrameTestUpstreamCloud'


@BaseSensor.register('WorldFrameTestUpstreamCloud')
class UpstreamCloud(RepCamera):
    """A class built on ``RepCamera`` the upstream way, un-projecting as upstream's does with its
    ``self._camera`` (``get_distance_to_image_plane()``, ``get_camera_params()``, ``offset``)."""

    def get_data(self):
        data = super().get_data()
        camera = self._camera
        data['upstream'] = {'depth': camera.get_distance_to_image_plane(), 'params': camera.get_camera_params(),
                            'offset': np.asarray(camera.offset, dtype=float), 'own_offset': np.asarray(self.offset, dtype=float),
                            'world_pose': self.get_world_pose(), 'pose': self.get_pose()}
        return data


class MadeCloudCfg(SensorCfg):
    type: str = 'WorldFrameTestMadeCloud'


@BaseSensor.register('WorldFrameTestMadeCloud')
class MadeCloud(BaseSensor):
    """A sensor that makes its camera with ``ICamera.create`` in ``post_reset`` (as InternUtopia's
    ``RepCamera`` and InternNav's sensors do) and reads it upstream's way."""

    def __init__(self, config, robot, scene=None):
        super().__init__(config, robot, scene)
        self._camera = None

    def post_reset(self):
        self._camera = ICamera.create(name=self.name, prim_path=self._robot.config.prim_path + '/chassis/made',
                                      rgba=False, distance_to_image_plane=True, camera_params=True,
                                      resolution=(WIDTH, HEIGHT), translation=MOUNT['position'],
                                      orientation=MOUNT['orientation'])

    def get_data(self):
        camera = self._camera
        return {'depth': camera.get_distance_to_image_plane(), 'params': camera.get_camera_params(),
                'offset': np.asarray(camera.offset, dtype=float), 'world_pose': camera.get_world_pose(),
                'pose': camera.get_pose()}


def _task(crate) -> FiniteStepTaskCfg:
    cameras = [RepCameraCfg(name='cam', prim_path='chassis/cam', resolution=(WIDTH, HEIGHT), depth=True,
                            camera_params=True, pointcloud=True, **MOUNT),
               UpstreamCloudCfg(name='cloud', prim_path='chassis/cloud', resolution=(WIDTH, HEIGHT), pointcloud=True,
                                **MOUNT),
               MadeCloudCfg(name='made')]
    return FiniteStepTaskCfg(max_steps=20, robots=[JetbotRobotCfg(sensors=cameras)], objects=[
        VisualCubeCfg(name='crate', position=crate, scale=(2 * HALF,) * 3, label='crate', color=(0.9, 0.2, 0.1))])


@pytest.fixture(scope='module')
def sensors():
    """Every slot's camera readings after one step, and the slots' world origins."""
    config = Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240), env_num=ENV_NUM,
                    env_offset_size=OFFSET, metrics_save_path='none', task_configs=[_task(c) for c in CRATES])
    with Env(config) as env:
        env.reset()
        obs, *_ = env.step([None] * ENV_NUM)
        by_slot = {int(task.robots['jetbot'].sensors['cam'].slot): task.robots['jetbot'].sensors['cam']
                   for task in env.runner.current_tasks.values()}
        views = [{'offset': np.asarray(by_slot[slot].offset, dtype=float), 'params': by_slot[slot].get_camera_params(),
                  'world_pose': by_slot[slot].get_world_pose(), 'pose': by_slot[slot].get_pose()}
                 for slot in range(ENV_NUM)]
    origins = slot_origins(ENV_NUM, OFFSET)
    assert (np.abs(origins[1:]).sum(axis=1) > 0).all()  # (every slot but 0 away from the world origin)
    yield [o['jetbot']['sensors'] for o in obs], views, origins


def _view_position(params) -> np.ndarray:
    """Where the view transform puts the camera (its inverse's translation)."""
    return np.linalg.inv(np.asarray(params['cameraViewTransform']).reshape(4, 4).T)[:3, 3]


@pytest.mark.parametrize('slot', range(ENV_NUM))
def test_view_transform_is_the_worlds_and_offset_the_slots_origin(sensors, slot):
    """As upstream's: ``cameraViewTransform`` in the world frame (the slot's origin included),
    ``offset`` the slot's origin, ``get_world_pose() = get_pose() + offset``; the camera's own
    ``pose`` key stays env-local and the intrinsics unchanged."""
    readings, views, origins = sensors
    origin = origins[slot]
    reading, view = readings[slot]['cam'], views[slot]
    params = reading['camera_params']
    np.testing.assert_allclose(_view_position(params), params['pose']['position'] + origin, atol=1e-9)
    np.testing.assert_allclose(params['pose']['position'], view['pose'][0], atol=1e-9)  # (env-local, as documented)
    assert 0.05 < params['pose']['position'][2] < 0.6 and np.linalg.norm(params['pose']['position'][:2]) < 0.5
    np.testing.assert_allclose(params['intrinsics'], upstream_intrinsics(params), rtol=1e-12)
    # The slot's ICamera: its offset, its poses, its params (the observation's row)
    np.testing.assert_allclose(view['offset'], origin)
    np.testing.assert_allclose(view['world_pose'][0], view['pose'][0] + origin, atol=1e-9)
    np.testing.assert_allclose(view['params']['cameraViewTransform'], params['cameraViewTransform'])
    # A class built on RepCamera: its _camera's offset and its own
    upstream = readings[slot]['cloud']['upstream']
    np.testing.assert_allclose(upstream['offset'], origin)
    np.testing.assert_allclose(upstream['own_offset'], origin)
    np.testing.assert_allclose(upstream['world_pose'][0], upstream['pose'][0] + origin, atol=1e-9)
    np.testing.assert_allclose(_view_position(upstream['params']), upstream['world_pose'][0], atol=1e-6)
    # A camera made by ICamera.create
    made = readings[slot]['made']
    np.testing.assert_allclose(made['offset'], origin)
    np.testing.assert_allclose(made['world_pose'][0], made['pose'][0] + origin, atol=1e-9)
    np.testing.assert_allclose(_view_position(made['params']), made['world_pose'][0], atol=1e-6)
    np.testing.assert_allclose(made['params']['cameraViewTransform'], params['cameraViewTransform'], atol=1e-6)


@pytest.mark.parametrize('slot', range(ENV_NUM))
def test_upstream_unprojection_minus_the_offset_is_the_pointcloud(sensors, slot):
    """Upstream's un-projection from ``camera_params`` minus the camera's ``offset`` gives the
    built-in ``pointcloud`` (env-local), in every slot, for every kind of camera: the same points
    at pixel centres, and within half a pixel's footprint at upstream's pixel corners."""
    readings, views, origins = sensors
    reading = readings[slot]['cam']
    cloud = reading['pointcloud']
    assert cloud.dtype == np.float32 and len(cloud) > WIDTH * HEIGHT // 2  # (floor and crate: most pixels hit)
    cases = [(reading['depth'], reading['camera_params'], views[slot]['offset'], 'configured, its ICamera'),
             (readings[slot]['cloud']['upstream']['depth'], readings[slot]['cloud']['upstream']['params'],
              readings[slot]['cloud']['upstream']['offset'], 'class built on RepCamera'),
             (readings[slot]['made']['depth'], readings[slot]['made']['params'], readings[slot]['made']['offset'],
              'made by ICamera.create')]
    for depth, params, offset, what in cases:
        at_centres = upstream_pointcloud(depth, params, offset, centres=True)
        assert at_centres.shape == cloud.shape, what
        # (the made camera's own depth differs from the configured one's by float32 rounding,
        # about 1e-5 of the distance: 2e-4 m at the 23 m of the far floor)
        np.testing.assert_allclose(at_centres, cloud, rtol=1e-5, atol=2e-4, err_msg=what)
        at_corners = upstream_pointcloud(depth, params, offset)
        footprint = np.asarray(depth, dtype=np.float64)[np.asarray(depth) < FAR * (1 - 1e-4)]
        footprint = footprint[footprint > NEAR] / upstream_intrinsics(params)[0, 0]
        assert (np.linalg.norm(at_corners - cloud, axis=1) <= 0.75 * footprint + 2e-4).all(), what
    np.testing.assert_allclose(readings[slot]['cloud']['pointcloud'], cloud, atol=1e-6)  # (the subclass's own)


@pytest.mark.parametrize('slot', range(ENV_NUM))
def test_a_crate_projects_from_its_world_position_onto_its_pixel(sensors, slot):
    """The crate's front-face centre, at its world position (env-local + the slot's origin),
    projects with upstream's formulas onto a pixel at the face's depth, and that pixel's point in
    the point cloud is the face's env-local point."""
    readings, _, origins = sensors
    front = np.array(CRATES[slot]) - [HALF, 0.0, 0.0]
    for params, depth in ((readings[slot]['cam']['camera_params'], readings[slot]['cam']['depth']),
                          (readings[slot]['made']['params'], readings[slot]['made']['depth'])):
        (u, v), distance = upstream_pixel(params, front + origins[slot])
        column, row = int(np.floor(u)), int(np.floor(v))
        assert 0 <= column < WIDTH and 0 <= row < HEIGHT, (u, v)
        assert depth[row, column] == pytest.approx(distance, abs=0.02)
        alone = np.zeros_like(depth)  # (that pixel's depth alone: its one point)
        alone[row, column] = depth[row, column]
        (point,) = upstream_pointcloud(alone, params, origins[slot], centres=True)
        np.testing.assert_allclose(point, front, atol=0.05)
