"""The same seed and actions give the same trajectories, whatever ran before and in every
autoreset mode, also for the walking robots, whose policies tick at 50 Hz on the world's clock."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

import internutopia.envs  # noqa: F401  (registers the ids)

ID = 'internutopia/H1PointNav-v0'
ACTION = np.full((2, 3), 0.3, dtype=np.float32)


def _vector(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return gym.make_vec(ID, num_envs=2, **kwargs)


def _physics_steps(vector) -> int:
    world = vector.unwrapped.vec_env.runner.world
    return round(world.time / vector.unwrapped.config.simulator.physics_dt)


def test_a_next_step_reset_of_every_env_runs_no_physics_and_the_episodes_match_same_step():
    """Gymnasium's NEXT_STEP step after every env ended only resets them: the world's clock does
    not move, so the next episodes start when they do in SAME_STEP mode and run the same."""
    clocks, observations = {}, {}
    for mode in ('NextStep', 'SameStep'):
        vector = _vector(autoreset_mode=mode, max_steps=30)  # (5 vector steps of 6 physics steps each)
        try:
            vector.reset(seed=0)
            clock, obs = [], []
            for _ in range(9):
                step_obs, _, terminated, truncated, _ = vector.step(ACTION)
                clock.append(_physics_steps(vector))
                obs.append(step_obs)
            clocks[mode], observations[mode] = clock, np.array(obs)
        finally:
            vector.close()
    assert clocks['SameStep'] == [6, 12, 18, 24, 30, 36, 42, 48, 54]
    assert clocks['NextStep'] == [6, 12, 18, 24, 30, 30, 36, 42, 48]  # (the 6th step only resets)
    # The second episodes' observations (NEXT_STEP's a step later) are the same to the last bit.
    assert np.array_equal(observations['NextStep'][5:], observations['SameStep'][4:8])
    assert not np.array_equal(observations['NextStep'][6], observations['NextStep'][5])  # (and they move)


@pytest.mark.parametrize('action_repeat', [4, 6])
def test_reset_with_a_seed_repeats_a_fresh_envs_trajectory_whatever_ran_before(action_repeat):
    """After steps that leave the world's clock between two of the walking policy's ticks, a
    reset with the same seed still repeats a fresh env's first episode step for step."""
    def roll(vector):
        out = [vector.reset(seed=0)[0]]
        out += [vector.step(ACTION)[0] for _ in range(4)]
        return np.array(out)

    fresh = _vector(autoreset_mode='SameStep', action_repeat=action_repeat)
    try:
        expected = roll(fresh)
    finally:
        fresh.close()
    vector = _vector(autoreset_mode='SameStep', action_repeat=action_repeat)
    try:
        roll(vector)
        vector.step(ACTION)  # (the clock now 5 vector steps on: not on a tick for a 4-step repeat at 240 Hz)
        assert np.array_equal(roll(vector), expected)
    finally:
        vector.close()
    assert not np.array_equal(expected[4], expected[0])  # (the robots walked)
