"""The batched array API (`Env.step_arrays`) agrees with the dict API and validates the same way."""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots import h1
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


def h1_env(make_config, env_num=3, max_steps=10_000):
    robot = h1.H1RobotCfg(controllers=[h1.move_by_speed_cfg, h1.move_to_point_cfg, h1.move_along_path_cfg, h1.rotate_cfg])
    return Env(make_config([FiniteStepTaskCfg(max_steps=max_steps, robots=[robot])] * env_num, env_num=env_num, offset=10))


def test_array_and_dict_apis_give_identical_trajectories(make_config):
    paths = np.array([[[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]], [[0.0, 2.0, 0.0], [2.0, 2.0, 0.0]], [[-1.0, 0.0, 0.0], [-1.0, -1.0, 0.0]]])
    dict_env, array_env = h1_env(make_config), h1_env(make_config)
    dict_env.reset()
    array_env.reset()
    for _ in range(300):
        obs, reward, terminated, truncated, _ = dict_env.step([{'h1': {'move_along_path': [p.tolist()]}} for p in paths])
        out = array_env.step_arrays({'h1': {'move_along_path': paths}})
    for slot in range(3):
        np.testing.assert_array_equal(out.obs['h1']['position'][slot], obs[slot]['h1']['position'])
        np.testing.assert_array_equal(out.obs['h1']['joint_positions'][slot], obs[slot]['h1']['joint_positions'])
        assert out.obs['h1']['controllers']['move_along_path']['current_index'][slot] == \
            obs[slot]['h1']['controllers']['move_along_path']['current_index']
    assert out.reward.tolist() == reward and out.active.all()
    dict_env.close()
    array_env.close()


def test_array_api_masks_inactive_slots_and_reports_metrics(make_config):
    env = Env(make_config([FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg()])] * 2, env_num=3))
    env.reset()
    speeds = np.array([[0.2, 0.0], [0.2, 0.0], [np.nan, np.nan]])  # slot 2 is empty: its row is ignored
    out = env.step_arrays({'jetbot': {'move_by_speed': speeds}})
    assert out.active.tolist() == [True, True, False] and out.metrics == {}
    out = env.step_arrays({'jetbot': {'move_by_speed': speeds}})
    assert out.truncated.tolist() == [True, True, False] and set(out.metrics) == {0, 1}
    out = env.step_arrays({'jetbot': {'move_by_speed': speeds}})
    assert not out.active.any() and np.all(out.obs == {})
    env.close()


@pytest.mark.parametrize('action, match', [
    ({'jetbt': {'move_by_speed': np.zeros((2, 2))}}, "unknown robot 'jetbt'"),
    ({'jetbot': {'fly': np.zeros((2, 2))}}, "unknown controller 'fly'"),
    ({'jetbot': {'move_by_speed': np.zeros((3, 2))}}, 'one row per env'),
    ({'jetbot': {'move_by_speed': np.zeros((2, 3))}}, 'shape'),
    ({'jetbot': {'move_by_speed': np.array([[0.1, 0.0], [np.inf, 0.0]])}}, r'(?s)finite.*NaN or inf in the rows of env 1\)'),
    ([None, None], 'must be a dict'),
])
def test_array_api_errors_change_nothing(make_config, action, match):
    env = Env(make_config([FiniteStepTaskCfg(robots=[JetbotRobotCfg()])] * 2, env_num=2))
    env.reset()
    time_before = env.runner.world.time
    state = env.runner.world.slot_state(0)
    with pytest.raises(ValueError, match=match):
        env.step_arrays(action)
    assert env.runner.world.time == time_before
    for key, value in env.runner.world.slot_state(0).items():
        np.testing.assert_array_equal(value, state[key])
    env.close()


def test_observe_only_keeps_the_named_entries_with_the_same_values(make_config):
    """``step_arrays(observe_only=...)`` gives the entries named, equal to the full observation's,
    in every slot and in some (a slot whose episode ended is not observed), and nothing else."""
    full_env, picked_env = h1_env(make_config, max_steps=5), h1_env(make_config, max_steps=5)
    full_env.reset()
    picked_env.reset()
    only = {'h1': frozenset({'position', 'controllers'})}
    speeds = {'h1': {'move_by_speed': np.tile([0.4, 0.0, 0.2], (3, 1))}}
    for step in range(6):  # the episodes end on the 5th step: the 6th observes no slot
        full = full_env.step_arrays(speeds)
        picked = picked_env.step_arrays(speeds, observe_only=only)
        if not full.obs:
            assert picked.obs == {} and step == 5
            continue
        assert set(picked.obs) == {'h1'} and set(picked.obs['h1']) == {'position', 'controllers'}
        np.testing.assert_array_equal(picked.obs['h1']['position'], full.obs['h1']['position'])
        assert picked.obs['h1']['position'].any()
        np.testing.assert_array_equal(picked.obs['h1']['controllers']['move_to_point']['finished'],
                                      full.obs['h1']['controllers']['move_to_point']['finished'])
        np.testing.assert_array_equal(picked.reward, full.reward)
    # A robot not named is not observed; the observation of named slots is by the array path's rules.
    runner = picked_env.runner
    assert runner.observe_arrays(np.array([0, 2]), {'jetbot': None}) == {}
    assert set(runner.observe_arrays(np.array([0, 2]), {'h1': frozenset({'orientation'})})['h1']) == {'orientation'}
    full_env.close()
    picked_env.close()
