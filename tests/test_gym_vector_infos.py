"""``add_env_infos`` gives the vector infos Gymnasium's ``_add_info`` gives env by env: the same
columns, masks, dtypes and key order, nested dicts and values of every kind included."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from internutopia.core.gym_vector.infos import add_env_infos


class _Vector(gym.vector.VectorEnv):
    num_envs = 4


def _same(got: dict, want: dict, path: str = '') -> None:
    assert list(got) == list(want), path  # (the key order too)
    for key, value in want.items():
        if isinstance(value, dict):
            _same(got[key], value, f'{path}.{key}')
        elif not isinstance(value, np.ndarray):  # (what Gymnasium makes of mixed values: kept as it does)
            assert got[key] == value, f'{path}.{key}'
        else:
            assert got[key].dtype == value.dtype, f'{path}.{key}'
            if value.dtype == object:
                assert [a is b or a == b for a, b in zip(got[key], value, strict=True)] == [True] * len(value), f'{path}.{key}'
            else:
                np.testing.assert_array_equal(got[key], value, err_msg=f'{path}.{key}')


CASES = {
    'ended episodes': ([1, 3], [{'episode_index': 4, 'steps': 20, 'metrics': {'fell': True, 'tracking': 0.25}},
                                {'episode_index': 7, 'steps': 9, 'metrics': {'fell': False, 'tracking': 0.5},
                                 'diverged': True}]),
    'keys of some envs only': ([0, 2, 3], [{'a': 1.5}, {'b': 'text', 'a': 2.0}, {'c': {'d': np.int32(3)}}]),
    'arrays and final observations': ([2, 0], [{'final_obs': np.ones(3), 'x': np.arange(2)},
                                               {'final_obs': np.zeros(3), 'x': np.arange(2) + 5}]),
    'a dict for one env, a number for another': ([0, 1], [{'m': {'k': 1}}, {'m': 2}]),
    'objects': ([3], [{'task_config': object(), 'flag': np.bool_(True)}]),
    # (one env, a vector step's usual case, takes a path of its own)
    'one ended episode': ([2], [{'episode_index': 4, 'steps': 20, 'metrics': {'fell': True, 'goals': np.int64(2)}}]),
    'one started episode': ([0], [{'episode_index': 3, 'task_config': object()}]),
    'one final observation': ([1], [{'final_obs': np.ones(3), 'final_info': {'steps': 5}, 'x': np.arange(2)}]),
    'one empty info': ([1], [{}]),
}


@pytest.mark.parametrize('case', list(CASES))
def test_added_at_once_equals_gymnasiums_env_by_env(case):
    envs, env_infos = CASES[case]
    vector = _Vector()
    start = {'steps': np.array([1, 2, 3, 4]), '_steps': np.array([True, True, True, True])}
    want = {key: value.copy() for key, value in start.items()}
    for env, env_info in zip(envs, env_infos, strict=True):
        want = vector._add_info(want, env_info, env)
    got = add_env_infos({key: value.copy() for key, value in start.items()}, envs, env_infos, 4, vector._add_info)
    _same(got, want)


def test_values_only_gymnasium_adds_need_its_way():
    with pytest.raises(ValueError, match="info 'final_obs' needs Gymnasium's own way"):
        add_env_infos({}, [0], [{'final_obs': np.zeros(2)}], 4, None)
    assert add_env_infos({}, [1], [{'steps': 3}], 4, None)['steps'].tolist() == [0, 3, 0, 0]  # (plain values need none)
