"""The point-nav ids of the walking robots added with InternUtopia's robot set (Aliengo, GR1, H1
with hands): registered, checked by Gymnasium's checker, and their robots reach their goals on
their own legs under a simple steering rule."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import internutopia.envs  # noqa: F401  (registers the ids)
from internutopia.envs import ENV_IDS, POINT_NAV_ROBOTS
from tests.test_gym_vector import assert_one_env_vector_matches

WALKING_IDS = ['internutopia/AliengoPointNav-v0', 'internutopia/GR1PointNav-v0', 'internutopia/H1WithHandPointNav-v0']


def steer(obs: np.ndarray) -> np.ndarray:
    """``move_by_speed`` towards the goal from the ``goal_vector`` observation (its last two
    columns: the goal ahead and to the left, metres): turn to it, walk when facing it."""
    ahead, left = obs[:, -2], obs[:, -1]
    angle = np.arctan2(left, ahead)
    actions = np.zeros((len(obs), 3), dtype=np.float32)
    actions[:, 0] = np.clip(np.hypot(ahead, left), 0.0, 1.0) * (np.abs(angle) < 0.6)
    actions[:, 2] = np.clip(2.0 * angle, -1.0, 1.0)
    return actions


def test_every_walking_robot_has_a_point_nav_id():
    assert {ENV_IDS[env_id]['robot'] for env_id in WALKING_IDS} == {'aliengo', 'gr1', 'h1_with_hand'}
    assert set(POINT_NAV_ROBOTS) == {'jetbot', 'h1', 'g1', 'aliengo', 'gr1', 'h1_with_hand'}
    with pytest.raises(ValueError, match="unknown point-nav robot 'franka'; valid robots: \\['aliengo', 'g1', 'gr1', 'h1', "
                                         "'h1_with_hand', 'jetbot'\\]"):
        gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=1, robot='franka')


@pytest.mark.parametrize('env_id', WALKING_IDS)
def test_the_walking_robots_reach_their_goals(env_id):
    """Two envs, two episodes each: every episode ends in success, the robot within the goal
    radius of its goal, long before its time limit; the robot walks (its base is free, not carried)."""
    envs = gym.make_vec(env_id, num_envs=2)
    runner = envs.unwrapped._vec.runner
    robot = runner.slot_robots[0][envs.unwrapped.robot_name]
    assert robot.walker is not None and robot.root_qpos_column is not None
    obs, _ = envs.reset(seed=3)
    assert obs in envs.observation_space and envs.single_action_space.shape == (3,)
    records = []
    for _ in range(300):
        obs, _, terminated, truncated, infos = envs.step(steer(obs))
        for env in np.flatnonzero(infos.get('_metrics', np.zeros(2, dtype=bool))):
            records.append({name: infos['metrics'][name][env] for name in ('success', 'distance_to_goal')})
            assert terminated[env] and not truncated[env]
        if len(records) >= 4:
            break
    envs.close()
    assert len(records) >= 4
    assert all(record['success'] and record['distance_to_goal'] <= 0.3 for record in records)


@pytest.mark.parametrize('env_id', WALKING_IDS)
def test_the_walking_point_nav_ids_pass_gymnasiums_checker(env_id):
    env = gym.make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # (unbounded joint observations: the checker's notes, not errors)
        check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.parametrize('env_id', WALKING_IDS)
def test_the_walking_point_nav_ids_pass_sb3s_checker(env_id):
    sb3_checker = pytest.importorskip('stable_baselines3.common.env_checker')
    env = gym.make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # its advice on unbounded spaces; failures raise
        sb3_checker.check_env(env.unwrapped, warn=False, skip_render_check=True)
    env.close()


def test_a_one_env_vector_of_a_walking_id_matches_its_single_env():
    """The vector env of one env steps as the single env does (Gymnasium's num_env_1 equivalence),
    through an episode's end by its time limit (inside a recorded call) and the autoreset after it."""
    steps = assert_one_env_vector_matches(gym.make('internutopia/AliengoPointNav-v0', max_steps=330),
                                          gym.make_vec('internutopia/AliengoPointNav-v0', num_envs=1, max_steps=330), 11)
    assert steps <= 17  # (330 physics steps: 16.5 actions, the episode ends between two ticks)
