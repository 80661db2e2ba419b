"""The Gymnasium vector adapter: spaces, batching, info masks, the three autoreset modes, seeding,
call/get_attr/set_attr, registration, endless episode sources and the SB3 bridge.

The autoreset, info, seeding, partial-reset and make_vec checks mirror the ones Gymnasium runs on
its own vector envs (its tests/vector and tests/envs/registration suites), with Gymnasium's own
``data_equivalence`` and ``check_environments_match``.
"""

from __future__ import annotations

import json
import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.utils.env_match import check_environments_match
from gymnasium.vector import AutoresetMode

import internutopia  # noqa: F401  (registers the ids)
from internutopia.core.config import Config, SimConfig
from internutopia.core.gym_vector import VectorEnv, sb3_vec_env
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots import h1
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg, PointNavTaskCfg


def jetbot_task(max_steps=100, position=(0.0, 0.0, 0.0), **kw):
    return FiniteStepTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg(position=position, **kw)])


def config(tasks, env_num=3, dt=1 / 60):
    return Config(simulator=SimConfig(physics_dt=dt), env_num=env_num, env_offset_size=5.0, metrics_save_path='none',
                  task_configs=list(tasks))


def nav_task(goal=(1.0, 0.0, 0.0), yaw=0.0, max_steps=600, **kw):
    robot = JetbotRobotCfg(orientation=(math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)))
    return PointNavTaskCfg(goal=goal, max_steps=max_steps, robots=[robot], **kw)


# ------------------------------------------------------------------------------------------------
# spaces and batches
def test_spaces_follow_the_controller_and_the_observation():
    envs = VectorEnv(config([jetbot_task()], env_num=3))
    assert envs.num_envs == 3
    assert envs.single_action_space == gym.spaces.Box(np.float32([-0.5, -3.0]), np.float32([0.5, 3.0]), dtype=np.float32)
    assert envs.action_space.shape == (3, 2)
    # position 3 + orientation 4 + two wheel angles + two wheel speeds
    assert envs.obs_keys == ['robot.position', 'robot.orientation', 'robot.joint_positions', 'robot.joint_velocities']
    assert envs.single_observation_space.shape == (11,) and envs.single_observation_space.dtype == np.float32
    assert envs.observation_space.shape == (3, 11)
    obs, info = envs.reset(seed=0)
    assert obs in envs.observation_space
    assert obs.dtype == np.float32 and obs.shape == (3, 11)
    obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())
    assert obs in envs.observation_space
    assert reward.dtype == np.float64 and reward.shape == (3,)
    assert terminated.dtype == np.bool_ and truncated.dtype == np.bool_
    envs.close()
    assert envs.closed


def test_flat_observation_holds_the_slot_values():
    envs = VectorEnv(config([jetbot_task(position=(0.5, -0.25, 0.0))], env_num=2))
    obs, _ = envs.reset()
    raw = envs.vec_env.runner.observe(np.arange(2))
    parts = envs.layout.slices()
    for slot in range(2):
        np.testing.assert_allclose(obs[slot, parts['robot.position']], raw[slot]['jetbot']['position'], rtol=1e-6)
        np.testing.assert_allclose(obs[slot, parts['robot.orientation']], raw[slot]['jetbot']['orientation'], rtol=1e-6)
    np.testing.assert_allclose(obs[:, parts['robot.position']][:, :2], [[0.5, -0.25]] * 2, atol=1e-3)
    envs.close()


def test_goal_vector_is_the_goal_in_the_robot_frame():
    envs = VectorEnv(config([nav_task(goal=(1.0, 2.0, 0.0), yaw=0.0), nav_task(goal=(1.0, 2.0, 0.0), yaw=math.pi / 2)], env_num=2))
    assert envs.obs_keys[-3:] == ['task.goal', 'task.distance_to_goal', 'goal_vector']
    obs, _ = envs.reset()
    goal_vector = obs[:, envs.layout.slices()['goal_vector']]
    # yaw 0: x ahead = +x; yaw 90 deg: x ahead = +y, y left = -x
    np.testing.assert_allclose(goal_vector[0], [1.0, 2.0], atol=2e-3)
    np.testing.assert_allclose(goal_vector[1], [2.0, -1.0], atol=2e-3)
    distance = obs[:, envs.layout.slices()['task.distance_to_goal']][:, 0]
    np.testing.assert_allclose(distance, [math.sqrt(5)] * 2, atol=2e-3)
    envs.close()


def test_dict_observations_and_chosen_keys():
    envs = VectorEnv(config([nav_task()], env_num=2), obs_mode='dict',
                     obs_keys=['goal_vector', 'robot.controllers.move_to_point.finished', 'task.goal'])
    space = envs.single_observation_space
    assert isinstance(space, gym.spaces.Dict)
    assert set(space.spaces) == {'goal_vector', 'robot.controllers.move_to_point.finished', 'task.goal'}
    assert space['robot.controllers.move_to_point.finished'].dtype == np.bool_
    obs, _ = envs.reset()
    assert obs in envs.observation_space
    assert obs['task.goal'].shape == (2, 3) and obs['robot.controllers.move_to_point.finished'].dtype == np.bool_
    envs.close()


def test_other_controllers_give_their_argument_shapes():
    envs = VectorEnv(config([jetbot_task(1000)], env_num=2), controller='move_to_point')
    assert envs.single_action_space.shape == (3,)
    goal = np.tile([1.0, 0.0, 0.0], (2, 1))
    envs.reset()
    for _ in range(120):
        obs, *_ = envs.step(goal)
    assert obs[0, 0] > 0.5  # drove towards x = 1
    envs.close()
    envs = VectorEnv(config([FiniteStepTaskCfg(robots=[h1.H1RobotCfg(controllers=[h1.move_by_speed_cfg, h1.joint_controller])])],
                            env_num=1), controller='joint_controller')
    assert envs.single_action_space.shape == (len(h1.H1_JOINT_NAMES),)
    assert np.all(envs.single_action_space.low < envs.single_action_space.high)
    envs.close()


def test_step_before_reset_and_module_prefixed_ids():
    envs = VectorEnv(config([jetbot_task()], env_num=1))
    with pytest.raises(RuntimeError, match=r'call reset\(\) before step\(\)'):
        envs.step(np.zeros((1, 2)))
    envs.close()
    envs = gym.make_vec('internutopia:internutopia/JetbotPointNav-v0', num_envs=2)  # imports the module itself
    assert isinstance(envs, VectorEnv)
    envs.close()


def test_module_docstring_examples():
    import doctest

    import internutopia.cli
    import internutopia.core.gym_vector
    import internutopia.core.gym_vector.dict_env
    import internutopia.envs

    for module in (internutopia.core.gym_vector, internutopia.core.gym_vector.dict_env, internutopia.envs, internutopia.cli):
        failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert failures == 0, module.__name__


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match=r"observation key 'robot.nope'.*valid keys: \[.*'robot.position'"):
        VectorEnv(config([jetbot_task()], env_num=1), obs_keys=['robot.nope'])
    with pytest.raises(ValueError, match=r"controller 'fly'.*its controllers: \['move_by_speed'"):
        VectorEnv(config([jetbot_task()], env_num=1), controller='fly')
    two = FiniteStepTaskCfg(robots=[JetbotRobotCfg(name='a'), JetbotRobotCfg(name='b', position=(1.0, 0.0, 0.0))])
    with pytest.raises(ValueError, match=r"2 robots \['a', 'b'\]; name the one to drive with robot="):
        VectorEnv(config([two], env_num=1))
    with pytest.raises(ValueError, match="autoreset_mode must be one of"):
        VectorEnv(config([jetbot_task()], env_num=1), autoreset_mode='sometimes')
    envs = VectorEnv(config([two], env_num=2), robot='b')
    envs.reset()
    with pytest.raises(ValueError, match=r'actions must have shape \(2, 2\)'):
        envs.step(np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r'env\(s\) \[1\] are not finite'):
        envs.step(np.array([[0.0, 0.0], [np.nan, 0.0]]))
    with pytest.raises(ValueError, match=r"unknown reset option\(s\) \['bogus'\]"):
        envs.reset(options={'bogus': 1})
    envs.close()
    with pytest.raises(RuntimeError, match='closed'):
        envs.reset()


def test_listed_episodes_are_checked_when_the_env_is_built():
    other = FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg(name='rover')])
    with pytest.raises(ValueError, match=r"task_configs\[1\] has no robot 'jetbot'.*robots: \['rover'\]"):
        VectorEnv(config([jetbot_task(max_steps=2), other], env_num=1))
    misspelt = jetbot_task()
    misspelt.robots[0].type = 'NoSuchRobot'
    with pytest.raises(ValueError, match=r"unknown robot type 'NoSuchRobot' \(in task_configs\[2\]\.robots\[0\]\)"):
        VectorEnv(config([jetbot_task()], env_num=1), episodes=[jetbot_task(), jetbot_task(), misspelt])


@pytest.mark.parametrize('mode', ['NextStep', 'SameStep'])
def test_a_drawn_episode_with_another_robot_fails_to_load_and_the_env_goes_on(tmp_path, mode):
    def episodes():
        yield jetbot_task(max_steps=2)
        yield FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg(name='rover')])  # (episode 1)
        while True:
            yield jetbot_task(max_steps=2)

    path = tmp_path / 'records.jsonl'
    cfg = config([jetbot_task()], env_num=1).model_copy(update={'metrics_save_path': str(path)})
    envs = VectorEnv(cfg, episodes=episodes(), autoreset_mode=mode)
    envs.reset()
    runner = envs.vec_env.runner
    errors, seen = 0, []
    for _ in range(10):
        steps = runner.table.steps.copy()
        try:
            _, _, _, _, info = envs.step(np.zeros((1, 2)))
        except ValueError as exc:
            assert "task_configs[1] has no robot 'jetbot'" in str(exc)
            errors += 1
            if mode == 'NextStep':  # (the episode is taken before the step: the step is not taken)
                np.testing.assert_array_equal(runner.table.steps, steps)
            continue
        seen += info['episode_index'][info['_episode_index']].tolist()
    # Tried Config.episode_attempts times, then recorded as failed; the env went on with the next
    # episodes, never running the rover's.
    assert errors == 3
    assert 1 not in seen and max(seen) >= 3 and runner.episodes[0].config.robots[0].name == 'jetbot'
    envs.close()
    failed = [r for r in map(json.loads, path.read_text().splitlines()) if r.get('outcome') == 'failed']
    assert [(r['episode_index'], r['attempts']) for r in failed] == [(1, 3)]


def test_actions_are_clipped_to_the_space():
    slow, fast = (VectorEnv(config([jetbot_task()], env_num=1)) for _ in range(2))
    for envs in (slow, fast):
        envs.reset()
    for _ in range(60):
        a, *_ = slow.step(np.array([[0.5, 0.0]]))
        b, *_ = fast.step(np.array([[50.0, 0.0]]))
    np.testing.assert_array_equal(a, b)
    slow.close()
    fast.close()


def test_action_repeat_is_repeated_single_steps():
    tasks = [nav_task(goal=(0.8, 0.3, 0.0))]
    once, thrice = VectorEnv(config(tasks, env_num=2)), VectorEnv(config(tasks, env_num=2), action_repeat=3)
    once.reset(seed=0)
    thrice.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        action = rng.uniform(-1, 1, (2, 2)) * [0.5, 3.0]
        total = np.zeros(2)
        for _ in range(3):
            obs_1, reward, *_ = once.step(action)
            total += reward
        obs_3, reward_3, *_ = thrice.step(action)
        np.testing.assert_array_equal(obs_1, obs_3)
        np.testing.assert_allclose(reward_3, total, rtol=1e-12, atol=1e-12)
    once.close()
    thrice.close()


# ------------------------------------------------------------------------------------------------
# autoreset modes (Gymnasium's test_autoreset_next_step / within_step / disabled, on real episodes)
def three_lengths(mode):
    # slots 0, 1, 2 take episodes of 2, 3, 3 steps; later episodes cycle through the same list
    return VectorEnv(config([jetbot_task(2), jetbot_task(3), jetbot_task(3)], env_num=3), autoreset_mode=mode)


def test_autoreset_next_step():
    envs = three_lengths(AutoresetMode.NEXT_STEP)
    assert envs.metadata['autoreset_mode'] == AutoresetMode.NEXT_STEP
    start, info = envs.reset()
    assert info['episode_index'].tolist() == [0, 1, 2] and info['_episode_index'].all()
    go = np.tile([0.3, 0.0], (3, 1))
    obs, reward, terminated, truncated, info = envs.step(go)
    assert not truncated.any() and not terminated.any()
    assert 'metrics' not in info and info['steps'].tolist() == [1, 1, 1]
    obs, reward, terminated, truncated, info = envs.step(go)
    assert truncated.tolist() == [True, False, False]
    assert info['_metrics'].tolist() == [True, False, False]
    obs, reward, terminated, truncated, info = envs.step(go)
    # slot 0 is reset on this step: its reset observation, reward 0, not done, the next episode
    np.testing.assert_array_equal(obs[0], start[0])
    assert reward[0] == 0.0 and not truncated[0] and not terminated[0]
    assert truncated.tolist() == [False, True, True]
    assert info['episode_index'].tolist() == [3, 1, 2] and info['_task_config'].tolist() == [True, False, False]
    assert info['task_config'][0].max_steps == 2
    obs, reward, terminated, truncated, info = envs.step(go)
    np.testing.assert_array_equal(obs[1:], start[1:])
    assert info['episode_index'].tolist() == [3, 4, 5] and info['steps'][0] == 1
    envs.close()


def test_autoreset_same_step():
    envs = three_lengths('SameStep')
    assert envs.metadata['autoreset_mode'] == AutoresetMode.SAME_STEP
    start, _ = envs.reset()
    go = np.tile([0.3, 0.0], (3, 1))
    envs.step(go)
    obs, reward, terminated, truncated, info = envs.step(go)
    assert truncated.tolist() == [True, False, False]
    assert info['_final_obs'].tolist() == [True, False, False] and info['_final_info'].tolist() == [True, False, False]
    assert info['final_obs'][0] in envs.single_observation_space and info['final_obs'][1] is None
    assert not np.array_equal(info['final_obs'][0], start[0])  # it moved
    np.testing.assert_array_equal(obs[0], start[0])  # replaced by the next episode's first observation
    assert info['final_info']['steps'][0] == 2 and info['final_info']['_metrics'].tolist() == [True, False, False]
    assert info['episode_index'].tolist() == [3, 1, 2] and info['_task_config'].tolist() == [True, False, False]
    obs, reward, terminated, truncated, info = envs.step(go)
    assert truncated.tolist() == [False, True, True]
    assert info['_final_obs'].tolist() == [False, True, True]
    assert all(info['final_obs'][i] in envs.single_observation_space for i in (1, 2))
    envs.close()


def test_autoreset_disabled_and_partial_reset():
    envs = three_lengths(AutoresetMode.DISABLED)
    assert envs.metadata['autoreset_mode'] == AutoresetMode.DISABLED
    start, _ = envs.reset()
    go = np.tile([0.3, 0.0], (3, 1))
    envs.step(go)
    obs, reward, terminated, truncated, info = envs.step(go)
    assert truncated.tolist() == [True, False, False] and 'final_obs' not in info
    with pytest.raises(RuntimeError, match=r"env\(s\) \[0\] ended.*reset_mask"):
        envs.step(go)
    mask_obs, mask_info = envs.reset(options={'reset_mask': truncated | terminated})
    np.testing.assert_array_equal(mask_obs[0], start[0])
    np.testing.assert_array_equal(mask_obs[1:], obs[1:])  # the others keep their observation
    assert mask_info['_episode_index'].tolist() == [True, False, False] and mask_info['episode_index'][0] == 3
    obs, reward, terminated, truncated, info = envs.step(go)
    assert truncated.tolist() == [False, True, True] and info['steps'].tolist() == [1, 3, 3]
    envs.close()


def test_partial_reset_failures_match_gymnasium():
    envs = three_lengths(AutoresetMode.DISABLED)
    envs.reset(options={'reset_mask': np.array([True, True, True])})
    with pytest.raises(ValueError, match='must have shape'):
        envs.reset(options={'reset_mask': np.array([True])})
    with pytest.raises(ValueError, match='must have shape'):
        envs.reset(options={'reset_mask': np.array([[True, True, True]])})
    with pytest.raises(TypeError, match='dtype=np.bool_'):
        envs.reset(options={'reset_mask': np.array([1, 1, 0])})
    with pytest.raises(TypeError, match='numpy array'):
        envs.reset(options={'reset_mask': [True, True, True]})
    with pytest.raises(ValueError, match='at least one True'):
        envs.reset(options={'reset_mask': np.zeros(3, dtype=bool)})
    envs.close()


# ------------------------------------------------------------------------------------------------
# seeding and determinism
def sampler_envs(**kw):
    return gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=3, **kw)


def test_seeded_resets_repeat_the_episodes():
    a, b = sampler_envs(), sampler_envs()
    obs_a, info_a = a.reset(seed=7)
    obs_b, info_b = b.reset(seed=7)
    assert data_equivalence(obs_a, obs_b, exact=True) and data_equivalence(info_a, info_b)
    assert a.np_random_seed == 7
    goals = [t.goal for t in info_a['task_config']]
    a.action_space.seed(1)
    for _ in range(30):
        action = a.action_space.sample()
        step_a, step_b = a.step(action), b.step(action)
        assert data_equivalence(step_a, step_b, exact=True)
    again, info_again = a.reset(seed=7)
    assert data_equivalence(again, obs_a, exact=True) and [t.goal for t in info_again['task_config']] == goals
    _, other = a.reset(seed=8)
    assert [t.goal for t in other['task_config']] != goals
    a.close()
    b.close()


def assert_one_env_vector_matches(env, envs, seed: int) -> int:
    """Gymnasium's test_num_env_1_equivalence: the one-env vector ``envs`` steps as the single
    ``env`` does through an episode (random actions) and the autoreset after it; the steps taken."""
    envs.action_space.seed(seed)
    env_obs, env_info = env.reset(seed=seed)
    envs_obs, envs_info = envs.reset(seed=seed)
    assert data_equivalence(env_obs, envs_obs[0])
    assert env_info['task_config'] == envs_info['task_config'][0]
    over, steps = False, 0
    while not over:
        actions = envs.action_space.sample()
        env_obs, env_reward, env_terminated, env_truncated, _ = env.step(actions[0])
        envs_obs, envs_reward, envs_terminated, envs_truncated, _ = envs.step(actions)
        assert np.array_equal(env_obs, envs_obs[0]) and env_reward == envs_reward[0]
        assert env_terminated == envs_terminated[0] and env_truncated == envs_truncated[0]
        over, steps = env_terminated or env_truncated, steps + 1
    env_obs, _ = env.reset()
    envs_obs, envs_reward, envs_terminated, envs_truncated, _ = envs.step(envs.action_space.sample())
    assert np.array_equal(env_obs, envs_obs[0])
    assert envs_reward.tolist() == [0.0] and not envs_terminated[0] and not envs_truncated[0]
    env.close()
    envs.close()
    return steps


def test_one_env_vector_matches_the_single_env():
    """Gymnasium's test_num_env_1_equivalence, with its check_environments_match for the single envs."""
    assert_one_env_vector_matches(gym.make('internutopia/JetbotPointNav-v0', max_distance=1.2),
                                  gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=1, max_distance=1.2), 123)
    check_environments_match(gym.make('internutopia/JetbotPointNav-v0'), gym.make('internutopia/JetbotPointNav-v0'),
                             num_steps=40, seed=5, info_comparison='keys-equivalence')


# ------------------------------------------------------------------------------------------------
# registration (Gymnasium's test_make_vec checks)
def test_make_vec_builds_one_world_and_can_be_recreated_from_its_spec():
    envs = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=4)
    assert isinstance(envs, VectorEnv) and envs.num_envs == 4 and envs.vec_env.env_num == 4
    assert envs.spec.id == 'internutopia/JetbotPointNav-v0'
    again = gym.make_vec(envs.spec)
    assert again.spec == envs.spec and type(again) is type(envs)
    assert again.observation_space == envs.observation_space and again.single_action_space == envs.single_action_space
    envs.close()
    again.close()
    sync = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=2, vectorization_mode='sync')
    assert isinstance(sync, gym.vector.SyncVectorEnv)
    obs, _ = sync.reset(seed=0)
    assert obs.shape == (2, 17)
    sync.close()


def test_h1_and_g1_ids_are_registered_and_step():
    for env_id, dims in (('internutopia/H1PointNav-v0', 3), ('internutopia/G1PointNav-v0', 3)):
        envs = gym.make_vec(env_id, num_envs=2)
        assert envs.single_action_space.shape == (dims,)
        obs, info = envs.reset(seed=0)
        assert obs in envs.observation_space
        obs, *_ = envs.step(np.zeros((2, dims), dtype=np.float32))
        assert obs in envs.observation_space
        envs.close()


def test_h1_point_nav_walks_by_default_and_takes_a_carried_robot_config():
    """The H1 id's robot walks on its own legs (the default H1); ``robot_cfg`` swaps in a carried
    one, copied: the user's config object is left as it was."""
    walking = gym.make_vec('internutopia/H1PointNav-v0', num_envs=1)
    assert walking.unwrapped.vec_env.runner.slot_robots[0]['h1'].config.locomotion == 'walking'
    walking.close()
    carried_cfg = h1.H1RobotCfg(locomotion='carried', controllers=[h1.move_by_speed_cfg, h1.move_to_point_cfg])
    before = carried_cfg.model_dump()
    carried = gym.make_vec('internutopia/H1PointNav-v0', num_envs=1, robot_cfg=carried_cfg)
    carried.reset(seed=0)
    assert carried.unwrapped.vec_env.runner.slot_robots[0]['h1'].config.locomotion == 'carried'
    carried.close()
    assert carried_cfg.model_dump() == before


def test_config_id_takes_a_yaml_path(tmp_path):
    path = tmp_path / 'c.yaml'
    config([jetbot_task()], env_num=2).to_yaml(path)
    envs = gym.make_vec('internutopia/Config-v0', num_envs=3, config=str(path))
    assert envs.num_envs == 3 and envs.single_observation_space.shape == (11,)
    envs.close()


# ------------------------------------------------------------------------------------------------
# episode sources, call / get_attr / set_attr, wrappers
def test_a_list_is_cycled_and_a_sampler_never_runs_dry():
    envs = VectorEnv(config([jetbot_task(1)], env_num=2))
    envs.reset()
    indices = set()
    for _ in range(6):
        *_, info = envs.step(np.zeros((2, 2)))
        indices.update(info.get('episode_index', []).tolist())
    assert max(indices) >= 5
    envs.close()
    calls = []

    def sample(rng):
        calls.append(1)
        return jetbot_task(1, position=(float(rng.uniform(-1, 1)), 0.0, 0.0))

    envs = VectorEnv(config([jetbot_task(1)], env_num=2), episodes=sample)
    envs.reset(seed=0)
    for _ in range(4):
        envs.step(np.zeros((2, 2)))
    assert len(calls) >= 2 + 4
    envs.close()


def test_a_one_shot_iterator_that_runs_out_is_a_clear_error():
    envs = VectorEnv(config([jetbot_task(1)], env_num=1), episodes=iter([jetbot_task(1), jetbot_task(1)]))
    envs.reset()
    envs.step(np.zeros((1, 2)))
    envs.step(np.zeros((1, 2)))  # reset takes the second episode
    envs.step(np.zeros((1, 2)))
    with pytest.raises(RuntimeError, match='ran out of episodes'):
        envs.step(np.zeros((1, 2)))
    envs.close()


def test_call_get_attr_set_attr():
    envs = VectorEnv(config([jetbot_task(5), jetbot_task(7)], env_num=2))
    envs.reset()
    assert [t.max_steps for t in envs.get_attr('task_config')] == [5, 7]
    assert envs.get_attr('episode_index') == (0, 1)
    envs.step(np.zeros((2, 2)))
    assert envs.call('steps') == (1, 1)
    envs.set_attr('difficulty', [0.1, 0.2])
    assert envs.get_attr('difficulty') == (0.1, 0.2)
    envs.set_attr('difficulty', 0.5)
    assert envs.get_attr('difficulty') == (0.5, 0.5)
    assert envs.get_attr('num_envs') == (2, 2)  # falls back to the vector env's own attribute
    with pytest.raises(AttributeError, match='read-only'):
        envs.set_attr('steps', 3)
    with pytest.raises(ValueError, match='length equal to the number of environments'):
        envs.set_attr('difficulty', [1, 2, 3])
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        envs.get_attr('nothing')
    envs.close()


def test_gymnasium_vector_wrappers_work_on_it():
    envs = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=4, max_steps=60)
    unit = np.ones(2, dtype=np.float32)
    envs = gym.wrappers.vector.RescaleAction(envs, min_action=-unit, max_action=unit)
    envs = gym.wrappers.vector.NormalizeObservation(envs)
    envs = gym.wrappers.vector.RecordEpisodeStatistics(envs)
    envs.reset(seed=0)
    episodes = []
    for _ in range(12):
        *_, info = envs.step(envs.action_space.sample())
        if 'episode' in info:
            episodes += info['episode']['l'][info['_episode']].tolist()
    assert episodes and all(length == 10 for length in episodes)  # 60 physics steps = 10 actions of 6
    listed = gym.wrappers.vector.DictInfoToList(gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=2))
    _, infos = listed.reset(seed=0)
    assert isinstance(infos, list) and infos[0]['task_config'].type == 'PointNavTask'
    envs.close()
    listed.close()


def test_render_gives_a_frame_per_env_each_its_slot_alone_and_the_overview_on_request():
    """Gymnasium's vector ``render()`` is a tuple of ``num_envs`` frames (it was one overview image,
    which Gymnasium's vector rendering wrappers cannot take). Each frame draws its slot alone: two
    envs running the same episode give the same frame, a robot elsewhere in its cell another."""
    here, there = jetbot_task(position=(0.0, 0.0, 0.0)), jetbot_task(position=(1.5, 1.0, 0.0))
    envs = VectorEnv(config([here, here, there], env_num=3), render_mode='rgb_array')
    envs.reset(seed=0)
    frames = envs.render()
    assert isinstance(frames, tuple) and len(frames) == 3
    assert all(f.shape == (480, 640, 3) and f.dtype == np.uint8 and f.std() > 10 for f in frames)
    # (no neighbour drawn into either: equal but for rounding at the slots' different origins)
    assert np.abs(frames[0].astype(int) - frames[1].astype(int)).max() <= 2
    moved = np.abs(frames[2].astype(int) - frames[0].astype(int)).max(axis=2) > 40
    assert moved.sum() > 100  # the jetbot stands elsewhere
    overview = envs.render_overview()
    assert overview.shape == (480, 640, 3) and not any(np.array_equal(overview, f) for f in frames)
    envs.close()
    assert VectorEnv(config([here], env_num=1)).render() is None  # (no render mode)


def test_render_envs_of_the_vec_env_checks_its_ids_and_draws_an_empty_slot_as_sky():
    env = Env(config([jetbot_task()], env_num=2))
    env.reset([0])  # slot 1 holds no episode
    frames = env.render_envs(width=160, height=120)
    assert [f.shape for f in frames] == [(120, 160, 3)] * 2
    sky = frames[1].astype(int)
    assert np.all(np.abs(np.diff(sky, axis=1)) <= 2)  # nothing drawn: rows of one colour (the gradient sky)
    assert frames[0].astype(int).std() > sky.std() + 5
    assert np.array_equal(env.render_envs([0], 160, 120)[0], frames[0])
    with pytest.raises(ValueError, match=r'env id 2 in env_ids is out of range; valid env ids: 0\.\.1'):
        env.render_envs([2])
    with pytest.raises(ValueError, match='width and height must be positive'):
        env.render_envs(width=0)
    env.close()


# ------------------------------------------------------------------------------------------------
# Stable-Baselines3 bridge (optional extra 'train')
def test_sb3_bridge_reports_terminal_observations_and_success():
    pytest.importorskip('stable_baselines3')
    with pytest.raises(ValueError, match='SameStep'):
        sb3_vec_env(VectorEnv(config([jetbot_task()], env_num=1)))
    tasks = [nav_task(goal=(0.35, 0.0, 0.0), max_steps=120), nav_task(goal=(3.0, 0.0, 0.0), max_steps=30)]
    venv = sb3_vec_env(VectorEnv(config(tasks, env_num=2), autoreset_mode='SameStep', controller='move_to_point'))
    assert venv.num_envs == 2 and venv.action_space.shape == (3,)
    obs = venv.reset()
    first = obs.copy()
    goals = np.array([[0.35, 0.0, 0.0], [3.0, 0.0, 0.0]], dtype=np.float32)
    finished = {}
    for _ in range(200):
        obs, rewards, dones, infos = venv.step(goals)
        for i in np.flatnonzero(dones):
            finished.setdefault(int(i), infos[i])
        if len(finished) == 2:
            break
    assert finished[0]['is_success'] is True and finished[0]['TimeLimit.truncated'] is False
    assert finished[1]['is_success'] is False and finished[1]['TimeLimit.truncated'] is True
    assert finished[0]['terminal_observation'].shape == first.shape[1:]
    assert set(finished[0]['metrics']) == {'success', 'spl', 'distance_to_goal', 'steps', 'collisions'}
    assert venv.get_attr('robot_name') == ['jetbot', 'jetbot']
    venv.close()


@pytest.mark.slow
def test_ppo_training_example_runs_a_few_updates(tmp_path):
    pytest.importorskip('stable_baselines3')
    pytest.importorskip('matplotlib')
    import importlib.util
    import json
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / 'examples' / 'train_ppo.py'
    spec = importlib.util.spec_from_file_location('train_ppo', path)
    train_ppo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train_ppo)
    summary = train_ppo.main(['--steps', '1024', '--num-envs', '4', '--eval-episodes', '4', '--eval-every', '512',
                              '--out', str(tmp_path)])
    assert summary['steps'] >= 1024 and len(summary['curve']) >= 3
    assert 0.0 <= summary['random_success'] <= 1.0 and 0.0 <= summary['trained_success'] <= 1.0
    for name in ('learning_curve.png', 'learning_curve.json', 'model.zip', 'vecnormalize.pkl'):
        assert (tmp_path / name).stat().st_size > 0
    assert json.loads((tmp_path / 'learning_curve.json').read_text())['steps'] == summary['steps']
