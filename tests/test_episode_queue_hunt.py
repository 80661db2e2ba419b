"""The episode queue seen through ``vec_env.Env`` and InternUtopia's task config manager (a defect
hunt): which episode goes to which slot, in what order, reset's edge cases, the user's configs never
changed, every episode handed out ending with exactly one record, and the manager's members that
InternUtopia's scripts read."""

from __future__ import annotations

import itertools
import json
import pickle

import numpy as np
import pytest

from internutopia.core.config import Config
from internutopia.core.task_config_manager import create_task_config_manager
from internutopia.core.vec_env import Env
from internutopia_extension import import_extensions
from internutopia_extension.configs.metrics.traveled_distance_metric import TraveledDistanceMetricCfg
from internutopia_extension.configs.objects.cube import DynamicCubeCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, jetbot_camera_cfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

import_extensions()


def task(k: int, steps: int = 2) -> FiniteStepTaskCfg:
    """An episode told apart by its robot's x position (``k``)."""
    return FiniteStepTaskCfg(max_steps=steps, robots=[JetbotRobotCfg(position=(float(k), 0.0, 0.05))])


def xs(infos) -> list[float | None]:
    return [None if info is None else info.robots[0].position[0] for info in infos]


def records(path) -> list[dict]:
    with open(path, encoding='utf-8') as stream:
        return [json.loads(line) for line in stream]


def make_env(tasks, env_num=3, path='none', episodes=None, **kw) -> Env:
    return Env(Config(env_num=env_num, env_offset_size=5.0, metrics_save_path=str(path), task_configs=tasks, **kw), episodes)


# -- reset: which episode goes where ----------------------------------------------------------------
def test_reset_hands_episodes_out_in_queue_order_to_the_slots_in_the_order_listed():
    env = make_env([task(k) for k in range(6)])
    obs, info = env.reset()
    assert xs(info) == [0.0, 1.0, 2.0] and all(o is not None for o in obs)
    obs, info = env.reset([2, 0])  # slot 2 first, then slot 0
    assert xs(info) == [3.0, 4.0] and len(obs) == 2
    assert xs(env.active_task_configs[s] for s in range(3)) == [4.0, 1.0, 3.0]
    obs, info = env.reset([1, 2])  # one episode left: slot 1 takes it, slot 2 becomes empty
    assert xs(info) == [5.0, None] and obs[0] is not None and obs[1] is None
    assert env.active_slots == [0, 1] and env.queue_len == 0


def test_reset_of_nothing_changes_nothing():
    env = make_env([task(k) for k in range(4)])
    env.reset()
    assert env.reset([]) == ([], [])
    assert env.queue_len == 1 and env.active_slots == [0, 1, 2]


@pytest.mark.parametrize('bad, message', [
    ([0, 0], 'appears more than once'), ([3], 'out of range; valid env ids: 0..2'), ([-1], 'out of range'),
    ([1.0], 'entries must be int env ids'), ([True], 'entries must be int env ids'), ('0', 'must be a list of env ids'),
    (0, 'must be a list of env ids'), (np.array(1), 'must be a list of env ids'), ([[0, 1]], 'entries must be int env ids'),
])
def test_a_bad_reset_list_is_a_value_error_and_changes_nothing(bad, message):
    env = make_env([task(k) for k in range(5)])
    env.reset()
    before = (env.queue_len, env.active_slots, xs(env.active_task_configs.values()))
    with pytest.raises(ValueError, match=message):
        env.reset(bad)
    assert (env.queue_len, env.active_slots, xs(env.active_task_configs.values())) == before


def test_reset_after_every_episode_finished_gives_none_everywhere_and_writes_nothing(tmp_path):
    path = tmp_path / 'r.jsonl'
    env = make_env([task(0, steps=1), task(1, steps=1)], env_num=3, path=path)
    _, info = env.reset()
    assert xs(info) == [0.0, 1.0, None]
    _, _, terminated, _, _ = env.step([None] * 3)
    assert terminated == [True, True, True] and env.finished()
    assert env.reset() == ([None] * 3, [None] * 3) and env.reset([2, 0]) == ([None] * 2, [None] * 2)
    env.close()
    assert sorted(r['episode_index'] for r in records(path)) == [0, 1]


def test_numpy_ids_and_other_iterables_name_the_same_slots():
    env = make_env([task(k) for k in range(8)])
    env.reset()
    assert xs(env.reset(np.array([2, 0]))[1]) == [3.0, 4.0]
    assert xs(env.reset(range(1, 3))[1]) == [5.0, 6.0]
    assert xs(env.reset(env_ids=(np.int64(0),))[1]) == [7.0]


# -- the user's configs ------------------------------------------------------------------------------
def test_nothing_the_user_passed_in_is_changed_however_deep():
    """One TaskCfg listed three times, holding nested lists and dicts (robots with sensors and
    controllers, an object, a metric's options): reset, step, reset again, a manager's hand-out and
    edits of what the env returned leave every one of the user's objects as it was."""
    robot = JetbotRobotCfg(position=(1.0, 0.0, 0.05), sensors=[jetbot_camera_cfg.update(resolution=(32, 24))])
    other = JetbotRobotCfg(name='j2', position=(0.0, 1.0, 0.05))
    cube = DynamicCubeCfg(name='box', prim_path='/box', position=(0.5, 0.5, 0.1), color=(1.0, 0.0, 0.0))
    metric = TraveledDistanceMetricCfg(metric_config={'robot_name': 'jetbot'})
    shared = FiniteStepTaskCfg(max_steps=3, robots=[robot, other], objects=[cube], metrics=[metric])
    tasks = [shared, shared, shared]
    config = Config(env_num=2, metrics_save_path='none', task_configs=tasks)
    pickled, dumped = pickle.dumps(tasks), config.model_dump()
    parts = [id(shared.robots), id(robot.sensors), id(robot.controllers), id(shared.objects), id(metric.metric_config)]

    handed = create_task_config_manager(config).get_next()[3]
    handed.robots[0].position = (9.0, 9.0, 9.0)
    handed.robots.append(other)
    env = Env(config)
    _, info = env.reset()
    info[0].robots[0].position = (7.0, 7.0, 7.0)  # (the env's own copy)
    for _ in range(4):
        env.step([{'jetbot': {'move_by_speed': [0.5, 0.1]}}] * 2)
    env.reset([1])
    env.task_config_manager.get_next(0)
    env.close()
    assert pickle.dumps(tasks) == pickled and config.model_dump() == dumped
    assert [id(shared.robots), id(robot.sensors), id(robot.controllers), id(shared.objects), id(metric.metric_config)] == parts


# -- exactly one record per episode --------------------------------------------------------------------
def test_an_episode_the_managers_get_next_takes_ends_with_one_handed_out_record(tmp_path):
    """``env.task_config_manager.get_next()`` takes the next episode out of the env's queue (the
    slots go on with the one after): it is recorded as handed out, so every episode the queue
    hands out ends with exactly one record (it was lost without one)."""
    path = tmp_path / 'r.jsonl'
    env = make_env([task(k, steps=2) for k in range(5)], env_num=2, path=path)
    env.reset()
    name, env_id, offset, handed = env.task_config_manager.get_next(1)
    assert (name, env_id, handed.robots[0].position[0]) == ('task_2', 1, 2.0)
    assert offset == list(env.runner.view.origin(1)) and 1 in env.active_task_configs
    assert env.active_task_configs[1].robots[0].position[0] == 1.0  # (slot 1 still runs its own episode)
    while not env.finished():
        _, _, terminated, _, obs_info = env.step([None, None])
        ended = [slot for slot in range(2) if terminated[slot] and obs_info[slot] is not None]
        if ended:
            env.reset(ended)
    summary = env.runner.results.summary()
    env.close()
    lines = records(path)
    assert sorted(r['episode_index'] for r in lines) == [0, 1, 2, 3, 4]
    (record,) = [r for r in lines if r.get('outcome') == 'handed_out']
    assert record['episode_index'] == 2 and record['env_id'] == 1 and record['slot'] is None and record['steps'] == 0
    assert summary['episodes'] == 4 and summary['records'] == 5 and summary['outcomes'] == {'handed_out': 1}


def test_every_episode_ends_once_whatever_ends_it(tmp_path):
    """Finished, abandoned by a reset, handed out, still running at close: one record each."""
    path = tmp_path / 'r.jsonl'
    env = make_env([task(k, steps=3) for k in range(7)], env_num=3, path=path)
    env.reset()                                     # 0, 1, 2
    env.step([None] * 3)
    env.reset([1])                                  # 1 abandoned, slot 1 takes 3
    env.task_config_manager.get_next()              # 4 handed out
    for _ in range(2):
        env.step([None] * 3)                        # 0 and 2 finish (3 steps); 3 runs on (2)
    env.reset([0, 2])                               # 5, 6
    env.reset([0, 2])                               # 5 and 6 abandoned, the queue is empty: slots empty
    env.close()                                     # 3 abandoned
    outcomes = {r['episode_index']: r.get('outcome') for r in records(path)}
    assert len(records(path)) == 7
    assert outcomes == {0: None, 1: 'abandoned', 2: None, 3: 'abandoned', 4: 'handed_out', 5: 'abandoned', 6: 'abandoned'}


def test_an_iterators_entry_that_is_no_taskcfg_is_recorded_as_failed_once_and_keeps_its_index(tmp_path):
    """An iterator of episodes can yield anything (a dict where a ``TaskCfg`` was meant): the reset
    that draws it raises a TypeError naming it, as before, but the entry now takes its index and
    gets one ``failed`` record (it got none, and the next episode took its index); it is not tried
    again, and the slots go on with the episodes after it."""
    path = tmp_path / 'r.jsonl'
    entries = iter([task(0, steps=1), {'type': 'FiniteStepTask'}, task(2, steps=1), task(3, steps=1)])
    env = make_env([task(9)], env_num=2, path=path, episodes=entries)
    with pytest.raises(TypeError, match=r'task_configs\[1\] is a dict, expected a TaskCfg'):
        env.reset()
    assert env.active_slots == []  # (the reset changed no slot: episode 0 went back to the queue)
    _, info = env.reset()
    assert xs(info) == [0.0, 2.0]
    env.step([None, None])
    _, info = env.reset()
    assert xs(info) == [3.0, None]
    env.close()
    lines = sorted(records(path), key=lambda r: r['episode_index'])
    assert [r['episode_index'] for r in lines] == [0, 1, 2, 3]
    refused = lines[1]
    assert (refused['outcome'], refused['error_type'], refused['task_type'], refused['attempts'], refused['slot']) == (
        'failed', 'TypeError', 'dict', 1, None)
    assert all('outcome' not in r for r in (lines[0], lines[2]))


def test_get_next_of_an_entry_that_is_no_taskcfg_records_it_as_failed_and_goes_on(tmp_path):
    path = tmp_path / 'r.jsonl'
    env = make_env([task(9)], env_num=1, path=path, episodes=iter([task(0), 'task 1', task(2)]))
    manager = env.task_config_manager
    assert manager.get_next(0)[0] == 'task_0'
    with pytest.raises(TypeError, match=r'task_configs\[1\] is a str'):
        manager.get_next(0)
    assert manager.get_next(0)[0] == 'task_2' and manager.current_task_config_idx == 3
    env.close()
    assert [(r['episode_index'], r['outcome']) for r in records(path)] == [(0, 'handed_out'), (1, 'failed'), (2, 'handed_out')]


def test_a_handed_out_episode_gets_no_line_in_internutopias_format(tmp_path):
    path = tmp_path / 'r.jsonl'
    env = make_env([task(0, steps=1), task(1, steps=1)], env_num=1, path=path, metrics_save_format='upstream')
    env.reset()
    env.task_config_manager.get_next(0)
    env.step([None])
    env.close()
    assert records(path) == [{}]  # (the finished episode's metric dict: FiniteStepTask reports none)


# -- the manager's members -----------------------------------------------------------------------------
def test_the_envs_manager_lists_the_episodes_the_env_runs():
    config_tasks = [task(9)]
    env = make_env(config_tasks, episodes=[task(1), task(2), task(3)], env_num=2)
    manager = env.task_config_manager
    assert manager.len_tasks == 3 and xs(manager.task_configs) == [1.0, 2.0, 3.0]
    env.reset()
    assert manager.current_task_config_idx == 2 and manager.env_num == 2 and manager.env_offset_size == 5.0
    endless = make_env(config_tasks, episodes=itertools.cycle([task(4)]), env_num=2)
    assert endless.task_config_manager.len_tasks is None and endless.task_config_manager.task_configs == []
    plain = make_env([task(5), task(6)], env_num=2)
    assert plain.task_config_manager.len_tasks == 2 and xs(plain.task_config_manager.task_configs) == [5.0, 6.0]


def test_the_envs_manager_reports_the_envs_slots_and_its_current_queue():
    from internutopia.core.episode_queue import EpisodeQueue

    env = make_env([task(k) for k in range(4)], env_num=2)
    manager = env.task_config_manager
    env.reset()
    assert manager.active_task_configs == env.active_task_configs == manager.get_active_task_configs()
    env.runner.queue = EpisodeQueue([task(8)])  # (as a Gymnasium adapter's reset(seed=...) gives it one)
    assert manager.get_next(0)[3].robots[0].position[0] == 8.0 and env.queue_len == 0


@pytest.mark.parametrize('env_id', [2, -1, 1.0, True, 'x'])
def test_get_next_refuses_an_env_id_that_is_no_slot_and_takes_nothing(env_id):
    env = make_env([task(k) for k in range(4)], env_num=2)
    env.reset()
    with pytest.raises(ValueError, match=r'env_id must be None or an env id in 0\.\.1'):
        env.task_config_manager.get_next(env_id)
    assert env.queue_len == 2 and env.task_config_manager.current_task_config_idx == 2
    manager = create_task_config_manager(Config(env_num=2, metrics_save_path='none', task_configs=[task(0)]))
    with pytest.raises(ValueError, match='env_id must be None'):
        manager.get_next(env_id)
    assert manager.current_task_config_idx == 0


def test_get_next_of_a_closed_env_is_refused():
    env = make_env([task(k) for k in range(4)], env_num=2)
    env.reset()
    manager = env.task_config_manager
    env.close()
    with pytest.raises(RuntimeError, match='closed'):
        manager.get_next(0)


def test_a_managers_empty_queue_uses_no_env_id_as_internutopias_does():
    manager = create_task_config_manager(Config(env_num=2, metrics_save_path='none', task_configs=[task(0)]))
    assert manager.get_next()[:2] == ('task_0', 0)
    assert manager.get_next() == ('', None, None, None)  # (nothing left: no env id is used up)
    assert manager.get_next(1) == ('', 1, None, None) and manager.get_active_task_configs().keys() == {0}
    assert manager.get_next(0) == ('', 0, None, None) and manager.get_active_task_configs() == {}


def test_an_episodes_seed_is_its_index_or_a_hash_of_the_queues_seed_and_index():
    """``Episode.seed`` (what an episode's own draws key on, ``EnvView.episode_seed``): the index
    without a queue seed; with one, a stable hash in [0, 2**63) that differs by seed and by index,
    also for an episode put back and taken again. A Gymnasium reset's seed ``s`` and ``[s]`` start
    queues of the same seed."""
    from internutopia.core.episode_queue import EpisodeQueue
    from internutopia.core.gym_vector.episodes import _queue_seed

    assert [EpisodeQueue([task(0)] * 3).next().seed for _ in range(2)] == [0, 0]
    plain = EpisodeQueue([task(0)] * 3)
    assert [plain.next().seed for _ in range(3)] == [0, 1, 2]
    seeded = [EpisodeQueue([task(0)] * 3, seed=seed) for seed in (11, 11, 12)]
    seeds = [[queue.next().seed for _ in range(3)] for queue in seeded]
    assert seeds[0] == seeds[1] and len(set(seeds[0])) == 3 and not set(seeds[0]) & set(seeds[2])
    assert all(0 <= seed < 2 ** 63 for seed in seeds[0] + seeds[2])
    queue = EpisodeQueue([task(0)] * 2, seed=11)
    first = queue.next()
    queue.put_back([first])
    assert queue.next().seed == first.seed == seeds[0][0]
    for bad in (-1, 1.5, True, '3'):
        with pytest.raises(ValueError, match=f'seed must be None or an int >= 0; got {bad!r}'):
            EpisodeQueue([task(0)], seed=bad)
    assert _queue_seed(5) == _queue_seed([5]) == _queue_seed([None, 5]) != _queue_seed(6)
    assert 0 <= _queue_seed(2 ** 70) < 2 ** 63


def test_a_task_reads_its_episodes_seed_through_the_env_view():
    """``EnvView.episode_seed(slot)`` (and a slot view's ``episode_seed``) is the slot's episode's
    seed: its queue index for an env's own queue; ``None`` for a slot that never had one."""
    with Env(Config(env_num=3, metrics_save_path='none', task_configs=[task(k) for k in range(5)])) as env:
        env.reset([0, 2])
        view = env.runner.view
        assert [view.episode_seed(slot) for slot in range(3)] == [0, None, 1]
        env.reset([1])
        assert view.episode_seed(1) == 2 == view.slot(1).episode_seed
