"""What a user sees from a Ray-distributed env is what one process shows: the same scenario on
``vec_env.Env`` (``env_num=4``) and on Ray (``proc_num=2`` x ``env_num=2``), compared."""

from __future__ import annotations

import json
import os
import threading
import warnings

import numpy as np
import pytest

from internutopia.core.config import Config
from internutopia.core.distribution import RayDistributionCfg
from internutopia.core.task.base import BaseTask
from internutopia.core.vec_env import Env
from internutopia_extension import import_extensions
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.tasks.finite_step import FiniteStepTask

ray = pytest.importorskip('ray')

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('ray'),
              pytest.mark.skipif(not os.path.isdir('/proc'), reason='reads the process table from /proc')]

import_extensions()

GOOD = {'jetbot': {'move_by_speed': [0.2, 0.0]}}


def _tasks(count: int, max_steps: int = 50) -> list[FiniteStepTaskCfg]:
    return [FiniteStepTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg()]) for _ in range(count)]


class StartFailsTaskCfg(FiniteStepTaskCfg):
    """``start_fails``: the episode's start raises, every time."""

    type: str = 'ParityStartFailsTask'
    start_fails: bool = False


@BaseTask.register('ParityStartFailsTask')
class StartFailsTask(FiniteStepTask):
    def reset_slot(self, slot: int, config) -> None:
        if config.start_fails:
            raise RuntimeError('this task never starts')
        super().reset_slot(slot, config)


def _env(kind: str, tasks, path='none', **config) -> Env:
    """The same 4 slots: one process, or 2 Ray runners of 2."""
    if kind == 'local':
        return Env(Config(env_num=4, metrics_save_path=str(path), task_configs=tasks, **config))
    distributed = Config(env_num=2, metrics_save_path=str(path), task_configs=tasks, **config)
    return Env(distributed.distribute(RayDistributionCfg(proc_num=2)))


def _warned(call) -> tuple[str, list[str]]:
    """Whether ``call`` returned or raised (its error's type), and the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            call()
            outcome = 'ok'
        except ValueError:
            outcome = 'ValueError'
    return outcome, [str(w.message) for w in caught]


@pytest.mark.usefixtures('local_ray')
class TestParityOnALocalRay:
    """Envs joining one Ray started here (they leave it running on close)."""

    def test_close_prints_the_run_summary_as_one_process_does(self, tmp_path, capsys):
        printed = {}
        for kind in ('local', 'ray'):
            env = _env(kind, _tasks(4, max_steps=2), tmp_path / f'{kind}.jsonl')
            env.reset()
            env.step([None] * 4)
            env.step([None] * 4)
            capsys.readouterr()
            env.close()
            printed[kind] = [line.split('"wall_time_s"')[0] for line in capsys.readouterr().out.splitlines()]
        # (it printed nothing on Ray)
        assert printed['ray'] == printed['local']
        assert printed['ray'][0].startswith('[internutopia] run summary: {"episodes": 4, "records": 4')

    def test_the_warnings_of_a_step_with_bad_input_are_those_of_one_process(self):
        # One process warns for the slots before the first bad one, in order, then raises; a robot
        # named after it is warned when a later step sends it. On Ray the other runner's check warned
        # it (and never again), and a runner's own warnings before its error came with the next step.
        fly = {'jetbot': {'fly': [1.0]}}
        seen = {}
        for kind in ('local', 'ray'):
            env = _env(kind, _tasks(4))
            try:
                env.reset()
                seen[kind] = [_warned(lambda a=action, e=env: e.step(a)) for action in (
                    [GOOD, fly, GOOD, {'rover': {}}],     # bad slot 1 (runner 0), robot in slot 3 (runner 1)
                    [GOOD, GOOD, GOOD, {'rover': {}}],    # rover warned now
                    [GOOD, GOOD, {'rover2': {}}, fly],    # robot, then the bad slot, on runner 1
                    [GOOD] * 4,
                    [GOOD, GOOD, {'rover2': {}}, GOOD],   # warned once per name: not again
                )]
            finally:
                env.close()
        assert seen['ray'] == seen['local']
        assert [outcome for outcome, _ in seen['ray']] == ['ValueError', 'ok', 'ValueError', 'ok', 'ok']
        assert [len(messages) for _, messages in seen['ray']] == [0, 1, 1, 0, 0]
        assert seen['ray'][1][1][0].startswith("action[3]: no robot 'rover' in env 3 ")
        assert seen['ray'][2][1][0].startswith("action[2]: no robot 'rover2' in env 2 ")

    def test_what_a_slot_without_an_episode_is_sent_is_ignored_as_on_one_process(self, tmp_path):
        # Slot 3 (runner 1) ends after one step; its entry then holds a lock, which Ray cannot
        # serialize. One process ignores it; Ray raised TypeError after runner 0 had stepped, whose
        # results were lost with it: its episodes ended unseen and were never recorded.
        seen, written = {}, {}
        for kind in ('local', 'ray'):
            path = tmp_path / f'{kind}.jsonl'
            env = _env(kind, [*_tasks(3, max_steps=3), *_tasks(1, max_steps=1)], path)
            try:
                env.reset()
                env.step([GOOD] * 4)
                junk = threading.Lock()
                seen[kind] = [env.step([GOOD, GOOD, None, junk])[4] for _ in range(2)] + [env.active_slots]
            finally:
                env.close()
            written[kind] = sorted(json.loads(line)['episode_index'] for line in path.read_text().splitlines())
        assert seen['ray'] == seen['local'] and seen['ray'][-1] == []
        assert written['ray'] == written['local'] == [0, 1, 2, 3]

    def test_an_action_ray_cannot_send_is_a_value_error_naming_its_slot(self):
        for ended in ([], [0, 1]):  # both runners checked first, or runner 1's step alone
            env = _env('ray', [_tasks(1, max_steps=1)[0] if g in ended else _tasks(1)[0] for g in range(4)])
            env.reset()
            env.step([GOOD] * 4)
            before = [i and i['steps'] for i in env.step([None] * 4)[4]]
            for arg in ((x for x in [0.1, 0.0]), threading.Lock()):
                with pytest.raises(ValueError, match=r"^action\[3\]: cannot be sent to its Ray runner \(TypeError: cannot pickle"):
                    env.step([GOOD, GOOD, GOOD, {'jetbot': {'move_by_speed': arg}}])
            after = [i and i['steps'] - 1 for i in env.step([None] * 4)[4]]
            assert after == before  # nothing moved
            env.close()

    def test_failed_starts_are_tried_again_in_their_slot_and_warned_in_the_reset_lists_order(self, tmp_path):
        # Slot 2 (runner 1) and slot 1 (runner 0) get episodes that never start. One process tries
        # each again in its slot, then warns slot 2's first, as reset([2, 0, 1, 3]) lists it. On Ray
        # a runner's retry could take the other runner's episode, put back at the same time, and
        # the warnings came runner by runner.
        tasks = [StartFailsTaskCfg(max_steps=50, start_fails=k in (0, 2), robots=[JetbotRobotCfg()]) for k in range(8)]
        seen, failed = {}, {}
        for kind in ('local', 'ray'):
            path = tmp_path / f'{kind}.jsonl'
            env = _env(kind, tasks, path, episode_attempts=2)
            seen[kind] = _warned(lambda e=env: e.reset([2, 0, 1, 3]))
            env.close()
            failed[kind] = [(r['episode_index'], r['slot'], r['attempts']) for r in map(json.loads, path.read_text().splitlines())
                            if r.get('outcome') == 'failed']
        assert seen['ray'] == seen['local']
        assert [m.split(' (')[0] for m in seen['ray'][1]] == ['episode 0 failed to start in slot 2',
                                                           'episode 2 failed to start in slot 1']
        assert failed['ray'] == failed['local'] == [(0, 2, 2), (2, 1, 2)]

    def test_walking_h1s_move_the_same_on_ray_as_in_one_process(self):
        # 16 walking H1s in one process (32 rows a network call) and on 2 Ray runners of 8 (16
        # rows): each robot's motion bit for bit the same. Before the walking networks ran on one
        # thread, the 32-row calls ran on two and moved the robots by a few nanometres a step.
        from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_by_speed_cfg
        from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

        tasks = [SingleInferenceTaskCfg(robots=[H1RobotCfg(position=(0.0, 0.0, 1.05), controllers=[move_by_speed_cfg])])
                 for _ in range(16)]
        actions = [{'h1': {'move_by_speed': [0.1 * (k % 6), 0.05 * (k % 3), 0.2 * (k % 4) - 0.3]}} for k in range(16)]
        motion = {}
        for kind, env in (('local', Env(Config(env_num=16, metrics_save_path='none', task_configs=tasks))),
                          ('ray', Env(Config(env_num=8, metrics_save_path='none', task_configs=tasks).distribute(
                              RayDistributionCfg(proc_num=2))))):
            try:
                env.reset()
                for _ in range(60):
                    obs = env.step(actions)[0]
                motion[kind] = np.array([np.concatenate([o['h1']['position'], o['h1']['joint_positions']]) for o in obs])
            finally:
                env.close()
        assert np.abs(motion['local'][:, :2]).max() > 0.01  # (they walked)
        np.testing.assert_array_equal(motion['ray'], motion['local'])

    def test_render_takes_the_mode_by_keyword_and_names_a_bad_runner_id(self):
        env = _env('ray', _tasks(4))
        env.reset()
        assert env.render(32, 24).shape == env.render(32, 24, mode='rgb_array').shape == (24, 32, 3)
        assert env.render(32, 24, runner_id=1, mode='human') is None
        with pytest.raises(ValueError, match="render mode must be 'rgb_array' or 'human'; got 'bad'"):
            env.render(32, 24, mode='bad')
        # (Env.render's third argument is the mode: here a TypeError comparing it with an int)
        with pytest.raises(ValueError, match=r"runner_id must be an int in 0\.\.1; got 'rgb_array'"):
            env.render(32, 24, 'rgb_array')
        with pytest.raises(ValueError, match='runner_id must be an int'):
            env.render(32, 24, True)
        with pytest.raises(ValueError, match='runner_id 2 is out of range'):
            env.render(32, 24, np.int64(2))
        env.close()

    def test_the_array_api_says_it_is_not_on_ray_and_what_to_use(self):
        env = _env('ray', _tasks(4))
        env.reset()
        with pytest.raises(NotImplementedError, match=r"step_arrays\(\) is not available on a Ray-distributed env.*use step\(\)"):
            env.step_arrays({'jetbot': {'move_by_speed': np.zeros((4, 2))}})
        with pytest.raises(NotImplementedError, match=r'reset_arrays\(\) is not available .*use reset\(\)'):
            env.reset_arrays([0])
        assert [i['steps'] for i in env.step([None] * 4)[4]] == [1, 1, 1, 1]  # nothing moved before
        env.close()


def test_close_after_the_caller_shut_ray_down_starts_no_ray_and_records_every_episode(tmp_path):
    # (Asking the gone actors auto-started a new Ray, 4-8 s; a joined env left it running.)
    path = tmp_path / 'results.jsonl'
    env = _env('ray', _tasks(3), path)  # its own private Ray
    try:
        env.reset()
        env.step([None] * 4)
    finally:
        ray.shutdown()
    env.close()
    assert not ray.is_initialized()
    records = [line for line in path.read_text().splitlines()]
    assert len(records) == 3 and all('"outcome": "abandoned"' in r and 'Ray was shut down before the env was closed' in r
                                     for r in records)
    env.close()
