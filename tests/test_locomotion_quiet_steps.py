"""The locomotion task skips the physics steps it knows are quiet (nothing paid, no command or
push due, no episode at its end) without changing anything a user sees: the same observations,
rewards, flags and episode records as checking every step, with pushes and command changes
every few steps, falls and new episodes."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import internutopia.envs  # noqa: F401  (registers the ids)
from internutopia_extension.robots.h1_locomotion import episodes
from internutopia_extension.tasks.locomotion import LocomotionTask
from internutopia_extension.tasks.locomotion_kernels import CompiledTick


def _run(monkeypatch, skip: bool) -> tuple[dict[str, np.ndarray], int]:
    # Pushes every 0.05-0.15 s and commands every 0.05-0.2 s: many events between the payments.
    monkeypatch.setattr(episodes, 'PUSH_INTERVAL', (0.05, 0.15))
    monkeypatch.setattr(episodes, 'COMMAND_HOLD', (0.05, 0.2))
    checked = []  # the task's steps that checked what is due (a step found quiet checks nothing)
    advance, tick = LocomotionTask._advance_commands, CompiledTick.__call__
    monkeypatch.setattr(LocomotionTask, '_advance_commands', lambda self, slots: checked.append(1) or advance(self, slots))
    # (the one-pass tick checks it in its pass, and calls _advance_commands only for what is due)
    monkeypatch.setattr(CompiledTick, '__call__', lambda self, *args: checked.append(1) or tick(self, *args))
    if not skip:
        monkeypatch.setattr(LocomotionTask, '_count_quiet', lambda self, slots, steps: setattr(self, '_quiet_slots', None))
    env = gym.make_vec('internutopia/H1Walk-v0', num_envs=4, seconds=0.7)
    try:
        env.reset(seed=11)
        # Stepped through the vec env, 3 physics steps a call: the walking policy ticks every 4, so
        # the calls fall across its ticks and payments (the vector env's own repeat is the policy's
        # period: each call is then one tick and one payment, with nothing left to skip).
        vector = env.unwrapped
        vec, layout = vector.vec_env, vector.action_layout
        rng = np.random.default_rng(4)
        seen: dict[str, list] = {'obs': [], 'reward': [], 'terminated': [], 'truncated': [], 'steps': [], 'fell': []}
        ended: list[int] = []
        for _ in range(120):  # 1.8 s: episodes of 0.7 s end by time or by falling and restart
            commands = layout.batched_commands(0.6 * rng.uniform(-1, 1, env.action_space.shape), 4)
            out = vec.step_arrays(commands, repeat=3, reset_list=ended or None)
            obs = np.concatenate([np.asarray(leaf, dtype=float).reshape(4, -1) for leaf in _leaves(out.obs)], axis=1)
            for name, value in (('obs', obs), ('reward', out.reward), ('terminated', out.terminated),
                                ('truncated', out.truncated)):
                seen[name].append(np.array(value, copy=True))
            seen['steps'].append(np.array(vec.runner.steps, copy=True))
            seen['fell'].append(np.array([bool(out.metrics.get(slot, {}).get('fell', False)) for slot in range(4)]))
            ended = np.flatnonzero(out.terminated | out.truncated).tolist()
        return {name: np.array(values) for name, values in seen.items()}, len(checked)
    finally:
        env.close()
        monkeypatch.undo()


def _leaves(tree) -> list:
    """The arrays of an observation tree, in key order."""
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in _leaves(tree[key])]
    return [tree]


def test_quiet_steps_are_skipped_with_the_same_results(monkeypatch):
    skipping, checked_skipping = _run(monkeypatch, True)
    every, checked_every = _run(monkeypatch, False)
    for name in skipping:
        np.testing.assert_array_equal(skipping[name], every[name], err_msg=name)
    assert checked_skipping < checked_every  # steps were skipped
    assert (skipping['terminated'] | skipping['truncated']).sum() >= 4  # episodes ended and restarted
    assert np.abs(np.diff(skipping['obs'], axis=0)).max() > 0.0


def test_the_compiled_passes_agree_with_numpy():
    """``quiet_steps`` and ``pick_goals`` give their numpy twins' numbers (slots in any subset,
    events at every distance, goals reached, held and absent)."""
    from internutopia_extension.tasks import locomotion_kernels as kernels

    rng = np.random.default_rng(8)
    n = 40
    slots = np.sort(rng.choice(n, 25, replace=False))
    steps = rng.integers(1, 500, len(slots))
    period, max_steps = rng.integers(1, 6, n), rng.integers(400, 600, n)
    next_change = np.where(rng.random(n) < 0.3, np.iinfo(np.int64).max, rng.integers(400, 700, n))
    next_push = np.where(rng.random(n) < 0.5, np.iinfo(np.int64).max, rng.integers(450, 800, n))
    args = (slots, steps, period, max_steps, next_change, next_push)
    assert kernels._quiet_rows(*args) == kernels._quiet_numpy(*args)
    if kernels._quiet_kernel.available:
        assert kernels._quiet_kernel(*args) == kernels._quiet_numpy(*args)

    qpos = rng.normal(size=(n, 30))[:, 2:]  # (rows of a wider state, as the world's)
    root = rng.integers(0, 10, n)
    goal_points = rng.normal(size=(n, 3, 3))
    goal_count = rng.integers(0, 4, n)
    index = rng.integers(0, 4, n)
    tolerance = rng.uniform(0.05, 3.0, n)
    outputs = []
    for run in (kernels._goal_numpy, kernels._goal_rows) + ((kernels._goal_kernel,) if kernels._goal_kernel.available else ()):
        goal_index, position, orientation = index.copy(), np.empty((len(slots), 3)), np.empty((len(slots), 4))
        goal = np.empty((len(slots), 3))
        run(slots, qpos, root, goal_points, goal_index, goal_count, tolerance, position, orientation, goal)
        outputs.append((goal_index, position, orientation, goal))
    for got in outputs[1:]:
        for value, expected in zip(got, outputs[0], strict=True):
            np.testing.assert_array_equal(value, expected)
    moved = outputs[0][0] != index
    assert moved.any() and not moved.all()  # some goals reached, some not
