"""The point-nav step's compiled loops (task, progress reward, SPL) and the goal in the robot's yaw
frame (``goal_vector``) give the numbers of their numpy versions to the bit, in a vector env that
reaches goals, runs out of time and restarts episodes."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from jit_helpers import on_path

import internutopia.envs  # noqa: F401  (registers the ids)
from internutopia.core.util import jit
from internutopia.core.util.math import quat_to_yaw
from internutopia.core.util.yaw_frame import _kernel, _numpy_rows, goal_in_yaw_frame, goals_in_yaw_frame
from internutopia.core.view import EntityTracker
from internutopia_extension.tasks.point_nav import PointNavTask


def _orientations(rng: np.random.Generator, k: int) -> np.ndarray:
    quat = rng.normal(size=(k, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    quat[0] = [0.5, -0.5, 0.5, 0.5]  # the base's x axis vertical: no heading (counted as yaw 0)
    quat[1] = [1.0, 0.0, 0.0, 0.0]
    quat[2] = [0.0, 0.0, 0.0, 1.0]  # facing -x
    return quat


def test_the_goal_in_the_yaw_frame_is_the_same_number_one_slot_numpy_and_compiled():
    rng = np.random.default_rng(7)
    k = 500
    goal, position, orientation = rng.normal(scale=3.0, size=(k, 3)), rng.normal(size=(k, 3)), _orientations(rng, k)
    one = np.array([goal_in_yaw_frame(g, p, q) for g, p, q in zip(goal, position, orientation, strict=True)])
    numpy_rows = np.empty((k, 2))
    _numpy_rows(goal, position, orientation, numpy_rows)
    np.testing.assert_array_equal(numpy_rows, one)
    if _kernel.available:
        np.testing.assert_array_equal(goals_in_yaw_frame(goal, position, orientation), one)
    with jit.numpy_only():
        np.testing.assert_array_equal(goals_in_yaw_frame(goal, position, orientation), one)
    # What it stands for: the offset rotated by minus the base's heading.
    yaw = quat_to_yaw(orientation)
    delta = goal[:, :2] - position[:, :2]
    expected = np.stack([np.cos(yaw) * delta[:, 0] + np.sin(yaw) * delta[:, 1],
                         -np.sin(yaw) * delta[:, 0] + np.cos(yaw) * delta[:, 1]], axis=1)
    np.testing.assert_allclose(one, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(one[0], delta[0])  # no heading: yaw 0
    np.testing.assert_array_equal(one[2], -delta[2])


def _run(compiled: bool) -> dict[str, list]:
    def run() -> dict[str, list]:
        # Goals 0.5-1.2 m away, 4 s time limits: the steered robots arrive, the random ones run out of time.
        env = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=6, min_distance=0.5, max_distance=1.2,
                           max_steps=240)
        try:
            runner = env.unwrapped._vec.runner
            env.reset(seed=3)
            task = runner.terms.tasks['PointNavTask']
            assert (task._step_kernel is not None) is compiled
            slices = env.unwrapped.layout.slices()
            rng = np.random.default_rng(1)
            seen: dict[str, list] = {'obs': [], 'reward': [], 'terminated': [], 'truncated': [], 'metrics': []}
            obs = env.reset(seed=3)[0]
            for _ in range(90):
                goal = obs[:, slices['goal_vector']]
                steer = np.stack([np.clip(goal[:, 0], -0.5, 0.5), np.clip(3.0 * np.arctan2(goal[:, 1], goal[:, 0]), -3, 3)], axis=1)
                random = rng.uniform(env.single_action_space.low, env.single_action_space.high, steer.shape)
                action = np.where(np.arange(6)[:, None] % 2 == 0, steer, random).astype(np.float32)
                obs, reward, terminated, truncated, info = env.step(action)
                for name, value in (('obs', obs), ('reward', reward), ('terminated', terminated), ('truncated', truncated)):
                    seen[name].append(value.copy())
                metrics = info.get('metrics', {})  # (Gymnasium's vector info: a column per metric, a mask beside it)
                seen['metrics'].append({name: np.asarray(column).tolist() for name, column in sorted(metrics.items())})
            return seen
        finally:
            env.close()

    return on_path(compiled, run)


@pytest.mark.skipif(not _kernel.available, reason='numba is not installed: only the numpy path exists')
@pytest.mark.parametrize('way', ['combined', 'apart', 'gathered', 'combined step failing'])
def test_a_point_nav_vector_env_steps_the_same_compiled_and_on_numpy(way, monkeypatch):
    """The compiled pass of the task, its progress reward and SPL metric (``combined_step``), the
    three compiled loops apart, with the robots' positions gathered (robots of several groups:
    no view of the state) or with the combined step raising now and then (the runner then steps
    the task slot by slot and the reward and metric apart): each gives the numpy path's numbers.
    (Compiled and combined, each action's six physics steps run as one recorded call, the task's
    recorded pass after it: ``tests/test_recorded_repeat.py``; the numpy path steps one by one.)"""
    raised = []
    if way == 'apart':
        monkeypatch.setattr(PointNavTask, 'combined_step', lambda self, rewards, metrics: None)
    elif way == 'gathered':
        monkeypatch.setattr(EntityTracker, 'position_rows', lambda self: None)
    elif way == 'combined step failing':
        combined_step = PointNavTask.combined_step

        def failing_now_and_then(self, rewards, metrics):
            combined = combined_step(self, rewards, metrics)
            if combined is None:  # (the numpy path)
                return None
            assert len(combined.rewards) == len(combined.metrics) == 1

            def step(slots):
                if len(raised) < 40 and self.view.steps[slots[0]] % 7 == 3:
                    raised.append(int(self.view.steps[slots[0]]))
                    raise RuntimeError('injected: the combined step failed')
                return combined.step(slots)

            return combined._replace(step=step, recorded=None)  # (step by step: the step that fails is called)

        monkeypatch.setattr(PointNavTask, 'combined_step', failing_now_and_then)
    compiled, numpy_path = _run(True), _run(False)
    assert bool(raised) is (way == 'combined step failing')
    for name in ('obs', 'reward', 'terminated', 'truncated'):
        np.testing.assert_array_equal(np.array(compiled[name]), np.array(numpy_path[name]), err_msg=name)
    assert compiled['metrics'] == numpy_path['metrics']
    terminated, truncated = np.array(compiled['terminated']), np.array(compiled['truncated'])
    assert terminated.any() and truncated.any()  # goals reached and time limits, both compared
    spl = [value for step in compiled['metrics'] for value, scored in zip(step.get('spl', []), step.get('_spl', []), strict=True) if scored]
    assert any(0.0 < value <= 1.0 for value in spl)  # a robot that arrived was scored on its path


def test_a_subclass_with_its_own_step_is_not_combined():
    """A task class that overrides ``PointNavTask.step`` runs that step: no combined pass skips it."""
    env = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=2)
    try:
        env.reset(seed=0)
        terms = env.unwrapped._vec.runner.terms
        task = terms.tasks['PointNavTask']
        rewards, metrics = list(terms.rewards.values()), list(terms.metrics.values())
        if _kernel.available:
            assert task.combined_step(rewards, metrics) is not None

        class OwnStep(PointNavTask):
            def step(self, slots):
                return super().step(slots)

        task.__class__ = OwnStep
        assert task.combined_step(rewards, metrics) is None
    finally:
        env.close()
