"""GR1's training env ``internutopia/GR1Walk-v0`` (what ``train --robot gr1`` learns on): real GR1
physics on its walking model, GR1's 12 leg actions, 50-number observation and rewards."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip('fourier_robot_descriptions', reason='the GR1 model: pip install --no-deps fourier-robot-descriptions')


def test_a_standing_gr1_earns_its_reward_upright_and_the_env_resets():
    import gymnasium

    from internutopia_extension.robots.gr1_locomotion import gait

    envs = gymnasium.make_vec('internutopia:internutopia/GR1Walk-v0', num_envs=2, autoreset_mode='SameStep', pushes=False)
    try:
        obs, _ = envs.reset(seed=1)
        assert obs.shape == (2, gait.OBS_SIZE) and envs.single_action_space.shape == (gait.ACTION_SIZE,)
        rewards, ended = [], False
        for _ in range(25):  # 0.5 s in the standing pose (zero actions): no balance is needed yet
            obs, reward, terminated, truncated, _ = envs.step(np.zeros((2, gait.ACTION_SIZE), dtype=np.float32))
            rewards.append(reward)
            ended |= bool(np.any(terminated | truncated))
        assert not ended  # nobody fell
        assert np.all(np.isfinite(obs)) and np.all(obs[:, 8] < -0.95)  # projected gravity: the pelvis upright
        earned = np.array(rewards)
        assert np.all(np.isfinite(earned)) and np.all(earned.sum(axis=0) > 0.0)  # alive and tracking pay
        again, _ = envs.reset(seed=2)
        assert again.shape == (2, gait.OBS_SIZE) and np.all(np.isfinite(again)) and np.all(again[:, 8] < -0.95)
    finally:
        envs.close()
