"""An action repeat advances its quiet physics steps in one call (``Runner._quiet_steps``): the
walking envs' four physics steps per action become one ``world.step(4)`` where no push, command,
payment or tick falls between them, with results bit for bit those of stepping one at a time."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import internutopia.envs  # noqa: F401  (registers the ids)


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) and a.dtype != object:
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, np.ndarray):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _run(env_id: str, fuse: bool, vector_steps: int, before_step=None, **kwargs) -> tuple[list, list[int]]:
    """Every result of ``vector_steps`` random vector steps, and the physics steps of each world call."""
    env = gym.make_vec(env_id, num_envs=2 if kwargs.get('backend') == 'warp' else 4, **kwargs)
    runner = env.unwrapped._vec.runner
    runner.fuse_steps = fuse
    calls: list[int] = []
    step = runner.world.step

    def counted(steps: int = 1) -> None:
        calls.append(steps)
        step(steps)

    runner.world.step = counted
    results = [env.reset(seed=5)]
    rng = np.random.default_rng(1)
    for k in range(vector_steps):
        if before_step is not None:
            before_step(k, runner)
        results.append(env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)))
    env.close()
    return results, calls


@pytest.mark.parametrize(('env_id', 'kwargs'), [('internutopia/H1Walk-v0', {}), ('internutopia/AliengoWalk-v0', {}),
                                              ('internutopia/H1Walk-v0', {'seconds': 0.2})])  # (time limits: autoresets)
def test_a_walking_env_fuses_each_actions_physics_steps_with_the_same_results(env_id, kwargs):
    one_by_one, single = _run(env_id, False, 120, **kwargs)
    fused, calls = _run(env_id, True, 120, **kwargs)
    assert set(single) == {1} and len(calls) < 0.5 * len(single)  # (one or two calls an action)
    assert sum(calls) == sum(single)
    assert _same(one_by_one, fused)  # observations, rewards, flags, infos and records, resets included


def test_a_push_due_inside_an_action_splits_its_physics_call_there():
    def push_soon(k, runner):
        if k == 5:  # a push due two physics steps into the next action, in slot 2
            task = runner.terms.tasks['LocomotionTask']
            task.next_push[2] = runner.table.steps[2] + 2
            task._quiet_slots = None

    one_by_one, _ = _run('internutopia/H1Walk-v0', False, 12, push_soon)
    fused, calls = _run('internutopia/H1Walk-v0', True, 12, push_soon)
    assert calls[:5] == [4] * 5 and calls[5:7] == [2, 2] and calls[7:] == [4] * 6
    assert _same(one_by_one, fused)
    assert not _same(one_by_one[6][0], one_by_one[5][0])  # (it moved)


def test_robots_with_step_hooks_and_tasks_that_step_every_physics_step_are_not_fused():
    _, calls = _run('internutopia/H1PointNav-v0', True, 5)  # its task and reward run each step
    assert set(calls) == {1}
    # (the Jetbot's repeat runs as one recorded call instead: tests/test_recorded_repeat.py)
    _, calls = _run('internutopia/JetbotPointNav-v0', True, 5)
    assert calls == []


@pytest.mark.slow
def test_the_warp_backend_fuses_the_same_steps_with_the_same_results():
    pytest.importorskip('mujoco_warp', reason="the warp extra is not installed (pip install 'internutopia[warp]')")
    one_by_one, single = _run('internutopia/H1Walk-v0', False, 8, backend='warp', device='cpu')
    fused, calls = _run('internutopia/H1Walk-v0', True, 8, backend='warp', device='cpu')
    assert single == [1] * 32 and calls == [4] * 8
    assert _same(one_by_one, fused)


def test_move_by_speed_is_idempotent_for_a_walking_robot_only_and_not_for_a_subclass_of_its_own():
    """A walking robot's ``move_by_speed`` only stores the policy's command (the runner may then
    advance several steps in one call); a carried H1's moves its base target every step; a
    subclass that applies its own way is not taken at its parent's word."""
    from internutopia_extension.configs.robots import h1
    from internutopia_extension.controllers.h1_move_by_speed_controller import H1MoveBySpeedController

    def controller(env):
        return env.unwrapped._vec.runner.slot_robots[0]['h1'].controllers['move_by_speed']

    walking = gym.make_vec('internutopia/H1PointNav-v0', num_envs=1)
    walking.reset(seed=0)
    stored = controller(walking)
    assert stored.walker is not None and stored.idempotent_apply is True

    class Smoothed(H1MoveBySpeedController):
        def apply_base_velocity(self, slots, velocity):  # (a filter over the steps: its own state)
            super().apply_base_velocity(slots, velocity)

    smoothed = Smoothed.__new__(Smoothed)
    assert not smoothed.stores_walker_command(stored.walker)
    assert stored.stores_walker_command(stored.walker)
    walking.close()
    carried = gym.make_vec('internutopia/H1PointNav-v0', num_envs=1,
                           robot_cfg=h1.H1RobotCfg(locomotion='carried', controllers=[h1.move_by_speed_cfg, h1.move_to_point_cfg]))
    carried.reset(seed=0)
    assert controller(carried).walker is None and controller(carried).idempotent_apply is False
    carried.close()
