"""Property-based tests (hypothesis): for any action, reset list or config value, either a
``ValueError`` (pydantic's ``ValidationError`` is one) naming the bad id or field and no state
change, or a valid step.

CI runs a fixed, bounded set of examples (the ``ci`` profile in ``tests/conftest.py``);
``HYPOTHESIS_PROFILE=dev`` explores many more.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from pydantic import ValidationError

from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

ENV_NUM = 3
#: Envs live for the whole module: building one per example would dominate the run.
_slow_ok = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope='module')
def env():
    tasks = itertools.cycle([FiniteStepTaskCfg(max_steps=40, robots=[JetbotRobotCfg()]),
                             FiniteStepTaskCfg(max_steps=7, robots=[JetbotRobotCfg(position=(0.5, 0.5, 0.035))])])
    config = Config(simulator=SimConfig(physics_dt=1 / 120), env_num=ENV_NUM, metrics_save_path='none',
                    task_configs=[FiniteStepTaskCfg(robots=[JetbotRobotCfg()])])
    with Env(config, episodes=tasks) as built:
        built.reset()
        yield built


def snapshot(env) -> dict:
    """Everything a rejected call must leave as it was."""
    runner = env.runner
    return {
        'status': runner.status.copy(), 'steps': runner.steps.copy(), 'time': runner.world.time,
        'episodes': [e.index if e is not None else None for e in runner.episodes], 'queue': runner.queue.taken,
        'state': {slot: runner.world.slot_state(slot) for slot in range(ENV_NUM) if runner.world.pack(slot) is not None},
    }


def assert_unchanged(before: dict, after: dict) -> None:
    assert np.array_equal(before['status'], after['status']) and np.array_equal(before['steps'], after['steps'])
    assert before['time'] == after['time'] and before['episodes'] == after['episodes'] and before['queue'] == after['queue']
    assert before['state'].keys() == after['state'].keys()
    for slot, state in before['state'].items():
        for name, value in state.items():
            assert np.array_equal(value, after['state'][slot][name], equal_nan=True), (slot, name)


def keep_running(env) -> None:
    """Give done and empty slots new episodes, so every example finds active slots."""
    idle = [slot for slot in range(ENV_NUM) if slot not in env.active_slots]
    if idle:
        env.reset(idle)


# ------------------------------------------------------------------------------------------------
# values anything might pass
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10 ** 6, 10 ** 6), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4), st.complex_numbers(max_magnitude=10), st.just(b'\x00'),
)
anything = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner), st.dictionaries(st.text(max_size=3), inner, max_size=2),
), max_leaves=12)
controller_args = st.one_of(
    anything,
    st.lists(st.floats(-5, 5), min_size=1, max_size=4),                                   # plausible numbers
    st.lists(st.lists(st.floats(-5, 5), min_size=2, max_size=3), min_size=1, max_size=3),  # plausible paths
)
robot_names = st.sampled_from(['jetbot', 'h1', '', 'jet'])
controller_names = st.sampled_from(['move_by_speed', 'move_to_point', 'move_along_path', 'rotate', 'fly'])
entries = st.one_of(
    st.none(), st.just({}), anything,
    st.dictionaries(robot_names, st.one_of(st.none(), anything, st.dictionaries(controller_names, controller_args, max_size=2)),
                    max_size=2),
)


@_slow_ok
@given(action=st.one_of(anything, st.lists(entries, min_size=ENV_NUM, max_size=ENV_NUM)))
def test_any_action_is_a_valid_step_or_a_value_error_that_changes_nothing(env, action):
    keep_running(env)
    before = snapshot(env)
    try:
        obs, reward, terminated, truncated, info = env.step(action)
    except ValueError as error:
        assert str(error)
        assert_unchanged(before, snapshot(env))
        return
    assert len(obs) == len(reward) == len(terminated) == len(truncated) == len(info) == ENV_NUM
    for slot in before['status'].nonzero()[0]:
        if before['status'][slot] == 1:  # active before the step: a full result
            assert isinstance(reward[slot], float) and math.isfinite(reward[slot])
            assert np.isfinite(obs[slot]['jetbot']['position']).all()


@_slow_ok
@given(actions=st.dictionaries(robot_names, st.one_of(anything, st.dictionaries(controller_names, st.one_of(
    anything, st.lists(st.lists(st.floats(-3, 3), min_size=2, max_size=2), min_size=ENV_NUM, max_size=ENV_NUM),
    arrays(np.float64, st.tuples(st.integers(0, 4), st.integers(1, 3)), elements=st.floats(-3, 3)),
    arrays(st.sampled_from([np.bool_, np.int64, np.complex128, np.float32]), ENV_NUM * 2).map(lambda a: a.reshape(ENV_NUM, 2)),
), max_size=2)), max_size=2) | anything)
def test_any_batched_action_is_a_valid_step_or_a_value_error_that_changes_nothing(env, actions):
    keep_running(env)
    before = snapshot(env)
    try:
        out = env.step_arrays(actions)
    except ValueError as error:
        assert str(error)
        assert_unchanged(before, snapshot(env))
        return
    assert out.reward.shape == (ENV_NUM,) and np.isfinite(out.obs['jetbot']['position']).all()


reset_ids = st.one_of(
    st.integers(-3, ENV_NUM + 2), st.booleans(), st.floats(-1, 4), st.text(max_size=2), st.none(),
    st.builds(np.int64, st.integers(-2, ENV_NUM + 1)), st.builds(np.float64, st.floats(0, 2)),
)
reset_lists = st.one_of(
    st.none(), st.lists(reset_ids, max_size=ENV_NUM + 1), st.lists(st.integers(0, ENV_NUM - 1), unique=True, max_size=ENV_NUM),
    st.builds(np.array, st.lists(st.integers(-1, ENV_NUM), max_size=ENV_NUM)),
    st.builds(lambda rows: np.array(rows).reshape(1, -1), st.lists(st.integers(0, ENV_NUM - 1), min_size=1, max_size=2)),
    anything,
)


@_slow_ok
@given(reset_list=reset_lists)
def test_any_reset_list_resets_those_slots_or_is_a_value_error_that_changes_nothing(env, reset_list):
    before = snapshot(env)
    try:
        obs, info = env.reset(reset_list)
    except ValueError as error:
        assert 'env id' in str(error) or 'reset_list' in str(error)
        assert_unchanged(before, snapshot(env))
        return
    slots = list(range(ENV_NUM)) if reset_list is None else [int(s) for s in reset_list]
    assert len(obs) == len(info) == len(slots)
    assert all(o is not None and i is not None for o, i in zip(obs, info, strict=True))  # an endless queue
    assert set(slots) <= set(env.active_slots)
    assert all(env.runner.steps[slot] == 0 for slot in slots)


# ------------------------------------------------------------------------------------------------
# config values
numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10 ** 12, 10 ** 12), st.booleans(),
                    st.text(max_size=5), st.sampled_from(['1/240', '1/0', '1/', '0.01', 'inf', '-1/60']), st.none())
vectors = st.one_of(numbers, st.lists(numbers, max_size=5), st.tuples(numbers, numbers, numbers),
                    st.tuples(st.floats(-100, 100), st.floats(-100, 100), st.floats(0, 10)))
FIELDS = {
    'env_num': (lambda v: {'env_num': v}, numbers),
    'env_offset_size': (lambda v: {'env_offset_size': v}, numbers),
    'physics_dt': (lambda v: {'simulator': {'physics_dt': v}}, numbers),
    'rendering_dt': (lambda v: {'simulator': {'rendering_dt': v}}, numbers),
    'max_steps': (lambda v: {'task': {'max_steps': v}}, numbers),
    'position': (lambda v: {'robot': {'position': v}}, vectors),
    'orientation': (lambda v: {'robot': {'orientation': v}}, st.one_of(vectors, st.tuples(numbers, numbers, numbers, numbers))),
    'scale': (lambda v: {'robot': {'scale': v}}, vectors),
}


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(sorted(FIELDS)), data=st.data())
def test_any_config_value_is_rejected_naming_its_field_or_runs(field, data):
    where, strategy = FIELDS[field]
    value = data.draw(strategy, label=field)
    change = where(value)
    try:
        robot = JetbotRobotCfg(**change.get('robot', {}))
        task = FiniteStepTaskCfg(robots=[robot], **{'max_steps': 3, **change.get('task', {})})
        config = Config(simulator=SimConfig(**change.get('simulator', {})), metrics_save_path='none', task_configs=[task],
                        **{k: v for k, v in change.items() if k not in ('robot', 'task', 'simulator')})
    except ValidationError as error:
        assert any(field in map(str, e['loc']) for e in error.errors()), error
        return
    if config.env_num > 4 or config.simulator.physics_dt > 1.0:
        return  # valid, but not for a unit test to run (the memory check has its own test)
    with Env(config) as env:
        env.reset()
        obs, reward, terminated, truncated, info = env.step([None] * config.env_num)
        assert obs[0] is not None and math.isfinite(reward[0])  # a wild start pose may diverge: flagged, finite
        assert np.isfinite(obs[0]['jetbot']['position']).all()
        assert obs[1:] == [None] * (config.env_num - 1)  # one episode only
