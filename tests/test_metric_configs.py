"""Metric and reward configs as users write them: numpy values in their options, unnamed metrics,
numpy scalars as metric values in the run's summary, a task's own ``metrics_save_path``."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from internutopia.core.config import MetricCfg
from internutopia.core.task.metric import BaseMetric
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


@BaseMetric.register('MetricCfgsTestThresholds')
class Thresholds(BaseMetric):
    """Upstream style: how many of ``metric_config['thresholds']`` the step count passed."""

    def __init__(self, config, task_config):
        super().__init__(config, task_config)
        self.thresholds = np.asarray(self.metric_config['thresholds'])
        self.steps = 0

    def update(self, obs):
        self.steps += 1

    def calc(self):
        return int((self.steps > self.thresholds).sum())


def _task(metrics, max_steps=3):
    return FiniteStepTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg()], metrics=metrics)


def _run(make_config, tasks, path):
    """Every episode of ``tasks`` on one slot; the records written to ``path``, and the summary."""
    with Env(make_config(tasks, env_num=1, metrics_save_path=str(path))) as env:
        env.reset()
        while not env.finished():
            _, _, terminated, _, _ = env.step([{}])
            if terminated[0]:
                env.reset([0])
        summary = env.runner.results.summary()
    return [json.loads(line) for line in path.read_text().splitlines()], summary


def test_numpy_values_in_a_metrics_options_run_as_upstream_passes_them(make_config, tmp_path):
    # Every start failed on writing the config as JSON (the key metric objects are shared by).
    metric = MetricCfg(type='MetricCfgsTestThresholds', name='passed', metric_config={'thresholds': np.array([0, 0.5, 100])})
    records, _ = _run(make_config, [_task([metric])] * 2, tmp_path / 'runs.jsonl')
    assert [r['metrics'] for r in records] == [{'passed': 2}] * 2 and all('outcome' not in r for r in records)
    # Equal options share one metric object; different ones do not (arrays compare by value).
    other = metric.update(metric_config={'thresholds': np.array([0, 100, 200])})
    records, _ = _run(make_config, [_task([metric]), _task([other])], tmp_path / 'two.jsonl')
    assert [r['metrics'] for r in records] == [{'passed': 2}, {'passed': 1}]


@BaseMetric.register('MetricCfgsTestNumpySuccess')
class NumpySuccess(BaseMetric):
    def update(self, obs):
        self.x = obs['jetbot']['position'][0]

    def calc(self):
        return self.x < 10.0  # np.bool_


@BaseMetric.register('MetricCfgsTestFloat32')
class Float32Distance(BaseMetric):
    def update(self, obs):
        self.position = obs['jetbot']['position']

    def calc(self):
        return np.float32(np.linalg.norm(self.position))


def test_the_run_summary_means_numpy_scalar_metrics(make_config, tmp_path):
    metrics = [MetricCfg(type='MetricCfgsTestNumpySuccess', name='success'), MetricCfg(type='MetricCfgsTestFloat32', name='dist')]
    records, summary = _run(make_config, [_task(metrics)] * 2, tmp_path / 'runs.jsonl')
    assert [r['metrics']['success'] for r in records] == [True, True]
    distances = [r['metrics']['dist'] for r in records]
    assert summary['success'] == 1.0  # (None before: np.bool_ is not a bool)
    assert summary['metrics_mean']['dist'] == pytest.approx(np.mean(distances), rel=1e-6) and distances[0] > 0.03


def test_metrics_without_names_go_by_their_types_and_only_one_of_a_type_may(make_config, tmp_path):
    steps, travelled = MetricCfg(type='StepsMetric'), MetricCfg(type='TraveledDistanceMetric')
    records, _ = _run(make_config, [_task([steps, travelled])], tmp_path / 'runs.jsonl')
    assert set(records[0]['metrics']) == {'StepsMetric', 'TraveledDistanceMetric'} and records[0]['metrics']['StepsMetric'] == 3
    with pytest.raises(ValueError, match=r"repeated: \['StepsMetric'\] \(an entry without a name goes by its type: give each of them a name\)"):
        _task([steps, MetricCfg(type='StepsMetric')])
    with pytest.raises(ValueError, match=r"repeated: \['StepsMetric'\]"):  # a name that is another's type
        _task([steps, MetricCfg(type='TraveledDistanceMetric', name='StepsMetric')])
    _task([MetricCfg(type='StepsMetric', name='a'), MetricCfg(type='StepsMetric', name='b')])


def test_a_tasks_own_metrics_save_path_warns_that_it_changes_nothing(make_config, tmp_path):
    with pytest.warns(UserWarning, match=r"TaskCfg.metrics_save_path='.*task.jsonl' changes nothing: every episode's record goes "
                                         r'to Config.metrics_save_path'):
        task = FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg()], metrics_save_path=str(tmp_path / 'task.jsonl'))
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # the default (and YAML files written with it) stay quiet
        FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg()], metrics_save_path='console')
    records, _ = _run(make_config, [task], tmp_path / 'runs.jsonl')
    assert len(records) == 1 and not (tmp_path / 'task.jsonl').exists()
