"""The Ray-distributed env (``Config.distribute`` + ``vec_env.Env``) on a local Ray.

The task and config classes defined here are the "user's own extension": they are registered in
this module only, so their reaching the runner actors is part of what is tested.
"""

from __future__ import annotations

import collections
import json
import os
import random
import time

import numpy as np
import pytest

import internutopia
from internutopia.core.config import Config, TaskCfg, strict_config
from internutopia.core.distribution import DistributedConfig, RayDistributionCfg
from internutopia.core.task.base import BaseTask
from internutopia.core.vec_env import MAX_STEPS_ENV, Env
from internutopia_extension import import_extensions
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.tasks.finite_step import FiniteStepTask

ray = pytest.importorskip('ray')

# Every test here starts a Ray (or joins one started for it): one cluster at a time (see conftest.py).
pytestmark = pytest.mark.xdist_group('ray')

import_extensions()


class MarkTaskCfg(FiniteStepTaskCfg):
    """A user task config: ``mark`` comes back in the slot's observation."""

    type: str = 'DistMarkTask'
    mark: float = 0.0
    crash_flag: str | None = None  # the runner process exits at step 2 unless this file exists


@BaseTask.register('DistMarkTask')
class DistMarkTask(FiniteStepTask):
    """A user task: a finite-step task that reports its episode's ``mark``."""

    def __init__(self, view) -> None:
        super().__init__(view)
        self.marks = np.zeros(self.env_num)

    def reset_slot(self, slot: int, config) -> None:
        super().reset_slot(slot, config)
        self.marks[slot] = config.mark

    def step(self, slots: np.ndarray):
        for slot in slots:
            flag = self.configs[slot].crash_flag
            if flag and self.view.steps[slot] == 2 and not os.path.exists(flag):
                open(flag, 'w').close()
                os._exit(1)  # the worker process dies in the middle of a step
        return super().step(slots)

    def get_observations(self, slots: np.ndarray) -> dict:
        return {'mark': self.marks[slots]}


def _tasks(count: int, max_steps=lambda i: 1000) -> list[MarkTaskCfg]:
    return [MarkTaskCfg(mark=float(i), max_steps=max_steps(i), robots=[JetbotRobotCfg()]) for i in range(count)]


def _distributed(tasks, proc_num: int, env_num: int, **config) -> Env:
    cfg = Config(env_num=env_num, metrics_save_path=config.pop('metrics_save_path', 'none'), task_configs=tasks, **config)
    return Env(cfg.distribute(RayDistributionCfg(proc_num=proc_num)))


# Faults the tests inject into a run: a task that fails as told.
class RayFaultTaskCfg(FiniteStepTaskCfg):
    """Fails as told: ``hang_flag`` hangs the runner at step 2 unless the file exists (it is made
    first, so the rerun does not hang; ``hang_always`` hangs every time); ``start_fails`` raises
    on every start; ``step_fails_at`` raises at that step."""

    type: str = 'RayReliabilityFaultTask'
    hang_flag: str | None = None
    hang_always: bool = False
    start_fails: bool = False
    step_fails_at: int = 0


@BaseTask.register('RayReliabilityFaultTask')
class RayFaultTask(FiniteStepTask):
    def reset_slot(self, slot: int, config) -> None:
        if config.start_fails:
            raise RuntimeError('this task never loads')
        super().reset_slot(slot, config)
        self.faults = getattr(self, 'faults', [None] * self.env_num)
        self.faults[slot] = config

    def step(self, slots: np.ndarray):
        for slot in slots.tolist():
            config, steps = self.faults[slot], int(self.view.steps[slot])
            if config.step_fails_at and steps == config.step_fails_at:
                raise ValueError(f'step {steps} broke')
            if config.hang_flag and steps == 2 and (config.hang_always or not os.path.exists(config.hang_flag)):
                open(config.hang_flag, 'w').close()
                time.sleep(600)  # the runner hangs in the middle of a step
        return super().step(slots)


def fault_task(max_steps: int = 3, **kw) -> RayFaultTaskCfg:
    return RayFaultTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg()], **kw)


def _distributed_to(tasks, path, proc_num=2, env_num=1, **kw) -> Env:
    dist = {name: kw.pop(name) for name in ('step_timeout_s', 'reset_timeout_s') if name in kw}
    config = Config(env_num=env_num, metrics_save_path=str(path), task_configs=tasks, **kw)
    return Env(config.distribute(RayDistributionCfg(proc_num=proc_num, **dist)))


def _drive(env: Env, limit: int = 200) -> list[dict]:
    """Step and reset ended or emptied slots until the env is finished; every info seen."""
    infos = []
    env.reset()
    for _ in range(limit):
        if env.finished:
            return infos
        _, _, terminated, _, info = env.step([None] * env.env_num)
        infos.extend(i for i in info if i)
        ended = [g for g, (t, i) in enumerate(zip(terminated, info, strict=True)) if t or (i and i.get('runner_failed'))]
        if ended:
            env.reset(ended)
    raise AssertionError(f'not finished after {limit} steps')


def _records_by_index(path) -> dict[int, list[dict]]:
    found = collections.defaultdict(list)
    for line in path.read_text().splitlines():
        record = json.loads(line)
        found[record['episode_index']].append(record)
    return found


def _processes() -> dict[int, tuple[int, str, str]]:
    """pid -> (parent pid, state, name) of every process, from /proc."""
    table = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/stat') as stream:
                stat = stream.read()
        except OSError:
            continue
        name = stat[stat.index('(') + 1:stat.rindex(')')]
        state, ppid = stat[stat.rindex(')') + 2:].split()[:2]
        table[int(entry)] = (int(ppid), state, name)
    return table


def _descendants(pid: int) -> dict[int, str]:
    """Live (not zombie) descendants of ``pid``: pid -> name."""
    table = _processes()
    found, frontier = {}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, (ppid, state, name) in table.items():
            if ppid == parent and child not in found:
                frontier.append(child)
                if state != 'Z':
                    found[child] = name
    return found


def _alive(pid: int) -> bool:
    state = _processes().get(pid)
    return state is not None and state[1] != 'Z'


def _wait_dead(actor) -> None:
    """``ray.kill`` is asynchronous: wait until calls to ``actor`` fail."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            ray.get(actor.ready.remote(), timeout=5)
        except ray.exceptions.RayActorError:
            return
        time.sleep(0.05)
    raise AssertionError('the killed actor still answers')


# ---------------------------------------------------------------------------------------------
def test_distribution_config_is_strict_and_keeps_the_users_objects():
    task = MarkTaskCfg(mark=3.0, robots=[JetbotRobotCfg()])
    cfg = Config(env_num=3, metrics_save_path='none', task_configs=[task, task])
    before = cfg.model_dump()
    dist = cfg.distribute(RayDistributionCfg(proc_num=2, gpu_num_per_proc=0))
    assert isinstance(dist, DistributedConfig) and isinstance(dist, Config)
    assert dist.env_num == 3 and dist.distribution_config.proc_num == 2
    assert all(t is task for t in dist.task_configs)  # same objects, same classes (not a dump)
    assert cfg.model_dump() == before and not hasattr(cfg, 'distribution_config')
    assert cfg.distribute({'proc_num': 4}).distribution_config.proc_num == 4
    for bad in ({'proc_num': 0}, {'proc_num': '2'}, {'proc_num': True}, {'gpu_num_per_proc': -1},
                {'proc_nums': 2}, {'working_dir': '/no/such/dir'}, {'head_address': ''}):
        with strict_config(), pytest.raises(ValueError, match=next(iter(bad))):  # strict: unknown keys are errors
            RayDistributionCfg(**bad)
    with pytest.raises(ValueError, match='distribution_config'):
        DistributedConfig(env_num=1, task_configs=[task])


def test_a_proc_num_the_machine_cannot_hold_is_refused_by_name_before_anything_starts():
    cfg = Config(env_num=2, metrics_save_path='none', task_configs=[FiniteStepTaskCfg(max_steps=3, robots=[JetbotRobotCfg()])])
    before = cfg.model_dump()
    # A local Ray: each runner is a process of at least ~100 MB (a bare MemoryError before, from
    # the driver's books; at a few hundred, a machine out of memory).
    with pytest.raises(ValueError, match=r'proc_num=1000000000000 needs about .* lower proc_num \(at most about \d+ here\)'):
        Env(cfg.distribute(RayDistributionCfg(proc_num=10**12)))
    # On a cluster only the driver's books are here: still refused by name, not by a MemoryError.
    with pytest.raises(ValueError, match=r"proc_num=1000000000000 needs about .* books of the runners' slots"):
        Env(cfg.distribute(RayDistributionCfg(proc_num=10**12, head_address='ray://nowhere.invalid:10001')))
    assert not ray.is_initialized() and cfg.model_dump() == before


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir('/proc'), reason='reads the process table from /proc')
def test_env_starts_its_own_ray_and_close_leaves_no_process_behind(monkeypatch):
    # (a step bound that runs out stops the app, not the env: close() must still release Ray)
    monkeypatch.setenv(MAX_STEPS_ENV, '1')
    assert not ray.is_initialized()
    before = set(_descendants(os.getpid()))
    cfg = Config(env_num=2, metrics_save_path='none', task_configs=_tasks(4, lambda i: 3))
    with pytest.warns(UserWarning, match='asks for 128.0 GPUs .* the runners reserve none') as warned:
        env = Env(cfg.distribute(RayDistributionCfg(proc_num=2, gpu_num_per_proc=64)))  # MuJoCo needs none
    # it points at the line that built the env (here the tests' env-closing wrapper), not into the package
    assert len(warned) == 1 and not warned[0].filename.startswith(os.path.dirname(internutopia.__file__))
    try:
        assert env.env_num == 4 and ray.is_initialized()
        runner_pids = [info['pid'] for info in env.runner_info()]
        obs, info = env.reset()
        assert [o['mark'] for o in obs] == [0.0, 1.0, 2.0, 3.0]
        env.step([None] * 4)
        assert not env.closed
        ours = {pid: name for pid, name in _descendants(os.getpid()).items() if pid not in before}
        assert 'raylet' in ours.values() and 'gcs_server' in ours.values()
        assert set(runner_pids) <= set(ours)  # the runners are workers of our raylet
    finally:
        env.close()
    assert not ray.is_initialized()
    assert env.closed
    deadline = time.monotonic() + 15
    while any(_alive(pid) for pid in ours) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert {pid: name for pid, name in ours.items() if _alive(pid)} == {}
    assert set(_descendants(os.getpid())) <= before
    with pytest.raises(RuntimeError, match='closed'):
        env.reset()


# ---------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.usefixtures('local_ray')
class TestOnALocalRay:
    """Envs joining one Ray started by the test (they leave it running on close)."""

    def test_every_episode_runs_exactly_once_with_random_partial_resets(self, tmp_path):
        rng = random.Random(7)
        steps_of = {i: rng.randint(1, 6) for i in range(50)}
        results = tmp_path / 'results.jsonl'
        env = _distributed(_tasks(50, steps_of.__getitem__), proc_num=2, env_num=4, metrics_save_path=str(results))
        try:
            finished: list[int] = []
            handed_out: list[int] = []
            idle = list(range(env.env_num))  # done or empty slots
            while True:
                if idle:
                    chosen = rng.sample(idle, rng.randint(1, len(idle)))  # random subset, random order
                    obs, info = env.reset(chosen)
                    assert len(obs) == len(info) == len(chosen)
                    for slot, o, task in zip(chosen, obs, info, strict=True):
                        if task is None:
                            assert o is None
                            continue
                        assert o['mark'] == task.mark  # obs aligned to the caller's order
                        assert env.slot_episodes[slot] == int(task.mark)
                        handed_out.append(int(task.mark))
                        idle.remove(slot)
                if env.finished:
                    break
                action = [{'jetbot': {'move_by_speed': [rng.uniform(-0.3, 0.3), 0.0]}} if rng.random() < 0.7 else None
                          for _ in range(env.env_num)]
                obs, reward, terminated, truncated, info = env.step(action)
                for slot in range(env.env_num):
                    if slot in idle:
                        assert obs[slot] is None and info[slot] is None
                        continue
                    if terminated[slot] or truncated[slot]:
                        index = info[slot]['episode_index']
                        assert info[slot]['steps'] == steps_of[index]
                        finished.append(index)
                        idle.append(slot)
            assert sorted(finished) == list(range(50))
            assert sorted(handed_out) == list(range(50))
        finally:
            env.close()
        records = [json.loads(line) for line in results.read_text().splitlines()]
        assert sorted(r['episode_index'] for r in records) == list(range(50))
        assert {r['slot'] for r in records} <= set(range(8)) and max(r['slot'] for r in records) >= 4

    def test_actions_reach_the_slot_they_were_given_to(self):
        speeds = [0.05 * (g + 1) * (-1) ** g for g in range(6)]  # a different wheel command per slot
        action = [{'jetbot': {'move_by_speed': [v, 0.0]}} for v in speeds]
        env = _distributed(_tasks(6), proc_num=2, env_num=3)
        reference = Env(Config(env_num=6, metrics_save_path='none', task_configs=_tasks(6)))
        try:
            obs, info = env.reset([5, 0, 4, 1, 3, 2])
            assert [o['mark'] for o in obs] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
            assert [t.mark for t in info] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
            reference.reset([5, 0, 4, 1, 3, 2])
            start = [o['jetbot']['position'].copy() for o in env.step([None] * 6)[0]]
            reference.step([None] * 6)
            for _ in range(120):
                obs = env.step(action)[0]
                ref_obs = reference.step(action)[0]
            moved = [o['jetbot']['position'][0] - s[0] for o, s in zip(obs, start, strict=True)]
            # each slot moved with its own command: sign and size follow the slot's speed
            assert np.all(np.sign(moved) == np.sign(speeds))
            assert np.all(np.diff(np.abs(moved[0::2])) > 0) and np.all(np.diff(np.abs(moved[1::2])) > 0)
            ref_moved = [o['jetbot']['position'][0] - s[0] for o, s in zip(ref_obs, start, strict=True)]
            np.testing.assert_allclose(moved, ref_moved, atol=1e-6)
            assert obs[0]['jetbot']['position'].flags.writeable
        finally:
            env.close()
            reference.close()

    def test_a_resets_records_follow_its_reset_list_as_on_one_process(self, tmp_path):
        # reset([3, 0]) abandons the episodes of slots 3 (runner 1) and 0 (runner 0): their records
        # in that order, as one process writes them (they came runner by runner: 0, then 3).
        written = {}
        for name in ('ray', 'local'):
            path = tmp_path / f'{name}.jsonl'
            tasks = _tasks(6, lambda i: 50)
            env = (_distributed(tasks, proc_num=2, env_num=2, metrics_save_path=str(path)) if name == 'ray' else
                   Env(Config(env_num=4, metrics_save_path=str(path), task_configs=tasks)))
            try:
                env.reset()
                env.step([None] * 4)
                env.reset([3, 0])
            finally:
                env.close()
            written[name] = [(r['episode_index'], r['slot'], r['outcome']) for r in map(json.loads, path.read_text().splitlines())]
        # Then the close abandons what still runs, slot by slot, on Ray as on one process.
        assert written['ray'] == written['local'] == [(3, 3, 'abandoned'), (0, 0, 'abandoned'), (5, 0, 'abandoned'),
                                                      (1, 1, 'abandoned'), (2, 2, 'abandoned'), (4, 3, 'abandoned')]

    def test_a_killed_runner_is_replaced_and_its_episodes_rerun_exactly_once(self):
        env = _distributed(_tasks(8, lambda i: 5), proc_num=2, env_num=2)
        try:
            obs, info = env.reset()
            assert [t.mark for t in info] == [0.0, 1.0, 2.0, 3.0]
            env.step([None] * 4)
            env.step([None] * 4)
            old = env.runner_actors[1]
            ray.kill(old)  # runner 1 (slots 2, 3) dies mid-episode
            _wait_dead(old)
            obs, reward, terminated, truncated, info = env.step([{'jetbot': {'move_by_speed': [0.1, 0.0]}}] * 4)
            assert [o is None for o in obs] == [False, False, True, True]
            assert info[2] == {'runner_failed': True, 'requeued_episode': 2, 'runner_id': 1}
            assert info[3] == {'runner_failed': True, 'requeued_episode': 3, 'runner_id': 1}
            assert reward[2] is truncated[2] is None and terminated[2] is True  # no episode runs there now
            assert info[0]['steps'] == info[1]['steps'] == 3  # the other runner went on normally
            assert env.runner_restarts == [0, 1] and env.runner_actors[1] != old
            assert env.slot_episodes == [0, 1, None, None]
            assert env.queue_len == 6  # 4 untouched + 2 requeued
            # Requeued episodes come first, one per runner: either may have killed it, so 3 waits.
            obs, info = env.reset([3, 2])
            assert [t.mark for t in info] == [2.0, 4.0] and [o['mark'] for o in obs] == [2.0, 4.0]
            finished: dict[int, int] = {}
            runs: dict[int, int] = {}
            while not env.finished:
                obs, reward, terminated, truncated, info = env.step([None] * 4)
                assert not any(i and i.get('runner_failed') for i in info)
                done = [g for g in range(4) if truncated[g]]
                for g in done:
                    finished[info[g]['episode_index']] = finished.get(info[g]['episode_index'], 0) + 1
                    runs[info[g]['episode_index']] = info[g]['steps']
                if done:
                    env.reset(done)
            assert finished == {i: 1 for i in range(8)}
            assert runs == {i: 5 for i in range(8)}  # 2 and 3 ran again in full, on the new runner
        finally:
            env.close()

    def test_a_runner_dying_inside_a_step_loses_no_episode(self, tmp_path):
        flag = tmp_path / 'crashed'
        tasks = _tasks(3, lambda i: 4)
        tasks[1] = tasks[1].update(crash_flag=str(flag))
        env = _distributed(tasks, proc_num=2, env_num=1)
        try:
            env.reset()
            env.step([None, None])
            obs, reward, terminated, truncated, info = env.step([None, None])  # runner 1 exits in here
            assert flag.exists()
            assert info[1] == {'runner_failed': True, 'requeued_episode': 1, 'runner_id': 1} and obs[1] is None
            assert info[0] == {'episode_index': 0, 'steps': 2} and obs[0]['mark'] == 0.0
            obs, info = env.reset([1])
            assert info[0].mark == 1.0  # the requeued episode comes first
            finished = []
            while not env.finished:
                obs, reward, terminated, truncated, info = env.step([None, None])
                done = [g for g in range(2) if truncated[g]]
                finished += [(info[g]['episode_index'], info[g]['steps']) for g in done]
                if done:
                    env.reset(done)
            assert sorted(finished) == [(0, 4), (1, 4), (2, 4)]
            assert env.runner_restarts == [0, 1]
        finally:
            env.close()

    def test_bad_input_raises_the_one_process_error_and_changes_nothing(self):
        # (an iterator: a list's unknown type would already fail when the env is built)
        tasks = _tasks(5) + [TaskCfg(type='NoSuchTask')]
        config = Config(env_num=2, metrics_save_path='none', task_configs=tasks[:1])
        env = Env(config.distribute(RayDistributionCfg(proc_num=2)), episodes=iter(tasks))
        reference = Env(Config(env_num=4, metrics_save_path='none', task_configs=tasks[:1]), episodes=iter(tasks))
        try:
            env.reset()
            reference.reset()

            def same_error(call):
                with pytest.raises(ValueError) as got:
                    call(env)
                with pytest.raises(ValueError) as expected:
                    call(reference)
                assert str(got.value) == str(expected.value)
                return str(got.value)

            good = {'jetbot': {'move_by_speed': [0.2, 0.0]}}
            assert 'out of range' in same_error(lambda e: e.reset([4]))
            assert 'more than once' in same_error(lambda e: e.reset([1, 1]))
            same_error(lambda e: e.reset(['a']))
            assert 'length 3' in same_error(lambda e: e.step([good] * 3))
            msg = same_error(lambda e: e.step([good, good, good, {'jetbot': {'fly': [1.0]}}]))
            assert msg.startswith('action[3]') and 'move_by_speed' in msg
            same_error(lambda e: e.step([good, good, {'jetbot': {'move_by_speed': [1.0]}}, good]))
            same_error(lambda e: e.step([{'jetbot': {'fly': 1}}, good, good, {'rover': {}}]))  # first bad slot wins
            # nothing moved, nothing was taken from the queue
            obs, _, _, _, info = env.step([None] * 4)
            assert [i['steps'] for i in info] == [1, 1, 1, 1]
            assert env.slot_episodes == [0, 1, 2, 3]
            # an unregistered task type in the queue: ValueError, and the queue is as it was
            env.step([None] * 4)
            with pytest.raises(ValueError, match='NoSuchTask'):
                env.reset([0, 1])
            assert env.slot_episodes == [0, 1, 2, 3]
            obs, info = env.reset([2])  # episode 4: the failed reset took nothing from the queue
            assert info[0].mark == 4.0
        finally:
            env.close()
            reference.close()

    def test_an_entry_that_is_no_taskcfg_is_recorded_as_failed_once_as_on_one_process(self, tmp_path):
        path = tmp_path / 'results.jsonl'
        entries = iter([fault_task(2), {'type': 'FiniteStepTask'}, fault_task(2), fault_task(2)])
        config = Config(env_num=1, metrics_save_path=str(path), task_configs=[fault_task(2)])
        env = Env(config.distribute(RayDistributionCfg(proc_num=2)), episodes=entries)
        try:
            with pytest.raises(TypeError, match=r'task_configs\[1\] is a dict, expected a TaskCfg'):
                env.reset()
            assert env.slot_episodes == [None, None]  # (the reset changed no slot)
            env.reset()
            assert env.slot_episodes == [0, 2]
            for _ in range(2):
                env.step([None, None])
            env.reset()
            assert env.slot_episodes == [3, None]
        finally:
            env.close()
        records = _records_by_index(path)
        assert sorted(records) == [0, 1, 2, 3] and all(len(r) == 1 for r in records.values())
        refused = records[1][0]
        assert (refused['outcome'], refused['error_type'], refused['task_type'], refused['attempts']) == (
            'failed', 'TypeError', 'dict', 1)

    def test_render_envs_draws_each_slot_in_its_runner_as_one_process_does(self):
        tasks = _tasks(4)
        env = _distributed(tasks, proc_num=2, env_num=2)
        local = Env(Config(env_num=4, metrics_save_path='none', task_configs=tasks))
        try:
            env.reset()
            local.reset()
            ours, theirs = env.render_envs([3, 0, 2], 160, 120), local.render_envs([3, 0, 2], 160, 120)
            assert [frame.shape for frame in ours] == [(120, 160, 3)] * 3
            for a, b in zip(ours, theirs, strict=True):
                assert np.abs(a.astype(int) - b.astype(int)).max() <= 2
        finally:
            env.close()
            local.close()

    def test_a_reset_that_fails_on_one_runner_changes_no_runner(self, tmp_path):
        # Slot 1's next episode has a missing scene: slot 0 (another runner) keeps its episode, both
        # episodes go back to the queue, exactly as on one process.
        tasks = _tasks(3, lambda i: 50) + [MarkTaskCfg(mark=3.0, scene_asset_path=str(tmp_path / 'gone.usd'),
                                                       robots=[JetbotRobotCfg()])]
        results = tmp_path / 'results.jsonl'
        env = _distributed(tasks, proc_num=2, env_num=1, metrics_save_path=str(results))
        reference = Env(Config(env_num=2, metrics_save_path='none', task_configs=tasks))
        try:
            for e in (env, reference):
                e.reset()
                e.step([None, None])
                with pytest.raises(ValueError, match=r'task_configs\[3\]\.scene_asset_path: scene file not found: .*gone.usd'):
                    e.reset()
            assert env.slot_episodes == [0, 1] and env.queue_len == 2
            obs, _, _, _, info = env.step([None, None])
            ref_obs, _, _, _, ref_info = reference.step([None, None])
            assert info == ref_info == [{'episode_index': 0, 'steps': 2}, {'episode_index': 1, 'steps': 2}]
            assert [o['mark'] for o in obs] == [0.0, 1.0]
            np.testing.assert_array_equal(obs[0]['jetbot']['position'], ref_obs[0]['jetbot']['position'])
            assert env.reset([1])[1][0].mark == 2.0  # the queue is as it was
        finally:
            env.close()
            reference.close()
        # Resetting running slot 1 abandoned its episode: recorded, with the global slot id; the
        # close abandoned the two still running (each runner's, with its metrics).
        records = [json.loads(line) for line in results.read_text().splitlines()]
        assert [(r['episode_index'], r['slot'], r['outcome'], r['steps']) for r in records] == [
            (1, 1, 'abandoned', 2), (0, 0, 'abandoned', 2), (2, 1, 'abandoned', 0)]
        assert all(r['metrics'] is not None and 'metrics_error' not in r for r in records)

    def test_failing_starts_and_steps_end_their_own_episodes_once(self, tmp_path):
        path = tmp_path / 'results.jsonl'
        tasks = [fault_task(4), fault_task(4, step_fails_at=2), fault_task(4, start_fails=True), fault_task(4), fault_task(2)]
        env = _distributed_to(tasks, path)
        infos = _drive(env)
        env.close()
        assert any(i.get('failed') == 'ValueError: step 2 broke' for i in infos)
        records = _records_by_index(path)
        assert sorted(records) == [0, 1, 2, 3, 4] and all(len(r) == 1 for r in records.values())
        assert records[1][0]['outcome'] == 'failed' and records[1][0]['stage'] == 'step'
        assert records[2][0]['outcome'] == 'failed' and records[2][0]['attempts'] == 3
        assert [records[i][0]['steps'] for i in (0, 3, 4)] == [4, 4, 2]

    def test_a_scene_that_does_not_load_is_not_requeued_forever(self, tmp_path):
        broken = tmp_path / 'broken.xml'
        broken.write_text('<mujoco><worldbody><geom type="nonsense"/></worldbody></mujoco>')
        path = tmp_path / 'results.jsonl'
        tasks = [fault_task(2), RayFaultTaskCfg(max_steps=2, scene_asset_path=str(broken), robots=[JetbotRobotCfg()]), fault_task(2)]
        env = _distributed_to(tasks, path)
        failures = 0
        for _ in range(10):
            try:
                env.reset()
                break
            except ValueError:
                failures += 1
        assert failures == 3 and env.slot_episodes == [0, 2]
        env.close()
        assert json.loads(path.read_text().splitlines()[0])['outcome'] == 'failed'

    def test_a_hung_runner_is_restarted_and_its_episodes_rerun_or_recorded(self, tmp_path):
        path = tmp_path / 'results.jsonl'
        tasks = [fault_task(3), fault_task(3, hang_flag=str(tmp_path / 'once')), fault_task(3),
                 fault_task(3, hang_flag=str(tmp_path / 'always'), hang_always=True), fault_task(3)]
        env = _distributed_to(tasks, path, step_timeout_s=3.0, episode_attempts=2)
        started = time.monotonic()
        infos = _drive(env)
        assert time.monotonic() - started < 300  # no hang (a hung step sleeps 600 s): each waited out its timeout only
        assert any(i.get('requeued_episode') == 1 for i in infos) and any(i.get('failed_episode') == 3 for i in infos)
        assert sum(env.runner_restarts) == 3  # once for episode 1, twice for episode 3
        env.close()
        records = _records_by_index(path)
        assert sorted(records) == [0, 1, 2, 3, 4] and all(len(r) == 1 for r in records.values())
        assert records[1][0]['steps'] == 3 and 'outcome' not in records[1][0]  # run again, in full
        assert records[3][0]['outcome'] == 'failed' and records[3][0]['error_type'] == 'RunnerHung'
        assert env.finished  # read after close: from what the env knew, not from Ray
        with pytest.raises(RuntimeError, match='this Env is closed'):
            env.runner_info()  # (it used to ask Ray, and started one where none ran)


def test_a_local_ray_that_fails_to_start_is_started_again(monkeypatch):
    # A cold start on a loaded machine can time out inside ray.init; the env starts Ray again.
    real_init, calls = ray.init, []

    def flaky_init(*args, **kwargs):
        calls.append(kwargs.get('address'))
        if len(calls) == 1:
            raise RuntimeError('The current node timed out during startup.')
        return real_init(*args, **kwargs)

    assert not ray.is_initialized()
    monkeypatch.setattr(ray, 'init', flaky_init)
    env = _distributed(_tasks(2, lambda i: 3), proc_num=1, env_num=2)
    try:
        assert calls == ['local', 'local'] and [o['mark'] for o in env.reset()[0]] == [0.0, 1.0]
    finally:
        env.close()
    assert not ray.is_initialized()
