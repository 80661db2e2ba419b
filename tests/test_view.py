"""The env view: what tasks, metrics and rewards are given instead of the runner."""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.config import MetricCfg
from internutopia.core.metric.base import BaseMetric
from internutopia.core.vec_env import Env
from internutopia.core.view import EntityTracker, EnvSlot, EnvView
from internutopia_extension.configs.objects import DynamicCubeCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg, PointNavTaskCfg

DRIVE = {'jetbot': {'move_by_speed': [0.4, 0.3]}}


def cube(y: float) -> DynamicCubeCfg:
    return DynamicCubeCfg(name='cube', position=(1.0, y, 0.1), scale=(0.1, 0.1, 0.1))


def nav(x: float, objects=(), max_steps: int = 50) -> PointNavTaskCfg:
    return PointNavTaskCfg(goal=(3.0, 0.0, 0.0), max_steps=max_steps, objects=list(objects),
                           robots=[JetbotRobotCfg(position=(x, 0.0, 0.0))])


@pytest.fixture
def env(make_config):
    # Slots 0 and 2 hold one structure, slot 1 another (a cube): two 'jetbot' groups.
    tasks = [nav(0.0), nav(0.5, [cube(0.5)]), nav(-0.5), nav(0.2, [cube(-0.5)]), nav(0.1)]
    with Env(make_config(tasks, env_num=3)) as env:
        yield env


def view_of(env: Env) -> EnvView:
    task = env.runner.slot_task[0]
    assert isinstance(task.view, EnvView) and not hasattr(task, 'runner')
    return task.view


def test_tasks_metrics_and_rewards_get_the_view_not_the_runner(env):
    env.reset()
    view = view_of(env)
    task = view.task(0)
    assert task is env.runner.slot_task[0] and view.task(1) is task  # one object per task type
    assert all(m.view is view for m in env.runner.metrics.values())
    (reward,) = env.runner.terms.rewards.values()  # the runner owns every reward; the task builds none
    assert reward.view is view and not hasattr(reward, 'runner') and not hasattr(task, 'rewards')
    assert view.env_num == 3 and view.physics_dt == pytest.approx(1 / 240)


def test_steps_are_live_and_read_only(env):
    env.reset()
    view = view_of(env)
    assert view.steps.tolist() == [0, 0, 0]
    for _ in range(3):
        *_, info = env.step([DRIVE] * 3)
    assert view.steps.tolist() == [i['steps'] for i in info] == [3, 3, 3]
    with pytest.raises(ValueError, match='read-only'):
        view.steps[0] = 7
    env.reset([1])
    assert view.steps.tolist() == [3, 0, 3] and view.slot(1).steps == 0


def test_robots_objects_and_episodes_per_slot(env):
    obs, info = env.reset()
    view = view_of(env)
    assert list(view.robots(0)) == ['jetbot'] and list(view.objects(0)) == [] and list(view.objects(1)) == ['cube']
    assert view.robots(0)['jetbot'] is view.robots(2)['jetbot']  # one group per structure
    assert view.robots(1)['jetbot'] is not view.robots(0)['jetbot']
    assert view.task_config(1) is info[1] and view.episode_index(2) == 2
    assert view.pack(1) is view.robots(1)['jetbot'].world and view.pack(0) is not view.pack(1)
    with pytest.raises(TypeError):
        view.robots(0)['other'] = view.robots(0)['jetbot']  # a read-only mapping
    with pytest.raises(ValueError, match=r"env 0 has no robot 'h1'; robots in env 0: \['jetbot'\]"):
        view.robot(0, 'h1')
    with pytest.raises(ValueError, match=r"env 0 has no object 'cube'; objects in env 0: \[\]"):
        view.object(0, 'cube')
    with pytest.raises(ValueError, match=r'env id 3 is out of range; valid env ids: 0..2'):
        view.slot(3)
    assert view.active_slots().tolist() == [0, 1, 2]


def test_slot_view_reads_what_the_step_returns(env):
    env.reset()
    obs = env.step([DRIVE] * 3)[0]
    view = view_of(env)
    slot = view.slot(1)
    assert isinstance(slot, EnvSlot) and slot.env is view and 'cube' in repr(slot)
    position, orientation = slot.pose('jetbot')
    np.testing.assert_array_equal(position, obs[1]['jetbot']['position'])
    np.testing.assert_array_equal(orientation, obs[1]['jetbot']['orientation'])
    np.testing.assert_array_equal(slot.pose('cube')[0], obs[1]['objects']['cube']['position'])
    robot_obs = slot.robot_observations()
    assert set(robot_obs) == {'jetbot'}
    np.testing.assert_array_equal(robot_obs['jetbot']['joint_positions'], obs[1]['jetbot']['joint_positions'])
    assert set(slot.object_observations()) == {'cube'} and view.slot(0).object_observations() == {}
    with pytest.raises(ValueError, match=r"no robot or object 'lamp'; names in env 1: \['cube', 'jetbot'\]"):
        slot.pose('lamp')


def test_tracker_follows_robots_across_groups_and_structure_changes(env):
    env.reset()
    view = view_of(env)
    tracker = view.tracker()
    assert isinstance(tracker, EntityTracker)
    for slot in range(3):
        tracker.track(slot, 'jetbot')
    slots = np.arange(3)
    obs = env.step([DRIVE] * 3)[0]
    expected = np.array([o['jetbot']['position'] for o in obs])
    np.testing.assert_array_equal(tracker.positions(slots), expected)
    position, orientation = tracker.poses(np.array([2, 0]))
    np.testing.assert_array_equal(position, expected[[2, 0]])
    assert orientation.shape == (2, 4)
    groups = {id(group): members.tolist() for group, rows, members in tracker.groups(slots)}
    assert sorted(groups.values()) == [[0, 2], [1]]
    # The split of the same slots is kept (asked a few times per physics step): the same arrays again
    first, again = list(tracker.groups(slots)), list(tracker.groups(np.arange(3)))
    assert all(a[1] is b[1] and a[2] is b[2] for a, b in zip(first, again, strict=True))
    tracker.track(2, 'jetbot')  # (a new episode in the same slot and group, the usual reset: every answer kept)
    kept = list(tracker.groups(slots))
    assert all(a[1] is b[1] and a[2] is b[2] for a, b in zip(first, kept, strict=True))
    assert sorted(m.tolist() for _, _, m in tracker.groups(np.array([1, 2]))) == [[1], [2]]
    assert [r.tolist() for _, r, _ in tracker.groups(np.array([2, 1]))] == [[0], [1]]  # (rows of the slots as given)
    # Slot 0 takes an episode with a cube (the structure of slot 1 then): the tracker's table
    # follows the new version of the world without being told.
    version = view.version
    env.reset([0])  # episode 3: jetbot + cube
    tracker.track(0, 'jetbot')
    assert view.version != version
    obs = env.step([DRIVE] * 3)[0]
    np.testing.assert_array_equal(tracker.positions(slots), np.array([o['jetbot']['position'] for o in obs]))
    assert sorted(m.tolist() for _, _, m in tracker.groups(slots)) == [[0, 1], [2]]
    with pytest.raises(ValueError, match="env 2 has no robot 'h1'"):
        tracker.track(2, 'h1')
    with pytest.raises(ValueError, match="kind must be 'robot' or 'object'"):
        view.tracker('camera')


def test_position_rows_is_the_live_state_of_one_group_else_none(env, make_config):
    """``position_rows()``: robots of two groups have no one view (``None``: the callers gather);
    one group in every slot gives a read-only view, indexed by slot, that the steps move."""
    env.reset()
    tracker = view_of(env).tracker()
    for slot in range(3):
        tracker.track(slot, 'jetbot')
    assert tracker.position_rows() is None  # (slot 1 holds another structure)
    with Env(make_config([nav(0.0), nav(0.5), nav(-0.5)], env_num=3)) as one:
        one.reset()
        tracker = view_of(one).tracker()
        for slot in range(3):
            tracker.track(slot, 'jetbot')
        rows = tracker.position_rows()
        assert rows is not None and rows.shape == (3, 3) and not rows.flags.writeable
        assert tracker.position_rows() is rows  # (made once)
        before = rows.copy()
        obs = one.step([DRIVE] * 3)[0]
        np.testing.assert_array_equal(rows, np.array([o['jetbot']['position'] for o in obs]))
        assert not np.array_equal(rows, before)  # the robots drove: the view shows it
        np.testing.assert_array_equal(rows[[2, 0]], tracker.positions(np.array([2, 0])))


def test_object_tracker_and_object_observations(env):
    env.reset()
    view = view_of(env)
    cubes = view.tracker('object')
    cubes.track(1, 'cube')
    obs = env.step([DRIVE] * 3)[0]
    np.testing.assert_array_equal(cubes.positions(np.array([1])), [obs[1]['objects']['cube']['position']])
    per_slot = view.object_observations(np.arange(3))
    assert [sorted(o) for o in per_slot] == [[], ['cube'], []]


def test_a_metric_written_on_the_view(make_config):
    """A user metric reads only the view: the furthest x its robot reached, vectorized."""

    class FurthestXCfg(MetricCfg):
        type: str = 'FurthestXMetric'

    @BaseMetric.register('FurthestXMetric')
    class FurthestXMetric(BaseMetric):
        def __init__(self, config, view) -> None:
            super().__init__(config, view)
            self.robot = view.tracker()
            self.furthest = np.zeros(self.env_num)

        def reset_slot(self, slot, task) -> None:
            self.robot.track(slot, self.measured_robot(task))
            self.furthest[slot] = self.robot.positions(np.array([slot]))[0, 0]

        def update(self, slots) -> None:
            self.furthest[slots] = np.maximum(self.furthest[slots], self.robot.positions(slots)[:, 0])

        def calc(self, slot) -> float:
            return round(float(self.furthest[slot]), 6)

    tasks = [FiniteStepTaskCfg(max_steps=20, metrics=[FurthestXCfg()], robots=[JetbotRobotCfg(position=(x, 0.0, 0.0))])
             for x in (0.0, 1.0)]
    with Env(make_config(tasks, env_num=2)) as env:
        env.reset()
        for _ in range(20):
            obs, _, _, truncated, info = env.step([DRIVE] * 2)
        assert truncated == [True, True]
        furthest = [info[s]['metrics']['FurthestXMetric'] for s in range(2)]
        assert furthest[0] == pytest.approx(obs[0]['jetbot']['position'][0], abs=1e-6)
        assert furthest[1] > 1.0 > furthest[0] > 0.0


def test_pack_data_is_typed_and_binds_other_fields_on_request(env):
    from internutopia.core.backend.mujoco.world import PackData

    env.reset()
    pack = view_of(env).pack(1)
    assert isinstance(pack.data, PackData)
    assert pack.data.qpos.shape == (3, pack.model.nq) and pack.data.ctrl.shape == (3, pack.model.nu)
    assert pack.data.mocap_pos.shape == (3, pack.model.nmocap, 3)
    with pytest.raises(AttributeError, match=r"no field 'site_xpos' bound; bind it with pack.field\('site_xpos'\)"):
        getattr(pack.data, 'site_xpos')  # noqa: B009
    xpos = pack.field('xpos')
    assert xpos.shape == (3, pack.model.nbody, 3) and pack.data.xpos is xpos and pack.field('xpos') is xpos
