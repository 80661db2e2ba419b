"""A camera made by ``ICamera.create`` on InternUtopia's H1 camera mount (``'/h1/logo_link/Camera'``,
as InternNav's sensors write it) is accepted where the built-in camera accepts that mount, and sees
what the built-in camera sees. (H1's head logo is part of its torso in the MJCF model.)"""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.config.sensor import SensorCfg
from internutopia.core.sensor.camera import ICamera
from internutopia.core.sensor.sensor import BaseSensor
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.h1 import H1RobotCfg
from internutopia_extension.configs.sensors import RepCameraCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

WIDTH, HEIGHT = 40, 30


class LogoCameraCfg(SensorCfg):
    type: str = 'LogoLinkCamera'


@BaseSensor.register('LogoLinkCamera')
class LogoLinkCamera(BaseSensor):
    """InternNav's way: the camera made in ``post_reset`` on the robot's ``logo_link``, no pose given."""

    def __init__(self, config, robot, scene=None):
        super().__init__(config, robot, scene)
        self._camera = None

    link = 'logo_link'

    def post_reset(self):
        self._camera = ICamera.create(name=self.name, prim_path=f'{self._robot.config.prim_path}/{self.link}/Camera',
                                      rgba=True, distance_to_image_plane=True, camera_params=True, resolution=(WIDTH, HEIGHT))

    def get_data(self):
        return {'rgba': self._camera.get_rgba(), 'depth': self._camera.get_distance_to_image_plane(),
                'params': self._camera.get_camera_params()}


class TorsoCameraCfg(SensorCfg):
    type: str = 'TorsoLinkCamera'


@BaseSensor.register('TorsoLinkCamera')
class TorsoLinkCamera(LogoLinkCamera):
    """The same on the mount's own body (``torso_link``, a body of the model): a made camera there
    takes the mount's pose too, as a configured one does (it used to sit at the body's origin,
    which for Aliengo's ``trunk/Camera`` is inside the trunk)."""

    link = 'torso_link'


@pytest.mark.parametrize(('link', 'made_cfg'), [('logo_link', LogoCameraCfg), ('torso_link', TorsoCameraCfg)])
def test_icamera_create_is_mounted_as_the_built_in_camera(link, made_cfg):
    built_in = RepCameraCfg(name='camera', prim_path=f'{link}/Camera', resolution=(WIDTH, HEIGHT), depth=True,
                            camera_params=True, fovy_deg=60.0)
    h1 = H1RobotCfg(position=(0.0, 0.0, 1.05), prim_path='/h1', sensors=[built_in, made_cfg(name='made')])
    task = FiniteStepTaskCfg(max_steps=5, robots=[h1])
    with Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, metrics_save_path='none', task_configs=[task])) as env:
        env.reset()
        obs, *_ = env.step([None])
    sensors = obs[0]['h1']['sensors']
    made, configured = sensors['made'], sensors['camera']
    assert made['rgba'].shape == (HEIGHT, WIDTH, 4)
    # the same mount: the same pose, the same picture of the floor ahead (not the inside of the torso);
    # (up to the torso's sway of a few hundredths of a degree: a made camera reads its body's pose
    # when it draws, a configured one when the step renders)
    np.testing.assert_allclose(made['params']['cameraViewTransform'], configured['camera_params']['cameraViewTransform'],
                               atol=2e-3)
    near = configured['depth'] < 20.0
    assert near.mean() > 0.3 and made['depth'].min() > 0.2
    np.testing.assert_allclose(made['depth'][near], configured['depth'][near], rtol=2e-2)


class OverheadCameraCfg(SensorCfg):
    type: str = 'OverheadMadeCamera'


@BaseSensor.register('OverheadMadeCamera')
class OverheadMadeCamera(LogoLinkCamera):
    """A made camera moved in world coordinates, 2 m above the robot (InternNav's top-down camera)."""

    link = 'torso_link'

    def get_data(self):
        position = self._robot.articulation.get_world_pose()[0]
        self._camera.set_world_pose([position[0], position[1], position[2] + 2.0], [-0.70710678, 0.0, 0.0, 0.70710678])
        return {'pose': self._camera.get_world_pose(), 'depth': self._camera.get_distance_to_image_plane()}


def test_a_made_cameras_world_pose_is_the_stages_in_every_slot():
    """``set_world_pose``/``get_world_pose`` of an ``ICamera.create`` camera take world (stage)
    coordinates in every slot, as InternUtopia's do: slot 1's camera above its own robot, 10 m
    away, sees what slot 0's sees (it used to take them for the slot's own frame)."""
    robot = H1RobotCfg(locomotion='carried', sensors=[OverheadCameraCfg(name='top')])
    task = FiniteStepTaskCfg(max_steps=20, robots=[robot])
    config = Config(simulator=SimConfig(headless=True), env_num=2, env_offset_size=10.0, metrics_save_path='none',
                    task_configs=[task] * 2)
    with Env(config) as env:
        env.reset()
        for _ in range(2):
            obs = env.step([None, None])[0]
        robots = [task.robots['h1'].articulation.get_world_pose()[0] for task in env.runner.current_tasks.values()]
    cameras = [slot_obs['h1']['sensors']['top'] for slot_obs in obs]
    assert abs(robots[1][1] - robots[0][1]) == pytest.approx(10.0, abs=0.2)  # (the slots' robots 10 m apart)
    for robot_position, camera in zip(robots, cameras, strict=True):
        np.testing.assert_allclose(camera['pose'][0], robot_position + [0.0, 0.0, 2.0], atol=0.05)
    np.testing.assert_allclose(cameras[1]['depth'], cameras[0]['depth'], atol=1e-3)  # the same view
    for camera in cameras:  # (looking down at its own robot: the head, not the floor 3 m below)
        assert camera['depth'][HEIGHT // 2, WIDTH // 2] < 1.6
