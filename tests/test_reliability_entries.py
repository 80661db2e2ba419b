"""Bad input that a defect hunt found slipping through, each refused with an error that names it
and leaving every slot as it was: ``observe_only`` of the wrong form or with unknown names, a
step's ``reset_list`` whose next episode does not load, numbers past a float's range, actions of
bools or text through the Gymnasium adapters, bad seeds, a point-nav id's bad ``action_repeat`` and
``physics_dt``, and configs edited past their validators (in place, or with ``model_copy``)."""

from __future__ import annotations

import json
import math

import gymnasium as gym
import numpy as np
import pytest

import internutopia.envs  # noqa: F401  (registers the ids)
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, move_by_speed_cfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


def jetbot_task(max_steps=50, **kw):
    return FiniteStepTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg(controllers=[move_by_speed_cfg], **kw)])


def speeds(env_num, forward=0.3):
    return {'jetbot': {'move_by_speed': np.tile([forward, 0.0], (env_num, 1))}}


def state(env):
    """What a rejected call must leave as it was: every slot's step count, episode and physics state."""
    runner = env.runner
    return (runner.table.steps.copy(), [e.index if e is not None else None for e in runner.episodes],
            [pack.batch.state.copy() for pack in runner.world.packs.values()], len(runner.queue))


def assert_unchanged(env, before, queue=True):
    """``queue=False``: an episode that failed to load went back to the queue (its next try)."""
    after = state(env)
    np.testing.assert_array_equal(after[0], before[0])
    assert after[1] == before[1] and (after[3] == before[3] or not queue)
    for a, b in zip(after[2], before[2], strict=True):
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------------------------------------
# observe_only
@pytest.mark.parametrize(('only', 'message'), [
    (['jetbot'], r'observe_only must be a dict .* got a list'),
    ({'jetbot': 'position'}, r"observe_only\['jetbot'\] must be None .* got 'position'"),
    ({'jetbot': ['position', 5]}, r"observe_only\['jetbot'\] must be None"),
    ({3: None}, r'keys are robot names or task keys \(str\); got 3'),
    ({'jetbto': None}, r"no entry 'jetbto' in the observation; its entries: \['jetbot'\]"),
])
@pytest.mark.parametrize('repeat', [1, 3])
def test_a_bad_observe_only_is_refused_and_no_episode_fails(make_config, tmp_path, only, message, repeat):
    path = tmp_path / 'records.jsonl'
    with Env(make_config([jetbot_task()] * 4, env_num=3, metrics_save_path=str(path))) as env:
        env.reset()
        env.step_arrays(speeds(3))
        before = state(env)
        with pytest.raises(ValueError, match=message):
            env.step_arrays(speeds(3), observe_only=only, repeat=repeat)
        assert_unchanged(env, before)
        out = env.step_arrays(speeds(3), observe_only={'jetbot': {'position'}})
        assert list(out.obs['jetbot']) == ['position'] and out.active.all() and not out.failed
    assert path.read_text() == '' or all(json.loads(line).get('outcome') != 'failed' for line in path.read_text().splitlines())


def test_a_reset_refuses_an_observe_only_of_the_wrong_form(make_config, tmp_path):
    path = tmp_path / 'records.jsonl'
    with Env(make_config([jetbot_task()] * 8, env_num=3, metrics_save_path=str(path))) as env:
        with pytest.raises(ValueError, match='observe_only must be a dict'):
            env.reset_arrays(observe_only=['jetbot'])
        assert env.runner.episodes == [None] * 3 and len(env.runner.queue) == 8
        obs, info = env.reset_arrays(observe_only={'jetbot': ['position']})
        assert list(obs['jetbot']) == ['position'] and all(i is not None for i in info)
    assert 'failed' not in path.read_text()


def test_an_observe_only_changed_between_steps_is_checked_again(make_config):
    only = {'jetbot': frozenset({'position'})}  # (what a Gymnasium env passes step after step)
    with Env(make_config([jetbot_task()], env_num=1)) as env:
        env.reset()
        for _ in range(2):
            assert list(env.step_arrays(speeds(1), observe_only=only).obs['jetbot']) == ['position']
        only['nope'] = None
        with pytest.raises(ValueError, match="no entry 'nope'"):
            env.step_arrays(speeds(1), observe_only=only)
        del only['nope']
        only['jetbot'] = frozenset({'orientation'})
        assert list(env.step_arrays(speeds(1), observe_only=only).obs['jetbot']) == ['orientation']


def test_the_callers_observe_only_is_not_changed(make_config):
    only = {'jetbot': ['position']}
    with Env(make_config([jetbot_task()], env_num=1)) as env:
        env.reset()
        env.step_arrays(speeds(1), observe_only=only)
    assert only == {'jetbot': ['position']} and type(only['jetbot']) is list


# ------------------------------------------------------------------------------------------------
# a step's reset_list whose next episode does not load
def test_a_step_whose_restart_does_not_load_is_not_taken(make_config, tmp_path):
    misspelt = jetbot_task()
    misspelt.robots[0].type = 'NoSuchRobot'

    def episodes():
        yield jetbot_task(max_steps=2)
        yield jetbot_task(max_steps=3)
        yield misspelt  # (episode 2)
        while True:
            yield jetbot_task()

    path = tmp_path / 'records.jsonl'
    with Env(make_config([jetbot_task()], env_num=2, metrics_save_path=str(path)), episodes=episodes()) as env:
        env.reset()
        env.step_arrays(speeds(2))
        out = env.step_arrays(speeds(2))
        assert out.truncated.tolist() == [True, False]  # slot 0's episode ended
        for _ in range(2):  # (two tries of episode 2)
            before = state(env)
            with pytest.raises(ValueError, match=r"unknown robot type 'NoSuchRobot' \(in task_configs\[2\]"):
                env.step_arrays(speeds(2), reset_list=[0])
            assert_unchanged(env, before, queue=False)  # not stepped: slot 1's episode did not end unseen
        out = env.step_arrays(speeds(2))
        assert out.truncated.tolist() == [False, True]  # slot 1's last step, seen by the caller
        with pytest.raises(ValueError, match='failed to load 3 time'):
            env.step_arrays(speeds(2), reset_list=[0])  # the third try: recorded as failed
        out = env.step_arrays(speeds(2), reset_list=[0, 1])
        assert [c.robots[0].type for c in out.started] == ['JetbotRobot', 'JetbotRobot']
        assert [e.index for e in env.runner.episodes] == [3, 4]
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert sorted(r['episode_index'] for r in records) == [0, 1, 2, 3, 4]  # (3 and 4 abandoned by the close)
    assert [r['episode_index'] for r in records if r.get('outcome') == 'abandoned'] == [3, 4]
    assert [(r['episode_index'], r['attempts']) for r in records if r.get('outcome') == 'failed'] == [(2, 3)]


# ------------------------------------------------------------------------------------------------
# numbers
def test_an_int_past_a_floats_range_is_refused_naming_the_slot(make_config):
    with Env(make_config([jetbot_task()] * 3, env_num=3)) as env:
        env.reset()
        before = state(env)
        good = {'jetbot': {'move_by_speed': [0.3, 0.0]}}
        with pytest.raises(ValueError, match=r"action\[2\]\['jetbot'\]\['move_by_speed'\]: .*must be numbers"):
            env.step([good, good, {'jetbot': {'move_by_speed': [10 ** 400, 0.0]}}])
        with pytest.raises(ValueError, match=r"batched actions\['jetbot'\]\['move_by_speed'\]: .*must be numbers"):
            env.step_arrays({'jetbot': {'move_by_speed': [[0.3, 0.0], [10 ** 400, 0.0], [0.3, 0.0]]}})
        assert_unchanged(env, before)


@pytest.mark.parametrize(('actions', 'message'), [
    (np.zeros((2, 2), dtype=bool), 'an array of bools'),
    ([['0.1', '0']] * 2, "the text '0.1'"),
    (np.zeros((2, 2), dtype=complex) + 1j, 'an array of complex numbers'),
    ([[10 ** 400, 0]] * 2, 'an int past the range of a float'),
])
def test_the_gymnasium_envs_take_numbers_only(actions, message):
    envs = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=2)
    envs.reset(seed=0)
    steps = envs.unwrapped.vec_env.runner.table.steps.copy()
    with pytest.raises(ValueError, match=f'actions must be numbers of shape \\(2, 2\\); got {message}'):
        envs.step(actions)
    np.testing.assert_array_equal(envs.unwrapped.vec_env.runner.table.steps, steps)
    envs.close()
    env = gym.make('internutopia/JetbotPointNav-v0')
    env.reset(seed=0)
    with pytest.raises(ValueError, match='actions must be numbers'):
        env.step(['0.1', '0'])
    env.close()


# ------------------------------------------------------------------------------------------------
# seeds and a point-nav id's arguments
@pytest.mark.parametrize('seed', [[3, -2], [5, 'x'], 1.5, True, -1])
def test_a_bad_seed_is_refused_and_seeds_nothing(seed):
    envs = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=2)
    envs.reset(seed=7)
    goals = envs.unwrapped.call('task_config')
    with pytest.raises(ValueError, match=r'seed must be a non-negative int, or a list of them'):
        envs.reset(seed=seed)
    assert envs.unwrapped.np_random_seed == 7
    _, info = envs.reset(seed=7)  # the same seed: the same episodes as before
    assert [t.goal for t in envs.unwrapped.call('task_config')] == [t.goal for t in goals]
    envs.close()


@pytest.mark.parametrize(('kwargs', 'message'), [
    ({'action_repeat': 0}, 'action_repeat must be an int >= 1; got 0'),
    ({'physics_dt': 0}, 'physics_dt must be a finite number of seconds > 0; got 0'),
    ({'physics_dt': math.nan}, 'physics_dt must be a finite number of seconds > 0; got nan'),
    ({'physics_dt': -0.01}, 'physics_dt must be a finite number of seconds > 0; got -0.01'),
])
def test_a_point_nav_ids_bad_arguments_name_themselves(kwargs, message):
    for make in (lambda: gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=2, **kwargs),
                 lambda: gym.make('internutopia/JetbotPointNav-v0', **kwargs)):
        with pytest.raises(ValueError, match=message):
            make()


# ------------------------------------------------------------------------------------------------
# configs edited past their validators
def test_a_robot_appended_in_place_is_checked_when_the_env_is_built(make_config):
    config = make_config([jetbot_task()], env_num=2)
    config.task_configs[0].robots.append(JetbotRobotCfg(position=(1.0, 0.0, 0.05)))
    with pytest.raises(ValueError, match=r"task_configs\[0\]\.robots: names must be unique; repeated: \['jetbot'\]"):
        Env(config)
    config = make_config([jetbot_task()], env_num=2)
    config.task_configs[0].robots[0].controllers.append(move_by_speed_cfg)
    with pytest.raises(ValueError, match=r"task_configs\[0\]\.robots\[0\]\.controllers: names must be unique"):
        Env(config)
    config = make_config([jetbot_task()], env_num=2)
    config.task_configs[0].robots.append('x')
    with pytest.raises(ValueError, match=r'task_configs\[0\]\.robots\[1\] is a str, expected a RobotCfg'):
        Env(config)


def test_a_drawn_episode_edited_past_its_validators_fails_to_load(make_config, tmp_path):
    broken = jetbot_task()
    broken.robots.append(JetbotRobotCfg(position=(1.0, 0.0, 0.05)))
    path = tmp_path / 'records.jsonl'
    with Env(make_config([jetbot_task()], env_num=1, metrics_save_path=str(path)), episodes=iter([broken, jetbot_task()])) as env:
        for _ in range(2):
            with pytest.raises(ValueError, match='names must be unique'):
                env.reset()
        with pytest.raises(ValueError, match='failed to load 3 time'):
            env.reset()
        _, info = env.reset()
        assert info[0] is not None and len(info[0].robots) == 1


@pytest.mark.parametrize(('update', 'message'), [
    ({'env_num': 0}, 'env_num must be >= 1; got 0'),
    ({'env_num': -3}, 'env_num must be >= 1; got -3'),
    ({'env_offset_size': -1.0}, 'env_offset_size'),
])
def test_a_config_copied_with_bad_values_is_refused(make_config, update, message):
    with pytest.raises(ValueError, match=message):
        Env(make_config([jetbot_task()], env_num=2).model_copy(update=update))


# ------------------------------------------------------------------------------------------------
# episode_errors='raise' at the first reset
def test_a_first_reset_that_raises_after_it_is_complete_leaves_the_env_stepping(make_config, tmp_path, monkeypatch):
    """With ``episode_errors='raise'`` a start that fails is raised once the reset is complete: the
    episodes that started run, and the env steps on (it used to ask for a reset first), and an
    observer (a recording) sees that reset."""
    from internutopia_extension.tasks.finite_step import FiniteStepTask

    def reset_slot(self, slot, config, _real=FiniteStepTask.reset_slot):
        if config.max_steps == 7:
            raise RuntimeError('start broke')
        return _real(self, slot, config)

    monkeypatch.setattr(FiniteStepTask, 'reset_slot', reset_slot)
    seen = []

    class Watching:
        def on_reset(self, slots, obs, info):
            seen.append((slots, [o is not None for o in obs], [i.max_steps if i is not None else None for i in info]))

        def on_step(self, action, result):
            seen.append('step')

        def on_close(self):
            pass

    tasks = [jetbot_task(5), jetbot_task(7), jetbot_task(6), jetbot_task(8)]
    with Env(make_config(tasks, env_num=2, episode_errors='raise', episode_attempts=1)) as env:
        env.add_observer(Watching())
        with pytest.raises(RuntimeError, match='start broke'):
            env.reset()
        assert env.active_slots == [0, 1] and [e.index for e in env.runner.episodes] == [0, 2]
        _, _, _, _, info = env.step([None, None])
        assert [i['steps'] for i in info] == [1, 1]
        env.warm_up(1)
    assert seen == [([0, 1], [True, True], [5, 6]), 'step']
