"""The compiled walking payment (:mod:`internutopia_extension.robots.locomotion_rewards_kernel`)
against the numpy terms it twins: the same table, sums, falls and tracking errors for every
walking robot's reward numbers, and the same rewards through ``internutopia/H1Walk-v0``."""

from __future__ import annotations

import importlib

import gymnasium as gym
import numpy as np
import pytest
from jit_helpers import on_path

from internutopia.core.util import jit
from internutopia_extension.robots.h1_locomotion.walker import WalkState
from internutopia_extension.robots.locomotion_rewards_kernel import TERM_ORDER, CompiledPayment
from internutopia_extension.tasks.locomotion import _ONCE, _PER_SECOND, _TERM_NAMES

pytestmark = pytest.mark.skipif(not jit.enabled(), reason='numba is turned off or missing: the numpy path is the only one')

ENV_NUM, ROWS = 40, 24


def _state(robot: str, rng: np.random.Generator) -> WalkState:
    """Random walk states with every case the terms branch on: stopped and running clocks, feet up
    and down, loaded and not, fallen and upright robots."""
    gait = importlib.import_module(f'internutopia_extension.robots.{robot}_locomotion.gait')
    legs, feet = gait.ACTION_SIZE, 4 if robot == 'aliengo' else 2
    quat = rng.normal(size=(ROWS, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    quat[:ROWS // 2] = (1.0, 0.0, 0.0, 0.0)
    qpos = rng.normal(size=(ROWS, 30))  # (the walker passes column views of its gathered rows)
    return WalkState(height=qpos[:, 2] * 0.3 + 0.8, gravity=gait.projected_gravity(quat), lin_vel=rng.normal(size=(ROWS, 3)),
                     ang_vel=qpos[:, 3:6], leg_q=qpos[:, 6:6 + legs], leg_dq=qpos[:, 6:6 + legs] * 7,
                     action=rng.uniform(-1, 1, (ROWS, legs)), last_action=rng.uniform(-1, 1, (ROWS, legs)),
                     command=rng.uniform(-1, 1, (ROWS, 3)), stance=rng.random((ROWS, feet)) < 0.5, moving=rng.random(ROWS) < 0.5,
                     touch=rng.uniform(0, 20, (ROWS, feet)), foot_height=rng.uniform(0, 0.2, (ROWS, feet)),
                     foot_speed=rng.uniform(0, 1, (ROWS, feet)), foot_lateral=rng.normal(size=(ROWS, feet)) * 0.2)


@pytest.mark.parametrize('robot', ['h1', 'aliengo', 'gr1'])
def test_the_compiled_payment_is_the_numpy_terms_sums_falls_and_errors(robot):
    rewards = importlib.import_module(f'internutopia_extension.robots.{robot}_locomotion.rewards')
    rng = np.random.default_rng(11)
    state = _state(robot, rng)
    scales = rng.normal(size=(ENV_NUM, len(_TERM_NAMES)))
    members = rng.permutation(ENV_NUM)[:ROWS]  # slots in any order
    span = rng.integers(1, 5, ROWS)
    table, tracking, yaw = np.zeros((ENV_NUM, len(_TERM_NAMES))), np.ones(ENV_NUM), np.ones(ENV_NUM)
    payment = CompiledPayment(_TERM_NAMES, _ONCE, scales, table, tracking, yaw)
    assert payment.available
    paid, paid_once, fell = payment.pay(rewards.SPEC, state, span, members)

    terms = rewards.reward_terms(state)
    expected = np.stack([terms[name] for name in _TERM_NAMES], axis=1)
    np.testing.assert_allclose(table[members], expected, rtol=1e-12, atol=1e-15)
    untouched = np.setdiff1d(np.arange(ENV_NUM), members)
    assert not table[untouched].any()
    weighted = scales[members] * expected
    np.testing.assert_allclose(paid, weighted[:, _PER_SECOND].sum(axis=1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(paid_once, weighted[:, _ONCE].sum(axis=1), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(fell, rewards.fallen(state))
    assert fell.any() and not fell.all()  # both cases were compared
    if robot == 'h1':  # H1 has the foot-placement term (a sideways landing spot); its rows were compared
        assert expected[:, _TERM_NAMES.index('foot_placement')].any()
    planar = np.linalg.norm(state.command[:, :2] - state.lin_vel[:, :2], axis=1)
    np.testing.assert_allclose(tracking[members], 1.0 + span * planar, rtol=1e-12)
    np.testing.assert_allclose(yaw[members], 1.0 + span * np.abs(state.command[:, 2] - state.ang_vel[:, 2]), rtol=1e-12)
    assert np.all(tracking[untouched] == 1.0) and np.all(yaw[untouched] == 1.0)
    assert sorted(TERM_ORDER) == sorted(_TERM_NAMES)


def _rewards(compiled: bool) -> tuple[list, list]:
    def run() -> tuple[list, list]:
        env = gym.make_vec('internutopia/H1Walk-v0', num_envs=4, seconds=1.0)
        try:
            env.reset(seed=5)
            task = next(iter(env.unwrapped._vec.runner.terms.tasks.values()))
            assert task.payment.available is compiled
            rng = np.random.default_rng(2)
            rewards, ended = [], []
            for _ in range(60):  # 1.2 s of random leg actions: falls, time limits, new episodes
                _, reward, terminated, truncated, _ = env.step(rng.uniform(-1, 1, env.action_space.shape))
                rewards.append(reward)
                ended.append(terminated | truncated)
            return rewards, ended
        finally:
            env.close()

    return on_path(compiled, run)


def test_h1walk_pays_the_same_rewards_compiled_and_on_numpy():
    (compiled, compiled_ended), (numpy_rewards, numpy_ended) = _rewards(True), _rewards(False)
    np.testing.assert_array_equal(np.array(compiled_ended), np.array(numpy_ended))
    assert np.array(compiled_ended).any()
    np.testing.assert_allclose(np.array(compiled), np.array(numpy_rewards), rtol=1e-9, atol=1e-12)
    assert np.abs(np.array(compiled)).max() > 0.0
