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
