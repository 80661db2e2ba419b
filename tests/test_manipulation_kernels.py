"""The manipulation task's compiled step (``manipulation_kernels.place_rows``) against its numpy
reference: the same pick-and-place state, successes, reward terms and rewards, for every goal kind,
held and released objects, objects at rest and moving, NaN and unreachable tool frames."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from internutopia_extension.configs.tasks.manipulation_task import REWARD_TERMS
from internutopia_extension.tasks import manipulation
from internutopia_extension.tasks.manipulation import ManipulationTask
from internutopia_extension.tasks.manipulation_kernels import place_kernel


def _state(rng: np.random.Generator, n: int) -> SimpleNamespace:
    table = np.zeros((len(REWARD_TERMS), n))
    return SimpleNamespace(
        goal=rng.uniform(-0.5, 0.5, (n, 3)), start_height=rng.uniform(0.0, 0.05, n), success_distance=rng.uniform(0.02, 0.2, n),
        goal_kind=rng.integers(0, 3, n).astype(np.int64), rest_needed=rng.integers(1, 4, n).astype(np.int64),
        reward_scales=rng.uniform(0.0, 3.0, (n, len(REWARD_TERMS))), held=rng.random(n) < 0.5, lifted=rng.random(n) < 0.5,
        dropped=rng.random(n) < 0.2, distance=np.full(n, np.nan), rest_steps=rng.integers(0, 3, n).astype(np.int64),
        success=np.zeros(n, dtype=bool), _term_table=table,
        reward_terms={name: table[column] for column, name in enumerate(REWARD_TERMS)})


def _inputs(rng: np.random.Generator, slots: np.ndarray, state: SimpleNamespace) -> tuple:
    k = len(slots)
    position = state.goal[slots] + rng.normal(0.0, 0.08, (k, 3))  # near the goal, some within success distance
    tcp = position + rng.normal(0.0, 0.04, (k, 3))  # often within the hold distance
    tcp[0] = np.inf  # a robot without a gripper
    tcp[1] = np.nan
    velocity = np.concatenate((rng.normal(0.0, 0.03, (k, 3)), rng.normal(0.0, 0.6, (k, 3))), axis=1)  # at rest or not
    opened, opening = rng.random(k) < 0.5, rng.random(k) < 0.5
    return position, velocity, tcp, opened, opening


@pytest.mark.skipif(not place_kernel.available, reason='numba is not available: only the numpy step runs here')
def test_the_compiled_step_gives_the_numpy_steps_state_and_rewards():
    rng = np.random.default_rng(11)
    n = 40
    numpy_state, compiled_state = _state(np.random.default_rng(3), n), _state(np.random.default_rng(3), n)
    kernel = place_kernel.compiled_or(None)
    kinds_seen = set()
    for _ in range(30):  # steps in a row: rest counts, lifts and drops carry over
        slots = np.sort(rng.choice(n, size=24, replace=False)).astype(np.intp)
        inputs = _inputs(rng, slots, numpy_state)
        kinds_seen.update(numpy_state.goal_kind[slots].tolist())
        success, reward = ManipulationTask._place_numpy(numpy_state, slots, *inputs)
        got_success, got_reward = np.empty(len(slots), dtype=bool), np.empty(len(slots))
        s = compiled_state
        kernel(slots, *inputs, s.goal, s.start_height, s.success_distance, s.goal_kind, s.rest_needed, s.reward_scales,
               s.held, s.lifted, s.dropped, s.held, s.lifted, s.distance, s.rest_steps, s.success, s._term_table,
               manipulation.HOLD_DISTANCE, manipulation.LIFT_HEIGHT, manipulation.PICK_HEIGHT, manipulation.REST_SPEED,
               manipulation.REST_SPIN, manipulation.TANH_SCALE, got_success, got_reward)
        np.testing.assert_array_equal(got_success, success)
        np.testing.assert_allclose(got_reward, reward, rtol=1e-14, atol=0.0)
        for name in ('held', 'lifted', 'dropped', 'rest_steps', 'success'):
            np.testing.assert_array_equal(getattr(compiled_state, name), getattr(numpy_state, name), err_msg=name)
        np.testing.assert_array_equal(compiled_state.distance, numpy_state.distance)
        np.testing.assert_allclose(compiled_state._term_table, numpy_state._term_table, rtol=1e-14, atol=0.0)
    assert kinds_seen == {0, 1, 2}
    assert numpy_state.held.any() and numpy_state.success.any() and (numpy_state.rest_steps > 0).any()
