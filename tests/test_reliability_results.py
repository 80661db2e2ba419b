"""The results file under faults: a write that fails part-way (a full disk), a file deleted while
the run writes it, and InternUtopia's line format as an option."""

from __future__ import annotations

import errno
import json

import pytest

from internutopia.core import results
from internutopia.core.results import ResultsWriter
from internutopia.core.vec_env import Env
from internutopia_extension.configs.metrics import StepsMetricCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


class DiskFillsUp:
    """Stands in for ``os.write``: from its ``nth`` call on, takes only part of what it is given
    once, then fails with ENOSPC ``failures`` times, then works again (space was freed)."""

    def __init__(self, nth: int, failures: int = 3) -> None:
        self.calls, self.nth, self.failures = 0, nth, failures
        import os

        self.write = os.write

    def __call__(self, fd: int, data) -> int:
        self.calls += 1
        if self.calls == self.nth:
            return self.write(fd, bytes(data[:len(data) // 2 + 3]))  # a short write: part of a line
        if self.nth < self.calls <= self.nth + self.failures:
            raise OSError(errno.ENOSPC, 'No space left on device')
        return self.write(fd, data)


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_write_that_fails_part_way_is_retried_without_doubling_a_line(tmp_path, monkeypatch):
    path = tmp_path / 'results.jsonl'
    monkeypatch.setattr(results, '_write_bytes', DiskFillsUp(nth=4))
    writer = ResultsWriter(str(path))
    with pytest.warns(RuntimeWarning, match='No space left on device'):
        for index in range(10):
            writer.write({'episode_index': index, 'metrics': {'value': index}})
    assert writer.summary()['lines_pending'] == 0 and writer.lines_written == 10
    writer.close()
    assert [line['episode_index'] for line in lines(path)] == list(range(10))


def test_an_env_on_a_full_disk_writes_each_episode_once(make_config, tmp_path, monkeypatch):
    path = tmp_path / 'results.jsonl'
    monkeypatch.setattr(results, '_write_bytes', DiskFillsUp(nth=3, failures=4))
    task = FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg()])
    with Env(make_config([task] * 9, env_num=3, metrics_save_path=str(path))) as env:
        with pytest.warns(RuntimeWarning, match='cannot write'):
            for _ in range(3):
                env.reset()
                env.step([None] * 3)
                env.step([None] * 3)
    assert sorted(line['episode_index'] for line in lines(path)) == list(range(9))


def test_a_results_file_deleted_mid_run_is_made_again_with_every_line(make_config, tmp_path):
    path = tmp_path / 'results.jsonl'
    task = FiniteStepTaskCfg(max_steps=1, robots=[JetbotRobotCfg()])
    with Env(make_config([task] * 6, env_num=2, metrics_save_path=str(path))) as env:
        env.reset()
        env.step([None, None])
        path.unlink()
        env.reset()
        with pytest.warns(RuntimeWarning, match='was deleted while the run wrote it; it was made again with the 2 line'):
            env.step([None, None])
        env.reset()
        env.step([None, None])
        assert env.runner.results.summary()['episodes'] == 6
    assert sorted(line['episode_index'] for line in lines(path)) == list(range(6))


def test_the_upstream_format_writes_the_metric_dict_itself(make_config, tmp_path, capsys):
    path = tmp_path / 'results.jsonl'
    task = FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg()], metrics=[StepsMetricCfg(name='steps_metric')])
    with Env(make_config([task] * 3, env_num=2, metrics_save_path=str(path), metrics_save_format='upstream')) as env:
        env.reset()
        env.step([None, None])
        env.reset([0])  # abandons episode 0 after one step: InternUtopia writes no line for it
        env.step([None, None])
        env.step([None, None])
    assert lines(path) == [{'steps_metric': 2}, {'steps_metric': 2}]
    with Env(make_config([task], env_num=1, metrics_save_path='console', metrics_save_format='upstream')) as env:
        env.reset()
        capsys.readouterr()
        env.step([None])
        env.step([None])
        assert json.loads(capsys.readouterr().out) == {'steps_metric': 2}  # indented JSON, as InternUtopia prints
    with pytest.raises(ValueError, match='metrics_save_format'):
        make_config([task], metrics_save_format='upstream-ish')


def test_the_summary_averages_every_kind_of_number_and_skips_nan_and_the_rest():
    import numpy as np

    writer = ResultsWriter('none')
    writer.write({'episode_index': 0, 'metrics': {'success': True, 'spl': 0.5, 'steps': 10, 'fell': np.bool_(False),
                                                  'error': np.float32(0.25), 'name': 'a', 'path': [1.0]}})
    writer.write({'episode_index': 1, 'metrics': {'success': np.bool_(False), 'spl': float('nan'), 'steps': np.int64(20),
                                                  'fell': True, 'error': np.float64('nan')}})
    writer.write({'episode_index': 2, 'outcome': 'failed', 'metrics': {'spl': 1.0}})  # (not finished: not averaged)
    summary = writer.summary()
    assert summary['episodes'] == 2 and summary['records'] == 3 and summary['outcomes'] == {'failed': 1}
    assert summary['success'] == 0.5 and summary['spl'] == 0.5  # (the NaN left out of the mean)
    assert summary['metrics_mean'] == {'success': 0.5, 'spl': 0.5, 'steps': 15.0, 'fell': 0.5, 'error': 0.25}
