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
    obs, robots = _two_slots_stepped(robot)
    cameras = [slot_obs['h1']['sensors']['top'] for slot_obs in obs]
    assert abs(robots[1][1] - robots[0][1]) == pytest.approx(10.0, abs=0.2)  # (the slots' robots 10 m apart)
    for robot_position, camera in zip(robots, cameras, strict=True):
        np.testing.assert_allclose(camera['pose'][0], robot_position + [0.0, 0.0, 2.0], atol=0.05)
    np.testing.assert_allclose(cameras[1]['depth'], cameras[0]['depth'], atol=1e-3)  # the same view
    for camera in cameras:  # (looking down at its own robot: the head, not the floor 3 m below)
        assert camera['depth'][HEIGHT // 2, WIDTH // 2] < 1.6


class TopDownCameraCfg(SensorCfg):
    type: str = 'TopDownRobotPrimCamera'
    prim_path: str | None = 'topdown_camera_500'
    #: ``ICamera.create``'s ``translation`` (``None``: no pose given), in the robot prim's frame.
    translation: tuple[float, float, float] | None = None
    #: Moved 2 m above the robot in world coordinates every step, as InternNav's H1 does.
    follow: bool = True


@BaseSensor.register('TopDownRobotPrimCamera')
class TopDownRobotPrimCamera(BaseSensor):
    """InternNav's top-down camera: ``prim_path`` right under the robot prim (``'/h1/topdown_camera_500'``,
    no link), made in ``post_reset`` (``VLNCamera``) and moved by ``set_world_pose`` each step."""

    def __init__(self, config, robot, scene=None):
        super().__init__(config, robot, scene)
        self._camera = None
        self.made = None

    def post_reset(self):
        self._camera = ICamera.create(name=self.name, prim_path=self._robot.config.prim_path + '/' + self.config.prim_path,
                                      rgba=True, distance_to_image_plane=True, resolution=(WIDTH, HEIGHT),
                                      translation=self.config.translation)
        self.made = (self._camera.get_world_pose(), self._robot.articulation.get_world_pose())

    def get_data(self):
        if self.config.follow:
            position = self._robot.articulation.get_world_pose()[0]
            self._camera.set_world_pose([position[0], position[1], position[2] + 2.0], [-0.70710678, 0.0, 0.0, 0.70710678])
        return {'made': self.made, 'pose': self._camera.get_world_pose(), 'rgba': self._camera.get_rgba(),
                'depth': self._camera.get_distance_to_image_plane()}


def test_a_camera_right_under_the_robot_prim_goes_on_its_root_body():
    """A camera made on ``'<robot prim>/<camera>'`` (no link: InternNav's ``topdown_camera_500``,
    InternManip's ``obs_camera``) goes on the robot's root body, in the robot prim's frame, as an
    Xform under the robot prim (it used to fail every episode at reset). In both slots: with no
    pose given it is made at the root's origin; moved 2 m above the robot each step (world
    coordinates), it sees the robot below it, not the floor; made with ``translation=(0, 0, 2)``
    (identity: looking down the root's -z) it sits 2 m above the root and sees the robot too."""
    robot = H1RobotCfg(locomotion='carried', sensors=[
        TopDownCameraCfg(name='topdown_camera_500'),
        TopDownCameraCfg(name='above', prim_path='above_camera', translation=(0.0, 0.0, 2.0), follow=False)])
    obs, robots = _two_slots_stepped(robot)
    assert abs(robots[1][1] - robots[0][1]) == pytest.approx(10.0, abs=0.2)  # (the slots' robots 10 m apart, world)
    for slot_obs, robot_position in zip(obs, robots, strict=True):
        sensors = slot_obs['h1']['sensors']
        top, above = sensors['topdown_camera_500'], sensors['above']
        (made_position, made_orientation), (root_position, root_orientation) = top['made']
        np.testing.assert_allclose(made_position, root_position, atol=1e-6)  # (no pose: the root's origin, H1's pelvis)
        np.testing.assert_allclose(np.abs(np.dot(made_orientation, root_orientation)), 1.0, atol=1e-6)
        np.testing.assert_allclose(above['made'][0][0], above['made'][1][0] + [0.0, 0.0, 2.0], atol=1e-6)
        np.testing.assert_allclose(top['pose'][0], robot_position + [0.0, 0.0, 2.0], atol=0.05)
        for camera in (top, above):
            assert camera['rgba'].shape == (HEIGHT, WIDTH, 4) and camera['depth'].shape == (HEIGHT, WIDTH)
            # the robot below: its head about 1.3 m down, the floor about 3 m (the image's corners)
            assert camera['depth'][HEIGHT // 2, WIDTH // 2] < 1.6
            assert min(camera['depth'][0, 0], camera['depth'][-1, -1]) > 2.5


def test_a_camera_under_the_robot_prim_is_placed_in_the_prims_frame():
    """Where the root body rides off the robot prim's origin (Jetbot's chassis, 3.5 cm above its
    root frame on the ground), a camera right under the robot prim is placed in the prim's frame,
    as an Xform there is: with no pose at the prim's origin, ``translation`` from there."""
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg

    robot = JetbotRobotCfg(sensors=[TopDownCameraCfg(name='bare', prim_path='bare', follow=False),
                                    TopDownCameraCfg(name='lifted', prim_path='lifted', translation=(0.0, 0.0, 1.0),
                                                     follow=False)])
    config = Config(simulator=SimConfig(headless=True), env_num=1, metrics_save_path='none',
                    task_configs=[FiniteStepTaskCfg(max_steps=5, robots=[robot])])
    with Env(config) as env:
        env.reset()
        sensors = env.step([None])[0][0]['jetbot']['sensors']
    (bare, _), (chassis, _) = sensors['bare']['made']
    np.testing.assert_allclose(bare, chassis - [0.0, 0.0, 0.035], atol=1e-6)  # (on the ground, the prim's origin)
    np.testing.assert_allclose(sensors['lifted']['made'][0][0], chassis + [0.0, 0.0, 1.0 - 0.035], atol=1e-6)
    assert sensors['lifted']['depth'][HEIGHT // 2, WIDTH // 2] < 1.0  # (the jetbot below it, not the floor 1 m down)


def _two_slots_stepped(robot) -> tuple[list, list]:
    """Two slots 10 m apart of an H1 ``robot``, stepped twice: their observations and the robots'
    world positions."""
    task = FiniteStepTaskCfg(max_steps=20, robots=[robot])
    config = Config(simulator=SimConfig(headless=True), env_num=2, env_offset_size=10.0, metrics_save_path='none',
                    task_configs=[task] * 2)
    with Env(config) as env:
        env.reset()
        for _ in range(2):
            obs = env.step([None, None])[0]
        robots = [task.robots['h1'].articulation.get_world_pose()[0] for task in env.runner.current_tasks.values()]
    return obs, robots
