"""The batched array API (`Env.step_arrays`) agrees with the dict API and validates the same way."""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots import h1
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


def h1_env(make_config, env_num=3, max_steps=10_000):
    robot = h1.H1RobotCfg(controllers=[h1.move_by_speed_cfg, h1.move_to_point_cfg, h1.move_along_path_cfg, h1.rotate_cfg])
    return Env(make_config([FiniteStepTaskCfg(max_steps=max_steps, robots=[robot])] * env_num, env_num=env_num, offset=10))


def test_array_and_dict_apis_give_identical_trajectories(make_config):
    paths = np.array([[[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]], [[0.0, 2.0, 0.0], [2.0, 2.0, 0.0]], [[-1.0, 0.0, 0.0], [-1.0, -1.0, 0.0]]])
    dict_env, array_env = h1_env(make_config), h1_env(make_config)
    dict_env.reset()
    array_env.reset()
    for _ in range(300):
        obs, reward, terminated, truncated, _ = dict_env.step([{'h1': {'move_along_path': [p.tolist()]}} for p in paths])
        out = array_env.step_arrays({'h1': {'move_along_path': paths}})
    for slot in range(3):
        np.testing.assert_array_equal(out.obs['h1']['position'][slot], obs[slot]['h1']['position'])
        np.testing.assert_array_equal(out.obs['h1']['joint_positions'][slot], obs[slot]['h1']['joint_positions'])
        assert out.obs['h1']['controllers']['move_along_path']['current_index'][slot] == \
            obs[slot]['h1']['controllers']['move_along_path']['current_index']
    assert out.reward.tolist() == reward and out.active.all()
    dict_env.close()
    array_env.close()


def test_array_api_masks_inactive_slots_and_reports_metrics(make_config):
    env = Env(make_config([FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg()])] * 2, env_num=3))
    env.reset()
    speeds = np.array([[0.2, 0.0], [0.2, 0.0], [np.nan, np.nan]])  # slot 2 is empty: its row is ignored
    out = env.step_arrays({'jetbot': {'move_by_speed': speeds}})
    assert out.active.tolist() == [True, True, False] and out.metrics == {}
    out = env.step_arrays({'jetbot': {'move_by_speed': speeds}})
    assert out.truncated.tolist() == [True, True, False] and set(out.metrics) == {0, 1}
    out = env.step_arrays({'jetbot': {'move_by_speed': speeds}})
    assert not out.active.any() and np.all(out.obs == {})
    env.close()


@pytest.mark.parametrize('action, match', [
    ({'jetbt': {'move_by_speed': np.zeros((2, 2))}}, "unknown robot 'jetbt'"),
    ({'jetbot': {'fly': np.zeros((2, 2))}}, "unknown controller 'fly'"),
    ({'jetbot': {'move_by_speed': np.zeros((3, 2))}}, 'one row per env'),
    ({'jetbot': {'move_by_speed': np.zeros((2, 3))}}, 'shape'),
    ({'jetbot': {'move_by_speed': np.array([[0.1, 0.0], [np.inf, 0.0]])}}, r'(?s)finite.*NaN or inf in the rows of env 1\)'),
    ([None, None], 'must be a dict'),
])
def test_array_api_errors_change_nothing(make_config, action, match):
    env = Env(make_config([FiniteStepTaskCfg(robots=[JetbotRobotCfg()])] * 2, env_num=2))
    env.reset()
    time_before = env.runner.world.time
    state = env.runner.world.slot_state(0)
    with pytest.raises(ValueError, match=match):
        env.step_arrays(action)
    assert env.runner.world.time == time_before
    for key, value in env.runner.world.slot_state(0).items():
        np.testing.assert_array_equal(value, state[key])
    env.close()


def test_observe_only_keeps_the_named_entries_with_the_same_values(make_config):
    """``step_arrays(observe_only=...)`` gives the entries named, equal to the full observation's,
    in every slot and in some (a slot whose episode ended is not observed), and nothing else."""
    full_env, picked_env = h1_env(make_config, max_steps=5), h1_env(make_config, max_steps=5)
    full_env.reset()
    picked_env.reset()
    only = {'h1': frozenset({'position', 'controllers'})}
    speeds = {'h1': {'move_by_speed': np.tile([0.4, 0.0, 0.2], (3, 1))}}
    for step in range(6):  # the episodes end on the 5th step: the 6th observes no slot
        full = full_env.step_arrays(speeds)
        picked = picked_env.step_arrays(speeds, observe_only=only)
        if not full.obs:
            assert picked.obs == {} and step == 5
            continue
        assert set(picked.obs) == {'h1'} and set(picked.obs['h1']) == {'position', 'controllers'}
        np.testing.assert_array_equal(picked.obs['h1']['position'], full.obs['h1']['position'])
        assert picked.obs['h1']['position'].any()
        np.testing.assert_array_equal(picked.obs['h1']['controllers']['move_to_point']['finished'],
                                      full.obs['h1']['controllers']['move_to_point']['finished'])
        np.testing.assert_array_equal(picked.reward, full.reward)
    # A robot not named is not observed; the observation of named slots is by the array path's rules.
    runner = picked_env.runner
    assert runner.observe_arrays(np.array([0, 2]), {'jetbot': None}) == {}
    assert set(runner.observe_arrays(np.array([0, 2]), {'h1': frozenset({'orientation'})})['h1']) == {'orientation'}
    full_env.close()
    picked_env.close()


def test_a_robot_computes_only_the_entries_read_and_an_unmarked_override_gets_them_all(make_config, monkeypatch):
    """While an observation reads some of a robot's entries, ``BaseRobot.get_obs`` computes those
    alone (the joints are not gathered when only the pose is read) with the values of a full
    observation; a subclass whose ``get_obs`` override is not marked ``observes_by_need`` is asked
    for everything, so one that reads its parent's entries keeps working."""
    env = h1_env(make_config, max_steps=50)
    env.reset()
    speeds = {'h1': {'move_by_speed': np.tile([0.4, 0.0, 0.2], (3, 1))}}
    full = env.step_arrays(speeds).obs['h1']
    runner, slots = env.runner, np.arange(3)
    group = runner.slot_robots[0]['h1']
    joints = []
    original = type(group)._joint_state
    monkeypatch.setattr(type(group), '_joint_state', lambda self, rows: joints.append(len(rows)) or original(self, rows))
    picked = runner.observe_arrays(slots, {'h1': frozenset({'position', 'orientation'})})['h1']
    assert set(picked) == {'position', 'orientation'} and joints == []
    np.testing.assert_array_equal(picked['position'], full['position'])
    np.testing.assert_array_equal(picked['orientation'], full['orientation'])
    assert group.observed_entries is None  # (only while observing)
    assert set(runner.observe_arrays(slots, {'h1': frozenset({'joint_velocities'})})['h1']) == {'joint_velocities'}
    assert joints == [3]

    class ReadsItsParent(type(group)):  # an extension's override, not marked
        def get_obs(self, slots):
            obs = super().get_obs(slots)
            obs['joint_span'] = obs['joint_positions'].max(axis=1) - obs['joint_positions'].min(axis=1)
            return obs

    monkeypatch.setattr(group, '__class__', ReadsItsParent)
    picked = runner.observe_arrays(slots, {'h1': frozenset({'joint_span'})})['h1']
    assert set(picked) == {'joint_span'}
    np.testing.assert_array_equal(picked['joint_span'], np.ptp(full['joint_positions'], axis=1))
    env.close()


def _point_nav_env(make_config, max_steps):
    from internutopia_extension.configs.tasks import PointNavTaskCfg

    tasks = [PointNavTaskCfg(max_steps=steps, goal=(2.0, 0.5, 0.0), robots=[JetbotRobotCfg()]) for steps in max_steps]
    return Env(make_config(tasks, env_num=len(max_steps)))


def test_repeat_is_repeated_single_steps_summed(make_config):
    """``step_arrays(repeat=k)`` gives what k single steps give: rewards summed over the steps each
    slot ran, an episode ending on an inner step ends there with that step's flags, metrics and
    final observation, the others' observation is the last step's."""
    lengths = [3, 7, 20]  # slot 0 ends on the 3rd step (inside the first call), slot 1 on the 7th
    single, repeated = _point_nav_env(make_config, lengths), _point_nav_env(make_config, lengths)
    single.reset()
    repeated.reset()
    speeds = {'jetbot': {'move_by_speed': np.tile([0.5, 0.3], (3, 1))}}
    for call in range(3):  # 3 calls of 4 steps: slot 1 ends inside the second
        reward, terminated, truncated = np.zeros(3), np.zeros(3, dtype=bool), np.zeros(3, dtype=bool)
        position, metrics = np.zeros((3, 3)), {}
        ran = single.runner.table.active_slots().copy()
        for _ in range(4):
            if not len(single.runner.table.active_slots()):
                break
            out = single.step_arrays(speeds)
            reward += out.reward
            terminated |= out.terminated
            truncated |= out.truncated
            metrics.update(out.metrics)
            observed = np.flatnonzero(out.active)
            if out.obs:
                position[observed] = out.obs['jetbot']['position'][observed]
        got = repeated.step_arrays(speeds, repeat=4)
        np.testing.assert_array_equal(got.reward, reward)
        np.testing.assert_array_equal(got.terminated, terminated)
        np.testing.assert_array_equal(got.truncated, truncated)
        np.testing.assert_array_equal(np.flatnonzero(got.active), ran)
        assert got.metrics.keys() == metrics.keys() and all(got.metrics[s] == metrics[s] for s in metrics)
        if len(ran):
            np.testing.assert_array_equal(got.obs['jetbot']['position'][ran], position[ran])
        if call == 0:
            assert got.truncated.tolist() == [True, False, False] and got.reward[1] != 0.0
            # slot 0's final observation is from its last (3rd) step, not a 4th
            assert got.obs['jetbot']['position'][0, 0] < got.obs['jetbot']['position'][2, 0]
    np.testing.assert_array_equal(repeated.runner.steps, single.runner.steps)
    assert repeated.runner.steps.tolist() == [3, 7, 12]
    single.close()
    repeated.close()


def test_a_slot_failing_inside_a_repeat_ends_there_alone(make_config, monkeypatch):
    """A task step that raises for one slot on an inner step of ``step_arrays(repeat=k)`` ends that
    slot's episode as failed on that step (its flags and reason in the result, no later physics
    step for it); the other slots run all k steps as if nothing happened."""
    from internutopia_extension.tasks.point_nav import PointNavTask

    lengths = [50, 50, 50]
    clean, faulty = _point_nav_env(make_config, lengths), _point_nav_env(make_config, lengths)
    clean.reset()
    faulty.reset()
    step = PointNavTask.step

    def failing_step(self, slots):
        if self.view is faulty.runner.terms.view and 1 in slots.tolist() and self.view.steps[1] == 2:
            raise RuntimeError('injected: slot 1 breaks on its 2nd step')
        return step(self, slots)

    monkeypatch.setattr(PointNavTask, 'step', failing_step)
    speeds = {'jetbot': {'move_by_speed': np.tile([0.5, 0.3], (3, 1))}}
    expected = clean.step_arrays(speeds, repeat=4)
    got = faulty.step_arrays(speeds, repeat=4)
    assert got.terminated.tolist() == [False, True, False] and not got.truncated.any()
    assert 'injected: slot 1 breaks on its 2nd step' in got.failed[1] and list(got.failed) == [1]
    assert faulty.runner.steps.tolist() == [4, 2, 4]
    for slot in (0, 2):
        assert got.reward[slot] == expected.reward[slot]
        np.testing.assert_array_equal(got.obs['jetbot']['position'][slot], expected.obs['jetbot']['position'][slot])
    clean.close()
    faulty.close()


@pytest.mark.parametrize('repeat', [0, -2, 1.5, True, '4'])
def test_a_bad_repeat_is_refused_and_moves_nothing(make_config, repeat):
    env = _point_nav_env(make_config, [10, 10])
    env.reset()
    before = env.runner.world.packs[next(iter(env.runner.world.packs))].batch.state.copy()
    with pytest.raises(ValueError, match='repeat must be an int >= 1'):
        env.step_arrays({'jetbot': {'move_by_speed': np.tile([0.5, 0.0], (2, 1))}}, repeat=repeat)
    np.testing.assert_array_equal(env.runner.world.packs[next(iter(env.runner.world.packs))].batch.state, before)
    assert env.runner.steps.tolist() == [0, 0]
    env.close()
