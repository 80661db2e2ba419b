"""Upstream-style subclasses of built-in tasks and metrics keep the built-in's behaviour.

InternUtopia extensions subclass the built-ins they extend (``class GpsTask(FiniteStepTask)``
adding to ``get_observations()``, ``super().is_done()``, ``super().calc()``): the built-in runs
behind the per-slot class for every slot, and what the subclass does not override is the
built-in's, slot by slot.
"""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.config import Config
from internutopia.core.metric.base import BaseMetric
from internutopia.core.task.base import BaseTask
from internutopia.core.vec_env import Env
from internutopia_extension import import_extensions
from internutopia_extension.configs.metrics.traveled_distance_metric import TraveledDistanceMetricCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.configs.tasks.point_nav_task import PointNavTaskCfg
from internutopia_extension.metrics.traveled_distance_metric import TraveledDistanceMetric
from internutopia_extension.tasks.finite_step_task import FiniteStepTask
from internutopia_extension.tasks.point_nav import PointNavTask

import_extensions()


class GpsTaskCfg(FiniteStepTaskCfg):
    type: str = 'SubclassGpsTask'


@BaseTask.register('SubclassGpsTask')
class GpsTask(FiniteStepTask):
    """Only adds an entry to the observations (upstream-style: no ``slots`` argument)."""

    def get_observations(self):
        obs = super().get_observations()
        obs['jetbot']['gps'] = obs['jetbot']['position'][:2]
        return obs


class EarlyStopTaskCfg(FiniteStepTaskCfg):
    type: str = 'SubclassEarlyStopTask'
    stop_x: float = 1e9


@BaseTask.register('SubclassEarlyStopTask')
class EarlyStopTask(FiniteStepTask):
    """Ends where the built-in ends it, or once the robot passes ``stop_x``."""

    def is_done(self) -> bool:
        done = super().is_done()
        return done or bool(self.robots['jetbot'].get_obs()['position'][0] > self.config.stop_x)


class WrappedDistanceCfg(TraveledDistanceMetricCfg):
    type: str = 'SubclassWrappedDistance'


@BaseMetric.register('SubclassWrappedDistance')
class WrappedDistance(TraveledDistanceMetric):
    def update(self, obs):
        super().update(obs)
        self.updates = getattr(self, 'updates', 0) + 1

    def calc(self):
        return {'dist': super().calc(), 'updates': self.updates}


class LabelledNavCfg(PointNavTaskCfg):
    type: str = 'SubclassLabelledNav'


@BaseTask.register('SubclassLabelledNav')
class LabelledNav(PointNavTask):
    """A point-nav task (batched starts, a compiled step pass) extended upstream-style."""

    def get_observations(self):
        obs = super().get_observations()
        obs['label'] = 'nav'
        return obs


DRIVE = {'jetbot': {'move_by_speed': [0.3, 0.0]}}


def _run(tasks, env_num=2, steps=60):
    """Step every slot with DRIVE until each episode ends; each slot's (observations, record)."""
    env = Env(Config(env_num=env_num, metrics_save_path='none', task_configs=tasks))
    records = {}
    seen: dict[int, list] = {slot: [] for slot in range(env_num)}
    try:
        env.reset()
        for _ in range(steps):
            obs, reward, terminated, _, info = env.step([DRIVE] * env_num)
            for slot in range(env_num):
                if obs[slot] is not None:
                    seen[slot].append({**obs[slot], 'reward': reward[slot]})
                if terminated[slot] and info[slot] is not None and slot not in records:
                    records[slot] = info[slot]
            if len(records) == env_num:
                break
    finally:
        env.close()
    return seen, records


def _jetbot(**kw):
    return JetbotRobotCfg(**kw)


def test_a_subclass_adding_observations_keeps_the_builtins_end_and_motion():
    ours, _ = _run([GpsTaskCfg(max_steps=20, robots=[_jetbot()]), GpsTaskCfg(max_steps=12, robots=[_jetbot()])])
    builtin, _ = _run([FiniteStepTaskCfg(max_steps=20, robots=[_jetbot()]), FiniteStepTaskCfg(max_steps=12, robots=[_jetbot()])])
    for slot, steps in ((0, 20), (1, 12)):
        assert len(ours[slot]) == len(builtin[slot]) == steps  # (the built-in's end, slot by slot)
        last = ours[slot][-1]['jetbot']
        np.testing.assert_array_equal(last['gps'], last['position'][:2])
        np.testing.assert_array_equal(last['position'], builtin[slot][-1]['jetbot']['position'])
        assert last['position'][0] > 0.03  # (it drove)


def test_a_subclass_deciding_its_end_with_super_is_done_ends_where_either_says():
    tasks = [EarlyStopTaskCfg(max_steps=30, robots=[_jetbot()]),
             EarlyStopTaskCfg(max_steps=30, stop_x=0.02, robots=[_jetbot()])]
    seen, _ = _run(tasks, steps=40)
    assert len(seen[0]) == 30  # the built-in's verdict, through super().is_done()
    assert 2 < len(seen[1]) < 30  # its own condition, earlier
    assert seen[1][-1]['jetbot']['position'][0] > 0.02 >= seen[1][-2]['jetbot']['position'][0]


def test_a_subclass_of_a_builtin_metric_reads_the_builtins_value():
    def task(metric_cfg, steps):
        return FiniteStepTaskCfg(max_steps=steps, robots=[_jetbot()], metrics=[metric_cfg])

    _, ours = _run([task(WrappedDistanceCfg(name='d', robot_name='jetbot'), 20),
                    task(WrappedDistanceCfg(name='d', robot_name='jetbot'), 10)])
    _, builtin = _run([task(TraveledDistanceMetricCfg(name='d', robot_name='jetbot'), 20),
                       task(TraveledDistanceMetricCfg(name='d', robot_name='jetbot'), 10)])
    for slot in (0, 1):
        value = ours[slot]['metrics']['d']
        assert value['dist'] == pytest.approx(builtin[slot]['metrics']['d']) and value['dist'] > 0.02
        # (updated after every step but the one its task ended the episode on, as upstream)
        assert value['updates'] == (19, 9)[slot]  # (its task a built-in one or not)


def test_a_subclass_of_a_batched_builtin_task_starts_every_slot_and_keeps_its_metrics():
    """Point-nav starts its slots in one call and steps them in one compiled pass; its subclass
    still makes its per-slot objects and ends, scores and records its episodes as the built-in."""
    def tasks(cfg):
        return [cfg(goal=(0.4, 0.0, 0.0), max_steps=200, robots=[_jetbot()]),
                cfg(goal=(0.15, 0.0, 0.0), max_steps=200, robots=[_jetbot()])]

    ours_obs, ours = _run(tasks(LabelledNavCfg), steps=200)
    builtin_obs, builtin = _run(tasks(PointNavTaskCfg), steps=200)
    for slot in (0, 1):
        assert ours_obs[slot][-1]['label'] == 'nav'
        assert [o['reward'] for o in ours_obs[slot]] == [o['reward'] for o in builtin_obs[slot]]  # (its progress reward)
        assert set(ours_obs[slot][-1]) == set(builtin_obs[slot][-1]) | {'label'}
        assert ours_obs[slot][-1]['task']['distance_to_goal'] == builtin_obs[slot][-1]['task']['distance_to_goal']
        assert len(ours_obs[slot]) == len(builtin_obs[slot]) < 200  # (reached the goal, as the built-in did)
        assert ours[slot]['metrics'] == builtin[slot]['metrics']
        assert ours[slot]['metrics']  # (success, SPL: the built-in's own episode metrics)
