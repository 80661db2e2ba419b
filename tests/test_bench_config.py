"""``python -m internutopia.bench --config FILE [--set env_num=N]`` measures the config's own slot
count (it used to run 1, 16 and 64 slots with 16-process pools whatever the file said), and pool
workers keep their kernel notices out of the result rows."""

from __future__ import annotations

import logging

import pytest

from internutopia.bench import command, pool

CONFIG = 'configs/jetbot_point_nav.yaml'  # env_num: 8


@pytest.fixture
def measured(monkeypatch):
    """What ``run`` was asked to measure (the run itself is not started)."""
    asked: dict = {}

    def fake_run(robots, env_nums, *args, **kwargs):
        asked.update(env_nums=env_nums, async_max_workers=kwargs['async_max_workers'])
        return {'machine': {}, 'load_at_end': 0.0, 'rows': [], 'camera_rows': []}

    monkeypatch.setattr(command, 'run', fake_run)
    monkeypatch.setattr(command.processes, 'install_cleanup', lambda: None)
    return asked


@pytest.mark.parametrize(('argv', 'env_nums'), [
    (['--set', 'env_num=8'], [8]),
    (['--set', 'env_num=3'], [3]),
    ([], [8]),                                  # the file's own env_num
    (['--env-nums', '1,2', '--set', 'env_num=3'], [1, 2]),  # slot counts asked for win
])
def test_a_config_is_measured_at_its_env_num(measured, argv, env_nums):
    assert command.main(['--config', CONFIG, '--no-render', *argv]) == 0
    assert measured['env_nums'] == env_nums
    # a pool has at most one worker per slot, and at most 16 by default
    assert measured['async_max_workers'] == 16


def test_pool_workers_keep_kernel_notices_out_of_the_rows(monkeypatch):
    import gymnasium.vector.async_vector_env as gym_async

    monkeypatch.setattr(gym_async, '_async_worker', lambda *args: None)
    monkeypatch.setattr(pool.processes, 'die_with_parent', lambda: None)
    logger = logging.getLogger('internutopia')
    before = list(logger.filters)
    try:
        pool.guarded_worker()
        notice = logger.makeRecord('internutopia', logging.WARNING, __file__, 1, '%s kernel %s in %.1f s',
                                   ('compiled (and cached for later runs)', '_steer_rows', 0.6), None)
        other = logger.makeRecord('internutopia', logging.WARNING, __file__, 1, 'unknown key %r', ('x',), None)
        assert not logger.filter(notice) and logger.filter(other)
    finally:
        logger.filters[:] = before


def test_measuring_processes_keep_kernel_notices_out_of_the_rows(monkeypatch):
    import queue

    from internutopia.bench import fresh

    monkeypatch.setattr(fresh.processes, 'become_group_leader', lambda: None)
    monkeypatch.setattr(fresh.processes, 'die_with_parent', lambda: None)
    logger = logging.getLogger('internutopia')
    before = list(logger.filters)
    try:
        answers: queue.Queue = queue.Queue()
        fresh._worker(answers, lambda: {'done': True}, ())
        assert answers.get_nowait() == {'done': True}
        notice = logger.makeRecord('internutopia', logging.WARNING, __file__, 1,
                                   'preparing kernel %s (compiled on a first run, then loaded from the cache) ...',
                                   ('_carry_rows',), None)
        assert not logger.filter(notice)
    finally:
        logger.filters[:] = before
