"""Reliability: bad input never gets in, faults end only their own episode, nothing is lost.

Each test checks one promise of docs/reliability.md.
"""

from __future__ import annotations

import json
import os

import pytest

from internutopia.core.util import memory
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.h1 import H1RobotCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


def jetbot_task(max_steps: int = 5, **kw) -> FiniteStepTaskCfg:
    return FiniteStepTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg(**kw)])


# ------------------------------------------------------------------------------------------------
# memory: an env_num this machine cannot hold is refused before it is allocated
def test_an_env_num_beyond_the_machine_is_refused_naming_the_memory(make_config):
    with pytest.raises(ValueError, match=r'env_num=1000000000000 needs about \d+.* GiB .* available'):
        Env(make_config([jetbot_task()], env_num=10 ** 12))


def test_a_structure_too_big_for_the_memory_left_changes_nothing(make_config, monkeypatch):
    # Pretend 60 MB are free: the runner's bookkeeping for 100k slots fits, an H1 pack does not.
    monkeypatch.setattr(memory, 'available_bytes', lambda: 60 * 2 ** 20)
    with Env(make_config([FiniteStepTaskCfg(robots=[H1RobotCfg()])], env_num=100_000)) as env:
        with pytest.raises(ValueError, match='env_num=100000 needs about .* physics state'):
            env.reset([0])
        assert len(env.runner.queue) == 1 and env.active_slots == []


# ------------------------------------------------------------------------------------------------
# results: the path is checked when the env is built; a later write failure never leaves a slot
# half-finished; one file holds one run
@pytest.mark.parametrize('where', ['directory', 'under a file'])
def test_a_results_path_that_cannot_be_written_fails_when_the_env_is_built(make_config, tmp_path, where):
    path = tmp_path if where == 'directory' else tmp_path / 'plain.txt' / 'results.jsonl'
    (tmp_path / 'plain.txt').write_text('')
    with pytest.raises(ValueError, match=f"metrics_save_path '{path}'"):
        Env(make_config([jetbot_task()], metrics_save_path=str(path)))


@pytest.mark.skipif(not os.path.exists('/dev/full'), reason='needs /dev/full (Linux) to make writes fail')
def test_a_failing_write_still_ends_the_episode_once(make_config):
    with Env(make_config([jetbot_task(max_steps=2)] * 2, env_num=1, metrics_save_path='/dev/full')) as env:
        env.reset()
        env.step([None])
        with pytest.warns(RuntimeWarning, match="metrics_save_path '/dev/full': cannot write 1 episode record"):
            _, _, _, truncated, info = env.step([None])
        assert truncated == [True] and info[0]['metrics'] == {}  # the episode ended, its result returned
        assert env.step([None])[0] == [None]  # the slot is done, not finished again and again
        assert env.reset()[1][0] is not None  # and takes the next episode
        with pytest.warns(RuntimeWarning, match='could not be written'):
            env.close()


def test_a_second_run_starts_the_results_file_afresh(make_config, tmp_path):
    path = tmp_path / 'results.jsonl'
    for _ in range(2):
        with Env(make_config([jetbot_task(max_steps=1)] * 2, env_num=2, metrics_save_path=str(path))) as env:
            env.reset()
            env.step([None, None])
    assert sorted(json.loads(line)['episode_index'] for line in path.read_text().splitlines()) == [0, 1]


def test_records_are_not_kept_in_memory(make_config):
    with Env(make_config([jetbot_task(max_steps=1)] * 6, env_num=2)) as env:
        env.reset()
        for _ in range(3):
            env.step([None, None])
            env.reset()
        assert env.runner.results.summary()['episodes'] == 6 and env.runner.results.records == []
