"""The step's fast paths (taken in the common cases, for speed) give exactly what the general paths give."""

from __future__ import annotations

import copy

import numpy as np

from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, move_along_path_cfg, move_by_speed_cfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

PATH = [(0.5, 0.0, 0.0), (0.5, 0.5, 0.0)]


def _task(max_steps: int = 100) -> FiniteStepTaskCfg:
    return FiniteStepTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg(controllers=[move_by_speed_cfg, move_along_path_cfg])])


def _run(make_config, actions_of, steps: int = 30, max_steps: int = 100) -> list:
    with Env(make_config([_task(max_steps)] * 3, env_num=3)) as env:
        env.reset()
        return [env.step(actions_of(k)) for k in range(steps)]


def test_one_shared_action_object_equals_one_copy_per_slot(make_config):
    shared = {'jetbot': {'move_along_path': [PATH]}}
    fast = _run(make_config, lambda k: [shared] * 3)
    general = _run(make_config, lambda k: [copy.deepcopy(shared) for _ in range(3)])
    for (obs_a, *rest_a), (obs_b, *rest_b) in zip(fast, general, strict=True):
        assert rest_a == rest_b
        for a, b in zip(obs_a, obs_b, strict=True):
            assert _same_tree(a, b)


def test_per_slot_observations_are_views_and_python_scalars(make_config):
    shared = {'jetbot': {'move_along_path': [PATH]}}
    obs, reward, terminated, truncated, info = _run(make_config, lambda k: [shared] * 3, steps=2)[-1]
    path_obs = obs[1]['jetbot']['controllers']['move_along_path']
    assert type(path_obs['finished']) is bool and type(path_obs['current_index']) is int
    assert isinstance(path_obs['current_point'], np.ndarray) and path_obs['current_point'].shape == (3,)
    assert type(reward[0]) is float and type(terminated[0]) is bool and info[2] == {'episode_index': 2, 'steps': 2}


def test_results_when_some_slots_ended(make_config):
    # Episodes of 3 steps, a queue of 3: after the third step every slot is done; in between all run.
    shared = {'jetbot': {'move_along_path': [PATH]}}
    results = _run(make_config, lambda k: [shared] * 3, steps=3, max_steps=3)
    obs, reward, terminated, truncated, info = results[-1]
    assert truncated == [True] * 3 and all('metrics' in i for i in info)
    assert [i['steps'] for i in info] == [3, 3, 3]


def _same_tree(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_tree(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(np.array_equal(a, b))


def test_array_observations_are_the_callers_to_keep(make_config):
    """With one group in every slot the group's own arrays are handed out (no scatter): they must
    still be fresh each step, never views of the state that the next step changes."""
    with Env(make_config([_task()] * 3, env_num=3)) as env:
        env.reset()
        paths = np.repeat(np.asarray(PATH)[None], 3, axis=0)
        first = env.step_arrays({'jetbot': {'move_along_path': paths}}).obs['jetbot']
        kept = {key: np.copy(first[key]) for key in ('position', 'joint_velocities')}
        kept_index = first['controllers']['move_along_path']['current_point'].copy()
        for _ in range(30):
            later = env.step_arrays({'jetbot': {'move_along_path': paths}}).obs['jetbot']
        assert not np.array_equal(later['position'], kept['position'])  # the robots moved ...
        for key, value in kept.items():
            np.testing.assert_array_equal(first[key], value)  # ... and what the first step returned did not
        np.testing.assert_array_equal(first['controllers']['move_along_path']['current_point'], kept_index)
        assert all(first[key].base is None for key in ('position', 'orientation', 'joint_positions'))


def test_g1_policy_reads_the_same_through_slices_and_gathers(make_config):
    """G1's policy tick reads and writes its state rows by slices when the addresses allow it
    (the usual case): the same walk as the general gathers, bit for bit."""
    import pytest

    pytest.importorskip('holosoma_inference')
    from internutopia_extension.configs.robots.g1 import G1RobotCfg
    from internutopia_extension.configs.robots.g1 import move_along_path_cfg as g1_path_cfg
    from internutopia_extension.configs.robots.g1 import move_by_speed_cfg as g1_speed_cfg

    task = FiniteStepTaskCfg(max_steps=1000, robots=[G1RobotCfg(controllers=[g1_speed_cfg, g1_path_cfg])])
    positions = []
    for sliced in (True, False):
        with Env(make_config([task] * 2, env_num=2)) as env:
            env.reset()
            group = next(iter(env.runner.robot_groups.values()))
            assert group._policy_slices is not None
            if not sliced:
                group._policy_slices = None
            for _ in range(60):
                out = env.step_arrays({'g1': {'move_along_path': np.repeat(np.asarray([[1.0, 0.5, 0.0]])[None], 2, axis=0)}})
            positions.append(out.obs['g1']['joint_positions'])
    np.testing.assert_array_equal(positions[0], positions[1])
    assert np.abs(positions[0]).max() > 0.05  # it walked


def _objects(tree, found):
    """Every dict and array of an observation tree, by id."""
    if isinstance(tree, dict):
        found[id(tree)] = tree
        for value in tree.values():
            _objects(value, found)
    elif isinstance(tree, np.ndarray):
        found[id(tree)] = tree
    return found


def _snapshot(tree):
    if isinstance(tree, dict):
        return {key: _snapshot(value) for key, value in tree.items()}
    return np.copy(tree) if isinstance(tree, np.ndarray) else tree


def test_dict_observations_are_each_slots_own_and_the_callers_to_keep(make_config):
    """The contract's per-slot observations share no dict or array with another slot or another
    step: a caller that keeps a step's observations, mutates one slot's, and steps on sees no
    change in the others nor in what it kept (whatever the fast paths build them from)."""
    shared = {'jetbot': {'move_along_path': [PATH]}}
    with Env(make_config([_task()] * 3, env_num=3)) as env:
        env.reset()
        first, _, _, _, first_info = env.step([shared] * 3)
        kept = [_snapshot(slot_obs) for slot_obs in first]
        kept_info = [dict(info) for info in first_info]
        # nothing shared between slots: no dict or array object, no array memory
        trees = [_objects(slot_obs, {}) for slot_obs in first]
        for a in range(3):
            for b in range(a + 1, 3):
                assert not trees[a].keys() & trees[b].keys()
                for x in trees[a].values():
                    for y in trees[b].values():
                        assert not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and np.shares_memory(x, y))
        # the caller changes slot 0's observation every way it can
        robot = first[0]['jetbot']
        robot['position'] += 100.0
        robot['joint_velocities'][:] = -7.0
        robot['controllers']['move_along_path']['current_point'][0] = 42.0
        robot['controllers']['move_along_path']['finished'] = 'mine'
        robot['controllers']['move_by_speed']['extra'] = 1
        robot['sensors']['mine'] = {}
        del robot['orientation']
        first_info[0]['steps'] = -1
        for slot in (1, 2):
            assert _same_tree(first[slot], kept[slot])
        later = [env.step([shared] * 3) for _ in range(20)]
        # what the caller kept (slots 1 and 2) did not change; slot 0 holds the caller's changes only
        for slot in (1, 2):
            assert _same_tree(first[slot], kept[slot])
            assert first_info[slot] == kept_info[slot]
        assert robot['position'][0] > 99.0 and robot['controllers']['move_along_path']['finished'] == 'mine'
        obs, _, _, _, info = later[-1]
        assert not np.array_equal(obs[1]['jetbot']['position'], kept[1]['jetbot']['position'])  # the robots moved
        # later steps' observations are whole and fresh, untouched by the caller's changes
        for slot_obs in obs:
            assert slot_obs['jetbot'].keys() == kept[1]['jetbot'].keys()
            assert slot_obs['jetbot']['controllers']['move_by_speed'] == {} and slot_obs['jetbot']['sensors'] == {}
            assert type(slot_obs['jetbot']['controllers']['move_along_path']['finished']) is bool
        assert [i['steps'] for i in info] == [21, 21, 21]
        steps = [_objects(step[0][slot], {}) for step in ([first, None], *later) for slot in range(3)]
        seen = {}
        for tree in steps:
            for key, value in tree.items():
                assert seen.setdefault(key, value) is value  # no object handed out twice
        ids = [set(tree) for tree in steps]
        assert sum(len(i) for i in ids) == len(set().union(*ids))


def test_row_splitter_follows_a_changed_structure():
    """A RowSplitter's generated split checks the structure it was made for; any other structure
    (keys in another order, a leaf that became one-dimensional, a dict subclass, a nested dict
    more) is split the general way, with the same result as a fresh split."""
    from collections import OrderedDict

    from internutopia.core.runner.observations import RowSplitter, split_rows

    splitter = RowSplitter()
    trees = [
        {'a': np.zeros((2, 3)), 'b': {'c': np.arange(2)}},
        {'a': np.ones((2, 3)), 'b': {'c': np.arange(2) + 5}},
        {'b': {'c': np.arange(2)}, 'a': np.zeros((2, 3))},
        {'a': np.arange(2), 'b': {'c': np.arange(2)}},
        {'a': np.zeros((2, 3)), 'b': OrderedDict(c=np.arange(2))},
        {'a': np.zeros((2, 3)), 'b': {'c': np.arange(2), 'd': {}}},
        {'a': [{'x': 1}, {'x': 2}], 'b': {'c': np.arange(2)}},
        {},
    ]
    for tree in trees:
        for wrap in (None, 'r'):
            rows, expected = splitter(tree, 2, wrap), split_rows(tree, 2, wrap)
            assert len(rows) == 2
            for row, want in zip(rows, expected, strict=True):
                assert list(row) == list(want) and _same_tree(row, want)
    rows = splitter(trees[1], 2)
    assert rows[1]['b']['c'] == 6 and type(rows[1]['b']['c']) is int and rows[0]['a'].base is trees[1]['a']
    import pytest

    with pytest.raises(ValueError, match='length 3 where 2 rows'):
        splitter({'a': np.zeros((2, 3)), 'b': {'c': np.arange(3)}}, 2)
