"""What the step keeps between calls (the batched actions' plan, the step counts of a few slots,
the call guard's thread) changes nothing a user sees: every layout and every bad input after a
kept plan is answered as on a first step."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots import h1
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


def _jetbots(make_config, env_num=2, max_steps=10_000):
    return Env(make_config([FiniteStepTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg()])] * env_num, env_num=env_num))


@pytest.mark.parametrize('action, match', [
    ({'jetbt': {'move_by_speed': np.zeros((2, 2))}}, "unknown robot 'jetbt'"),
    ({'jetbot': {'move_by_speed': np.zeros((2, 2)), 'fly': np.zeros((2, 2))}}, "unknown controller 'fly'"),
    ({'jetbot': {'move_by_speed': np.zeros((3, 2))}}, 'one row per env'),
    ({'jetbot': {'move_by_speed': np.zeros((2, 3))}}, 'shape'),
    ({'jetbot': {'move_by_speed': np.array([[0.1, 0.0], [np.nan, 0.0]])}}, r'(?s)finite.*NaN or inf in the rows of env 1\)'),
    ({'jetbot': [np.zeros((2, 2))]}, 'must be a dict'),
])
def test_bad_batched_actions_after_a_kept_plan_raise_and_change_nothing(make_config, action, match):
    env = _jetbots(make_config)
    env.reset()
    good = {'jetbot': {'move_by_speed': np.tile([0.3, 0.1], (2, 1))}}
    env.step_arrays(good)
    env.step_arrays(good)  # the plan of this layout is kept
    time_before, state = env.runner.world.time, env.runner.world.slot_state(1)
    steps = env.runner.steps.copy()
    with pytest.raises(ValueError, match=match):
        env.step_arrays(action)
    assert env.runner.world.time == time_before
    np.testing.assert_array_equal(env.runner.steps, steps)
    for key, value in env.runner.world.slot_state(1).items():
        np.testing.assert_array_equal(value, state[key])
    out = env.step_arrays(good)  # and the kept layout still steps
    assert out.active.all()
    env.close()


def test_a_changed_layout_parses_as_a_first_step_would(make_config):
    """Controllers named in another order, one more controller, a robot's commands left out: each
    gives the commands (and their order) of a parser that never saw the earlier layout."""
    robot = h1.H1RobotCfg(controllers=[h1.move_by_speed_cfg, h1.move_along_path_cfg])
    env = Env(make_config([FiniteStepTaskCfg(robots=[robot])] * 2, env_num=2))
    env.reset()
    speed, path = np.tile([0.2, 0.0, 0.1], (2, 1)), np.tile([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]], (2, 1, 1))
    layouts = [{'h1': {'move_by_speed': speed}}, {'h1': {'move_by_speed': speed, 'move_along_path': path}},
               {'h1': {'move_along_path': path, 'move_by_speed': speed}}, {}, {'h1': {}}, {'h1': {'move_along_path': path}}]
    parser = env.runner.actions
    for layout in layouts + layouts[::-1]:
        kept = parser.parse_batched(layout)
        parser._batched_plan = None
        fresh = parser.parse_batched(layout)
        assert [(controller, slots.tolist()) for controller, slots, _ in kept.values()] == \
            [(controller, slots.tolist()) for controller, slots, _ in fresh.values()]
        env.step_arrays(layout)
    env.close()


def test_a_kept_plan_follows_the_slots_that_run(make_config):
    """When an episode ends, the next step's commands go to the slots still running only."""
    env = Env(make_config([FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg()]),
                           FiniteStepTaskCfg(max_steps=5, robots=[JetbotRobotCfg()])], env_num=2))
    env.reset()
    action = {'jetbot': {'move_by_speed': np.tile([0.3, 0.0], (2, 1))}}
    for _ in range(2):
        env.step_arrays(action)
    commands = env.runner.actions.parse_batched(action)
    assert [slots.tolist() for _, slots, _ in commands.values()] == [[1]]
    out = env.step_arrays(action)
    assert out.active.tolist() == [False, True]
    env.close()


def test_a_kept_plan_outlives_an_episode_ending_and_starting(make_config, monkeypatch):
    """The plan is the layout's groups and controllers, not the running slots: steps after an
    episode ended, and after a reset started one, follow it (no general parse) and give the
    commands a parser that never saw the layout gives."""
    def jetbot(max_steps):
        return FiniteStepTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg()])

    env = Env(make_config([jetbot(2), jetbot(50), jetbot(3), jetbot(50)], env_num=3))
    env.reset()
    parser = env.runner.actions
    action = {'jetbot': {'move_by_speed': np.array([[0.3, 0.0], [0.2, 0.1], [0.1, 0.2]])}}
    env.step_arrays(action)  # (the plan is made)
    general = parser._parse_batched
    calls = []
    monkeypatch.setattr(parser, '_parse_batched', lambda *args: calls.append(1) or general(*args))
    # slot 0's episode ends on its second step, slot 2's on its third; a reset starts slot 0's next
    for running in ([0, 1, 2], [1, 2], [1], [0, 1]):
        if running == [0, 1]:
            env.reset([0])
        kept = parser.parse_batched(action)
        assert [slots.tolist() for _, slots, _ in kept.values()] == [running]
        fresh = general(action, env.runner.table.active_slots())[0]
        for (controller, slots, batch), (fresh_controller, fresh_slots, fresh_batch) in zip(kept.values(), fresh.values(), strict=True):
            assert controller is fresh_controller and slots.tolist() == fresh_slots.tolist()
            np.testing.assert_array_equal(batch, fresh_batch)
        env.step_arrays(action)
    assert not calls  # every step followed the kept plan
    env.close()


@pytest.mark.parametrize('env_num', [1, 3, 6])
def test_step_counts_of_few_and_many_slots(make_config, env_num):
    """Step counts (kept item by item for a few slots, as one array add for more) count each
    running episode's steps, and stop for an episode that ended."""
    first = 3 if env_num > 1 else 100  # (one slot whose episode ended would leave no robot to command)
    tasks = [FiniteStepTaskCfg(max_steps=first if slot == 0 else 100, robots=[JetbotRobotCfg()]) for slot in range(env_num)]
    env = Env(make_config(tasks + tasks, env_num=env_num))  # (episodes for the reset below)
    env.reset()
    action = {'jetbot': {'move_by_speed': np.zeros((env_num, 2))}}
    for _ in range(5):
        env.step_arrays(action)
    assert env.runner.steps.tolist() == [min(first, 5)] + [5] * (env_num - 1)
    env.reset([0])
    env.step_arrays(action)
    env.step([{'jetbot': {'move_by_speed': [0.0, 0.0]}}] * env_num)
    assert env.runner.steps.tolist() == [2] + [7] * (env_num - 1)
    env.close()


def test_a_second_thread_is_told_which_thread_is_inside(make_config):
    env = _jetbots(make_config)
    env.reset()
    inside, release, errors = threading.Event(), threading.Event(), []
    runner = env.runner
    stepping = runner.terms.step

    def slow_terms(slots):  # holds the first step inside the guard
        inside.set()
        release.wait(10)
        return stepping(slots)

    runner.terms.step = slow_terms
    action = {'jetbot': {'move_by_speed': np.zeros((2, 2))}}
    first = threading.Thread(target=env.step_arrays, args=(action,), name='stepper')
    first.start()
    assert inside.wait(10)
    try:
        env.step_arrays(action)
    except RuntimeError as exc:
        errors.append(str(exc))
    release.set()
    first.join(10)
    assert len(errors) == 1 and "in step() in thread 'stepper'" in errors[0] and "thread 'MainThread'" in errors[0]
    runner.terms.step = stepping
    env.step_arrays(action)  # the guard was let go
    env.close()


def test_the_guard_knows_the_main_thread_of_a_forked_child():
    """A forked child's main thread is the thread that forked: the guard holds Ctrl-C there (the
    benchmark and the vector envs step envs in forked workers)."""
    import os

    from internutopia.core.runner import guard as guard_module

    def child() -> None:
        guard = guard_module.CallGuard('env')
        depth = guard_module._DEFERRAL.depth
        with guard.enter('step'):
            held = guard_module._DEFERRAL.depth == depth + 1
        os._exit(0 if held and guard_module._DEFERRAL.depth == depth else 1)

    result: list[int] = []

    def fork_from_a_thread() -> None:  # the forking thread is not the parent's main thread
        pid = os.fork()
        if pid == 0:
            child()
        result.append(os.waitpid(pid, 0)[1])

    thread = threading.Thread(target=fork_from_a_thread)
    thread.start()
    thread.join(30)
    assert result == [0]


def test_a_kept_adopter_gives_what_adopt_gives_for_any_tree():
    """The array API's result of a group in every slot: arrays of their own kept, views and lists
    copied, for the structure seen before and for any other."""
    from internutopia.core.runner.observations import TreeAdopter, adopt

    state = np.arange(12.0).reshape(2, 6)
    owned = np.zeros(2)

    def trees():
        yield {'a': state[:, :3], 'b': owned, 'c': {'d': [1, 2], 'e': {}}}
        yield {'a': state[:, :3], 'b': owned, 'c': {'d': [1, 2], 'e': {}}}  # the kept structure
        yield {'a': owned, 'b': state[:, 3:], 'c': {'d': np.ones(2), 'e': {}}}  # a leaf's type changed
        yield {'b': owned, 'a': state[:, :3], 'c': {'d': [1, 2], 'e': {}}}  # keys in another order
        yield {'a': state[:, :3], 'b': owned, 'c': {'d': [1, 2], 'e': {'f': state[:, 0]}}}  # a new leaf
        yield {'a': state[:, :3], 'b': owned, 'c': [1, 2]}  # a dict became a list

    adopter = TreeAdopter()
    for given, reference in zip(trees(), trees(), strict=True):
        kept = adopter(given)
        expected = adopt(reference)
        assert list(kept) == list(expected)

        def check(ours, theirs):
            for key in theirs:
                if isinstance(theirs[key], dict):
                    check(ours[key], theirs[key])
                else:
                    assert type(ours[key]) is np.ndarray and ours[key].base is None
                    np.testing.assert_array_equal(ours[key], theirs[key])
                    assert not np.shares_memory(ours[key], state)
        check(kept, expected)
    assert adopter(trees().__next__())['b'] is owned  # an array of its own is handed over as it is
