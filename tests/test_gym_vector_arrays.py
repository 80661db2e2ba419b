"""The vector envs' array path (``vec_env.Env.step_arrays``, batched end to end) gives bit for bit
the observations, rewards, flags and infos of the per-slot dict path, in every autoreset mode."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import internutopia.envs  # noqa: F401  (registers the ids)

CASES = [
    ('internutopia/JetbotPointNav-v0', {'max_steps': 60}, 40),      # goal_vector (a derived feature), time limits
    ('internutopia/H1Walk-v0', {'seconds': 0.2}, 16),              # the walking policy's observation, episode ends
    ('internutopia/FrankaReach-v0', {}, 6),                        # two controllers in one action, scene objects
]


def _run(env_id: str, kwargs: dict, mode: str, array_path: bool, steps: int) -> list[Any]:
    env = gym.make_vec(env_id, num_envs=3, autoreset_mode=mode, **kwargs)
    inner = env.unwrapped
    assert inner.array_path  # these ids take the array path by default
    inner.array_path = array_path
    out: list[Any] = [env.reset(seed=3)]
    rng = np.random.default_rng(1)
    for _ in range(steps):
        if mode == 'Disabled' and inner._ended.any():
            out.append(env.reset(options={'reset_mask': inner._ended.copy()}))
        out.append(env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)))
    env.close()
    return out


def _assert_same(a: Any, b: Any, path: str = '') -> None:
    if isinstance(a, dict):
        assert set(a) == set(b), (path, set(a) ^ set(b))
        for key in a:
            _assert_same(a[key], b[key], f'{path}.{key}')
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _assert_same(x, y, f'{path}[{i}]')
    elif isinstance(a, np.ndarray):
        assert (a.dtype, a.shape) == (b.dtype, b.shape), path
        if a.dtype == object:
            _assert_same(list(a), list(b), path)
        else:
            assert np.array_equal(a, b, equal_nan=True), path
    else:
        assert type(a) is type(b) and str(a) == str(b), (path, a, b)


@pytest.mark.parametrize('mode', ['NextStep', 'SameStep', 'Disabled'])
@pytest.mark.parametrize(('env_id', 'kwargs', 'steps'), CASES)
def test_array_path_equals_the_dict_path(env_id: str, kwargs: dict, steps: int, mode: str) -> None:
    dicts = _run(env_id, kwargs, mode, False, steps)
    arrays = _run(env_id, kwargs, mode, True, steps)
    _assert_same(dicts, arrays)
    if env_id != 'internutopia/FrankaReach-v0':  # (its episodes outlast the few steps)
        assert any(np.any(r[2] | r[3]) for r in dicts if len(r) == 5), 'no episode ended: autoreset untested'


def test_step_arrays_without_observing_gives_only_the_final_observations(make_config) -> None:
    """``observe=False`` (for a caller that repeats an action and reads only the last step's
    observation; the vector envs now repeat inside ``step_arrays(repeat=...)``) observes just the
    slots whose episode ended; skipping the others changes nothing that a later observed step reports."""
    from internutopia.core.vec_env import Env
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
    from internutopia_extension.configs.tasks import FiniteStepTaskCfg

    def make() -> Env:
        tasks = [FiniteStepTaskCfg(max_steps=n, robots=[JetbotRobotCfg()]) for n in (3, 5)]
        env = Env(make_config(tasks, env_num=2))
        env.reset()
        return env

    speeds = {'jetbot': {'move_by_speed': np.array([[0.3, 0.2], [0.2, -0.4]])}}
    seen, skipped = make(), make()
    for step in range(1, 6):
        full, part = seen.step_arrays(speeds), skipped.step_arrays(speeds, observe=step == 5)
        assert part.reward.tolist() == full.reward.tolist() and part.truncated.tolist() == full.truncated.tolist()
        if step in (1, 2, 4):
            assert part.obs == {}  # nobody ended: nothing observed
        elif step == 3:  # slot 0's episode ended: its final observation, slot 1's row is zeros
            np.testing.assert_array_equal(part.obs['jetbot']['position'][0], full.obs['jetbot']['position'][0])
            assert not part.obs['jetbot']['position'][1].any()
        else:
            np.testing.assert_array_equal(part.obs['jetbot']['position'][1], full.obs['jetbot']['position'][1])
            assert part.obs['jetbot']['position'][1].any()
    seen.close()
    skipped.close()


def test_the_vector_env_gathers_only_what_its_keys_read() -> None:
    """A point-nav vector env's layout (robot and task keys, and ``goal_vector``, which reads the
    robot's pose and the task's goal) asks for those entries alone: the scene objects' per-slot
    dicts and the controllers' observations are not gathered, and the rows are the same."""
    from internutopia.core.gym_vector.features import FEATURES, ObsLayout, register_feature

    env = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=3)
    try:
        env.reset(seed=0)
        inner = env.unwrapped
        only = inner._observe_only
        assert only == {'jetbot': frozenset({'position', 'orientation', 'joint_positions', 'joint_velocities'}),
                        'task': frozenset({'goal', 'distance_to_goal'})}
        runner = inner._vec.runner
        rows = np.arange(3)
        everything = runner.observe_arrays(rows)
        assert 'objects' in everything and 'controllers' in everything['jetbot']  # (what is left out)
        picked = runner.observe_arrays(rows, only)
        assert set(picked) == {'jetbot', 'task'} and set(picked['jetbot']) == only['jetbot']
        assert runner.terms.view.observed_entries is None  # the hint lasts only while observing
        full_rows, picked_rows = np.zeros_like(inner._rows.rows), np.zeros_like(inner._rows.rows)
        inner.layout.flat_rows(everything, rows, full_rows)
        inner.layout.flat_rows(picked, rows, picked_rows)
        np.testing.assert_array_equal(picked_rows, full_rows)
        assert np.abs(picked_rows).max() > 0.0
        # A feature that does not say what it reads: everything is gathered.
        register_feature('_test_reads_nothing_said', lambda obs, robot: np.zeros(1), batch_fn=lambda obs, robot: np.zeros((3, 1)))
        try:
            sample = inner._vec.get_observations()[0]
            assert ObsLayout(sample, 'jetbot', ['robot.position', '_test_reads_nothing_said']).observed_entries() is None
        finally:
            del FEATURES['_test_reads_nothing_said']
    finally:
        env.close()


def test_rows_whose_widths_only_add_up_are_refused_naming_the_key():
    """The flat rows are one concatenation of the keys' values: a new episode whose keys have
    other widths is refused even when the widths add up to the space's, naming the first key."""
    from internutopia.core.gym_vector.features import ObsLayout

    layout = ObsLayout({'h1': {'a': np.zeros(2), 'b': np.zeros(3)}}, 'h1', ['robot.a', 'robot.b'])
    out = np.zeros((4, 5), dtype=np.float32)
    layout.flat_rows({'h1': {'a': np.ones((4, 2)), 'b': np.full((4, 3), 2.0)}}, np.arange(4), out)
    assert out.tolist() == [[1, 1, 2, 2, 2]] * 4
    with pytest.raises(ValueError, match=r"observation 'robot.a' has 3 numbers per env, but the observation space was built with 2"):
        layout.flat_rows({'h1': {'a': np.zeros((4, 3)), 'b': np.zeros((4, 2))}}, np.arange(4), out)
    with pytest.raises(ValueError, match="'robot.a' has 3 numbers"):
        layout.flat_rows({'h1': {'a': np.zeros((4, 3)), 'b': np.zeros((4, 2))}}, np.array([1, 3]), out)
    assert out.tolist() == [[1, 1, 2, 2, 2]] * 4  # (nothing written)
