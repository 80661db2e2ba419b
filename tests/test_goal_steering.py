"""The locomotion task's goal steering: one compiled pass over robots with different goal
tolerances (``steer_towards_each``) gives what steering each tolerance's robots apart with numpy
gives, and the robots reach, advance and hold their goals as ``move_to_point`` would."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from internutopia.core.util import jit
from internutopia_extension.controllers import steering
from internutopia_extension.controllers.steering import steer_towards, steer_towards_each


def _poses(rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray]:
    yaw = rng.uniform(-np.pi, np.pi, k)
    orientation = np.stack([np.cos(yaw / 2), np.zeros(k), np.zeros(k), np.sin(yaw / 2)], axis=1)
    return rng.normal(size=(k, 3)), orientation


@pytest.mark.parametrize('numpy_path', [False, True], ids=['compiled', 'numpy'])
def test_each_base_steers_with_its_own_threshold(numpy_path):
    rng = np.random.default_rng(4)
    k = 40
    position, orientation = _poses(rng, k)
    goal = position + rng.normal(scale=1.5, size=(k, 3))
    thresholds = rng.choice([0.05, 0.1, 0.4], size=k)
    goal[:6, :2] = position[:6, :2] + [0.08, 0.0]  # within 0.1 and 0.4 of the goal, not within 0.05
    thresholds[:6] = [0.05, 0.05, 0.05, 0.1, 0.4, 0.1]
    inputs = (position.copy(), orientation.copy(), goal.copy(), thresholds.copy())
    if numpy_path:
        with jit.numpy_only():
            velocity, arrived = steer_towards_each(position, orientation, goal, 0.7, 0.9, thresholds)
    else:
        velocity, arrived = steer_towards_each(position, orientation, goal, 0.7, 0.9, thresholds)
    for threshold in np.unique(thresholds):  # each threshold's rows as steer_towards gives them
        rows = thresholds == threshold
        expected_velocity, expected_arrived = steering._steer_numpy(position[rows], orientation[rows], goal[rows],
                                                                       0.7, 0.9, float(threshold))
        np.testing.assert_array_equal(arrived[rows], expected_arrived)
        np.testing.assert_allclose(velocity[rows], expected_velocity, rtol=0, atol=1e-12)
    assert arrived[3:6].all() and not arrived[:3].any()  # the 8 cm goals: arrived only where the threshold allows
    assert not np.all(velocity[~arrived] == 0.0, axis=1).any()  # the others move
    for given, kept in zip((position, orientation, goal, thresholds), inputs, strict=True):
        np.testing.assert_array_equal(given, kept)  # inputs never written


def test_one_threshold_for_all_is_steer_towards():
    rng = np.random.default_rng(5)
    position, orientation = _poses(rng, 12)
    goal = position + rng.normal(size=(12, 3))
    velocity, arrived = steer_towards_each(position, orientation, goal, 0.5, 1.0, np.full(12, 0.3))
    expected_velocity, expected_arrived = steer_towards(position, orientation, goal, 0.5, 1.0, 0.3)
    np.testing.assert_array_equal(velocity, expected_velocity)
    np.testing.assert_array_equal(arrived, expected_arrived)


def _steered(numpy_path: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eight walking H1s given goals with two tolerances, steered once per tick for 1 s of random
    leg actions: their goal indices, held commands and positions after each tick."""
    env = gym.make_vec('internutopia/H1Walk-v0', num_envs=8, seconds=5.0, pushes=False)
    try:
        env.reset(seed=3)
        task = next(iter(env.unwrapped._vec.runner.terms.tasks.values()))
        slots = np.arange(8)
        group = next(task.robot.groups(slots))[0]
        position = group.bound_world.data.qpos[slots][:, :2]  # (the root's columns come first in H1's qpos)
        # Two goals each: the first at the robot's feet for half of them (reached on the first
        # tick), 5 cm away for slots 2 and 3 (reached with the 0.1 m tolerance only).
        offsets = np.array([[0.0, 0.0], [0.0, 0.0], [0.05, 0.0], [0.0, 0.05], [1.0, 0.5], [-1.0, 0.3], [0.5, -2.0], [2.0, 2.0]])
        task.goal_points = np.zeros((8, 2, 3))
        task.goal_points[:, 0, :2] = position + offsets
        task.goal_points[:, 1, :2] = position + np.array([1.0, -1.0])
        task.has_goals[:] = True
        task.goal_count[:] = 2
        task.goal_index[:] = 0
        task.goal_speed[:] = np.linspace(0.4, 1.0, 8)
        task.goal_tolerance[:] = [0.05, 0.1, 0.1, 0.05, 0.05, 0.1, 0.05, 0.1]
        walker = group.walker
        rng = np.random.default_rng(1)
        indices, commands, positions = [], [], []
        for _ in range(50):
            if numpy_path:
                with jit.numpy_only():
                    task._steer(slots)
            else:
                task._steer(slots)
            indices.append(task.goal_index.copy())
            commands.append(walker.held_command.copy())
            positions.append(group.bound_world.data.qpos[slots][:, :3].copy())
            env.step(0.1 * rng.uniform(-1, 1, env.action_space.shape))
        return np.array(indices), np.array(commands), np.array(positions)
    finally:
        env.close()


def test_the_task_steers_the_same_compiled_and_on_numpy():
    compiled, numpy_run = _steered(False), _steered(True)
    for got, expected in zip(compiled, numpy_run, strict=True):
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    indices, commands, _ = compiled
    # The goals at the feet were reached on the first tick; the 5 cm ones with 0.1 m only.
    assert indices[0].tolist()[:4] == [1, 1, 1, 0]
    assert np.all(indices[0][4:] == 0)
    assert np.abs(commands).max() > 0.0 and np.all(np.abs(commands[:, :, 1]) == 0.0)  # steering: no sideways part
