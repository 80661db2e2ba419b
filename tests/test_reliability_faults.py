"""Faults injected into a run on one process: every episode ends with exactly one record, a
failing slot fails alone, nothing hangs or is lost to a second thread or to Ctrl-C.

Each test injects one fault (a task that raises on its n-th load or at a step, a scene that does
not load, a Ctrl-C inside a step, a second thread) and checks what a user sees: the results file,
the per-slot lists, the summary. docs/reliability.md says what each promises.
"""

from __future__ import annotations

import collections
import json
import signal
import threading

import numpy as np
import pytest

from internutopia.core.task.base import BaseTask
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.tasks.finite_step import FiniteStepTask

#: How many times each tagged episode's task was started (per test: cleared by the fixture).
STARTS: collections.Counter = collections.Counter()
#: Hooks a test sets to act inside a step (a Ctrl-C, a wait for another thread).
IN_STEP: dict[int, object] = {}


#: One entry per record that gets a Ctrl-C while it is turned into its line.
SIGNAL_WHEN_WRITTEN: list[int] = []


class _SignalWhenSerialised:
    def tolist(self) -> int:
        signal.raise_signal(signal.SIGINT)
        return 1


class _InterruptWhenSerialised:
    def tolist(self) -> int:
        raise KeyboardInterrupt  # raised by the metric's own code, not by a signal


@pytest.fixture(autouse=True)
def _fresh_counters():
    STARTS.clear()
    IN_STEP.clear()
    SIGNAL_WHEN_WRITTEN.clear()
    yield
    IN_STEP.clear()
    SIGNAL_WHEN_WRITTEN.clear()


class FaultTaskCfg(FiniteStepTaskCfg):
    """A finite-step task that fails as told: its first ``start_failures`` starts raise, its step
    ``step_failure_at`` raises, ``interrupt_start`` starts raise ``KeyboardInterrupt``, its
    observation raises in the first ``observe_failures`` episodes started, its metrics raise as
    its episode ends with ``metrics_failure``."""

    type: str = 'ReliabilityFaultTask'
    tag: int = 0
    start_failures: int = 0
    step_failure_at: int = 0
    interrupt_start: int = 0
    observe_failures: int = 0
    metrics_failure: bool = False


@BaseTask.register('ReliabilityFaultTask')
class FaultTask(FiniteStepTask):
    def reset_slot(self, slot: int, config) -> None:
        STARTS[config.tag] += 1
        if STARTS[config.tag] <= config.interrupt_start:
            raise KeyboardInterrupt
        if STARTS[config.tag] <= config.start_failures + config.interrupt_start:
            raise RuntimeError(f'task {config.tag} failed to load')
        super().reset_slot(slot, config)
        self.step_failure_at = getattr(self, 'step_failure_at', np.zeros(self.env_num, dtype=np.int64))
        self.step_failure_at[slot] = config.step_failure_at
        self.blind = getattr(self, 'blind', {})
        self.blind.pop(slot, None)
        self.metrics_fail = getattr(self, 'metrics_fail', set())
        self.metrics_fail.discard(slot)
        if config.metrics_failure:
            self.metrics_fail.add(slot)
        if STARTS[config.tag] <= config.observe_failures:
            self.blind[slot] = config.tag

    def get_observations(self, slots: np.ndarray) -> dict:
        for slot in slots.tolist():
            if slot in getattr(self, 'blind', {}):
                raise OSError(f'the sensor of task {self.blind[slot]} is unplugged')
        return {'countdown': self.view.steps[slots].astype(float)}

    def episode_metrics(self, slot: int, metrics: dict):
        if slot in getattr(self, 'metrics_fail', ()):
            raise ZeroDivisionError(f'metrics of slot {slot} divided by zero')
        if SIGNAL_WHEN_WRITTEN:  # Ctrl-C while the episode's record is being written
            kind = SIGNAL_WHEN_WRITTEN.pop()
            return {**metrics, 'mark': _SignalWhenSerialised() if kind == 1 else _InterruptWhenSerialised()}
        return metrics

    def step(self, slots: np.ndarray):
        steps = self.view.steps[slots]
        bad = slots[(self.step_failure_at[slots] > 0) & (steps == self.step_failure_at[slots])]
        if len(bad):
            raise ValueError(f'task broke in slot {int(bad[0])}')
        for slot, hook in list(IN_STEP.items()):
            if slot in slots:
                hook()
        return super().step(slots)


def task(tag: int, max_steps: int = 4, **kw) -> FaultTaskCfg:
    return FaultTaskCfg(tag=tag, max_steps=max_steps, robots=[JetbotRobotCfg()], **kw)


def records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def run_to_the_end(env: Env, limit: int = 500, reset: bool = True) -> None:
    """InternUtopia's loop: step, reset the slots whose episode ended, until the queue is done
    (``reset=False``: the env was reset already)."""
    if reset:
        env.reset()
    for _ in range(limit):
        if env.finished:
            return
        _, _, terminated, _, _ = env.step([None] * env.env_num)
        ended = [i for i, t in enumerate(terminated) if t]
        if ended:
            env.reset(ended)
    raise AssertionError(f'not finished after {limit} steps')


# ------------------------------------------------------------------------------------------------
# a task that fails to start: tried again a bounded number of times, then recorded; its slot takes
# the next episode; every other slot's episode runs on untouched
def test_a_task_that_fails_to_start_is_retried_then_recorded_and_its_slot_takes_the_next(make_config, tmp_path):
    path = tmp_path / 'results.jsonl'
    tasks = [task(0), task(1, start_failures=1), task(2, start_failures=99), task(3), task(4)]
    with Env(make_config(tasks, env_num=3, metrics_save_path=str(path))) as env:
        run_to_the_end(env)
        summary = env.runner.results.summary()
    by_index = collections.defaultdict(list)
    for record in records(path):
        by_index[record['episode_index']].append(record)
    assert sorted(by_index) == [0, 1, 2, 3, 4] and all(len(r) == 1 for r in by_index.values())
    failed = by_index[2][0]
    assert failed['outcome'] == 'failed' and failed['error_type'] == 'RuntimeError'
    assert failed['error'] == 'task 2 failed to load' and failed['attempts'] == 3 and STARTS[2] == 3
    for index in (0, 1, 3, 4):  # the others ran in full (episode 1 on its second try)
        assert by_index[index][0]['steps'] == 4 and 'outcome' not in by_index[index][0]
    assert summary['records'] == 5 and summary['episodes'] == 4 and summary['outcomes'] == {'failed': 1}


@pytest.mark.parametrize('fault', ['start_failures', 'observe_failures'])  # (its task's start, its first observation)
def test_a_failing_start_leaves_the_other_slots_running(make_config, tmp_path, fault):
    path = tmp_path / 'results.jsonl'
    tasks = [task(0, max_steps=10), task(1, max_steps=2), task(2, **{fault: 99}), task(3, max_steps=3)]
    with Env(make_config(tasks, env_num=2, metrics_save_path=str(path))) as env:
        env.reset()
        for _ in range(2):
            _, _, terminated, _, _ = env.step([None, None])
        assert terminated == [False, True]
        before = env.runner.world.slot_state(0)
        obs, info = env.reset([1])  # episode 2 fails three times: the slot takes episode 3
        assert info[0].tag == 3 and obs[0]['countdown'] == 0.0
        for key, value in env.runner.world.slot_state(0).items():
            np.testing.assert_array_equal(value, before[key])
        obs, _, _, _, info = env.step([None, None])
        assert info[0] == {'episode_index': 0, 'steps': 3} and info[1] == {'episode_index': 3, 'steps': 1}
        assert obs[0]['countdown'] == 3.0 and obs[1]['countdown'] == 1.0
    # (0 and 3 ran on to the close, which abandoned them)
    assert [(r['episode_index'], r.get('outcome')) for r in records(path)] == [(1, None), (2, 'failed'), (0, 'abandoned'),
                                                                               (3, 'abandoned')]


# ------------------------------------------------------------------------------------------------
# a new episode whose first observation raises failed to start: the same as a start that raises
def test_a_first_observation_that_raises_is_a_failed_start_and_its_slot_takes_the_next(make_config, tmp_path):
    path = tmp_path / 'results.jsonl'
    tasks = [task(0), task(1, observe_failures=1), task(2, observe_failures=99), task(3), task(4)]
    with Env(make_config(tasks, env_num=3, metrics_save_path=str(path))) as env:
        obs, info = env.reset()
        # Slot 1's episode 1 was seen failing once and started again; slot 2 took episode 3
        # after episode 2 failed its three tries.
        assert [i.tag for i in info] == [0, 1, 3] and all(o is not None for o in obs)
        assert STARTS[1] == 2 and STARTS[2] == 3
        run_to_the_end(env, reset=False)
    by_index = collections.defaultdict(list)
    for record in records(path):
        by_index[record['episode_index']].append(record)
    assert sorted(by_index) == [0, 1, 2, 3, 4] and all(len(r) == 1 for r in by_index.values())
    failed = by_index[2][0]
    assert failed['outcome'] == 'failed' and failed['error_type'] == 'OSError' and failed['attempts'] == 3
    assert failed['error'] == 'the sensor of task 2 is unplugged' and failed['steps'] == 0
    for index in (0, 1, 3, 4):
        assert by_index[index][0]['steps'] == 4 and 'outcome' not in by_index[index][0]


def test_reset_arrays_isolates_a_first_observation_that_raises(make_config, tmp_path):
    path = tmp_path / 'results.jsonl'
    tasks = [task(0), task(1, observe_failures=99), task(2), task(3, observe_failures=1)]
    with Env(make_config(tasks, env_num=3, metrics_save_path=str(path))) as env:
        obs, info = env.reset_arrays()
        assert [i.tag for i in info] == [0, 3, 2] and STARTS[1] == 3 and STARTS[3] == 2  # (slot 1: 1, then 3)
        # Every row holds its slot's first observation, the refilled slots' included.
        np.testing.assert_array_equal(obs['countdown'], [0.0, 0.0, 0.0])
        np.testing.assert_allclose(obs['jetbot']['position'][:, 2], 0.035, atol=1e-3)  # (its start height)
        assert env.step_arrays({}).obs['countdown'].tolist() == [1.0, 1.0, 1.0]
    assert [(r['episode_index'], r.get('outcome'), r.get('attempts')) for r in records(path)] == [
        (1, 'failed', 3), (0, 'abandoned', None), (3, 'abandoned', None), (2, 'abandoned', None)]  # (the close's)


def test_a_reset_whose_every_episode_fails_to_start_stops_instead_of_draining_an_endless_queue(make_config, tmp_path):
    import itertools

    path = tmp_path / 'results.jsonl'
    endless = itertools.cycle([task(0, observe_failures=10 ** 9)])
    with Env(make_config([task(9)], env_num=2, metrics_save_path=str(path)), episodes=endless) as env:
        with pytest.raises(RuntimeError, match=r'16 episodes failed to start in this reset .* the sensor of task 0 is unplugged'):
            env.reset()
        assert env.active_slots == [] and STARTS[0] == 16 * 3
    got = records(path)
    assert len(got) == 16 and {r['outcome'] for r in got} == {'failed'} and sorted(r['episode_index'] for r in got) == list(range(16))


# ------------------------------------------------------------------------------------------------
# a step that raises for one slot ends that slot's episode only
def test_a_step_that_raises_for_one_slot_ends_only_that_episode(make_config, tmp_path):
    path = tmp_path / 'results.jsonl'
    tasks = [task(0, max_steps=6, step_failure_at=3), task(1, max_steps=6), task(2, max_steps=2)]
    with Env(make_config(tasks, env_num=2, metrics_save_path=str(path))) as env:
        env.reset()
        env.step([None, None])
        env.step([None, None])
        obs, reward, terminated, truncated, info = env.step([None, None])
        assert terminated == [True, False] and truncated == [False, False] and reward[0] == 0.0
        assert info[0]['failed'] == 'ValueError: task broke in slot 0' and info[0]['episode_index'] == 0
        assert info[1] == {'episode_index': 1, 'steps': 3} and obs[1] is not None
        assert env.reset([0])[1][0].tag == 2  # the slot takes the next episode
        for _ in range(3):
            env.step([None, None])
        assert env.finished
    got = {r['episode_index']: r for r in records(path)}
    assert sorted(got) == [0, 1, 2]
    assert got[0]['outcome'] == 'failed' and got[0]['stage'] == 'step' and got[0]['steps'] == 3
    assert got[1]['steps'] == 6 and got[2]['steps'] == 2


def test_metrics_that_raise_as_an_episode_ends_fail_only_that_episode(make_config, tmp_path):
    # (they used to raise out of every step from then on: the slot never left its ended episode)
    path = tmp_path / 'results.jsonl'
    tasks = [task(0, max_steps=2, metrics_failure=True), task(1, max_steps=5), task(2, max_steps=2)]
    with Env(make_config(tasks, env_num=2, metrics_save_path=str(path))) as env:
        env.reset()
        env.step([None, None])
        obs, reward, terminated, truncated, info = env.step([None, None])
        assert terminated == [True, False] and reward[0] == 0.0
        assert info[0]['failed'] == 'ZeroDivisionError: metrics of slot 0 divided by zero'
        assert info[1] == {'episode_index': 1, 'steps': 2} and obs[1] is not None
        _, _, _, _, info = env.step([None, None])  # slot 1 steps on, slot 0 waits for its reset
        assert info == [None, {'episode_index': 1, 'steps': 3}]
        assert env.reset([0])[1][0].tag == 2
        for _ in range(2):
            env.step([None, None])
        assert env.finished
    got = {r['episode_index']: r for r in records(path)}
    assert sorted(got) == [0, 1, 2] and len(records(path)) == 3
    assert got[0]['outcome'] == 'failed' and got[0]['stage'] == 'step' and got[0]['steps'] == 2
    assert got[0]['error_type'] == 'ZeroDivisionError' and 'metrics' not in got[0]
    assert got[1]['steps'] == 5 and got[2]['steps'] == 2 and 'outcome' not in got[1]


def test_metrics_that_raise_inside_an_action_repeat_fail_only_that_episode(make_config, tmp_path):
    path = tmp_path / 'results.jsonl'
    tasks = [task(0, max_steps=2, metrics_failure=True), task(1, max_steps=8)]
    with Env(make_config(tasks, env_num=2, metrics_save_path=str(path))) as env:
        env.reset()
        out = env.step_arrays({}, repeat=4)
        assert out.terminated.tolist() == [True, False] and out.truncated.tolist() == [False, False]
        assert out.failed == {0: 'ZeroDivisionError: metrics of slot 0 divided by zero'}
        assert env.runner.view.steps.tolist() == [2, 4] and env.active_slots == [1]
        out = env.step_arrays({}, repeat=4)
        assert (out.terminated | out.truncated).tolist() == [False, True] and not out.failed
    got = {r['episode_index']: r for r in records(path)}
    assert got[0]['outcome'] == 'failed' and got[0]['steps'] == 2 and got[1]['steps'] == 8


def test_episode_errors_raise_reraises_after_recording(make_config, tmp_path):
    path = tmp_path / 'results.jsonl'
    tasks = [task(0, max_steps=6, step_failure_at=2), task(1, max_steps=6)]
    with Env(make_config(tasks, env_num=2, metrics_save_path=str(path), episode_errors='raise')) as env:
        env.reset()
        env.step([None, None])
        with pytest.raises(ValueError, match='task broke in slot 0'):
            env.step([None, None])
        assert env.active_slots == [1] and records(path)[0]['outcome'] == 'failed'
        _, _, _, _, info = env.step([None, None])  # the env goes on
        assert info[1] == {'episode_index': 1, 'steps': 3}


# ------------------------------------------------------------------------------------------------
# a scene that does not load: the reset raises, a bounded number of times, then the episode is
# recorded as failed and the run goes on (it used to come back at the front of the queue forever)
def test_a_scene_that_fails_to_load_is_not_requeued_forever(make_config, tmp_path):
    broken = tmp_path / 'broken.xml'
    broken.write_text('<mujoco><worldbody><geom type="nonsense"/></worldbody></mujoco>')
    path = tmp_path / 'results.jsonl'
    tasks = [FaultTaskCfg(tag=0, max_steps=2, scene_asset_path=str(broken), robots=[JetbotRobotCfg()]), task(1, max_steps=2)]
    with Env(make_config(tasks, env_num=1, metrics_save_path=str(path))) as env:
        errors = []
        for _ in range(10):
            try:
                env.reset()
                break
            except ValueError as exc:
                errors.append(str(exc))
        assert len(errors) == 3 and 'recorded as failed' in errors[-1] and 'recorded' not in errors[0]
        assert env.runner.episodes[0].index == 1
        env.step([None])
        env.step([None])
        assert env.finished
    got = records(path)
    assert [(r['episode_index'], r.get('outcome')) for r in got] == [(0, 'failed'), (1, None)]
    assert got[0]['error_type'] == 'ValueError' and got[0]['attempts'] == 3


# ------------------------------------------------------------------------------------------------
# one thread at a time
def test_a_second_thread_entering_step_gets_a_clear_error(make_config):
    with Env(make_config([task(0, max_steps=50)], env_num=1)) as env:
        env.reset()
        inside, release = threading.Event(), threading.Event()

        def wait() -> None:
            inside.set()
            release.wait(10)

        IN_STEP[0] = wait
        first = threading.Thread(target=env.step, args=([None],), name='stepper')
        first.start()
        assert inside.wait(10)
        try:
            with pytest.raises(RuntimeError, match=r"in step\(\) in thread 'stepper'.*not thread-safe"):
                env.step([None])
            with pytest.raises(RuntimeError, match=r'reset\(\) from thread'):
                env.reset([0])
        finally:
            release.set()
            first.join(10)
        del IN_STEP[0]
        assert env.step([None])[4][0]['steps'] == 2  # one step each, no step lost or doubled


# ------------------------------------------------------------------------------------------------
# Ctrl-C: the call it interrupts completes; stepping goes on with nothing lost or doubled
def test_ctrl_c_during_a_step_loses_and_doubles_nothing(make_config, tmp_path):
    path = tmp_path / 'results.jsonl'
    tasks = [task(i, max_steps=1 + i % 3) for i in range(12)]
    with Env(make_config(tasks, env_num=3, metrics_save_path=str(path))) as env:
        env.reset()
        interrupts, steps = 0, 0
        while not env.finished and steps < 200:
            steps += 1
            if steps % 3 == 0:  # Ctrl-C arrives while the tasks run
                IN_STEP[steps % 2] = lambda: (IN_STEP.clear(), signal.raise_signal(signal.SIGINT))
            if steps % 4 == 0:  # or while an ended episode's record is written (a signal, or the metric's code)
                SIGNAL_WHEN_WRITTEN.append(1 if steps % 8 else 2)
            try:
                _, _, terminated, _, _ = env.step([None] * 3)
            except KeyboardInterrupt:
                interrupts += 1
                terminated = [env.runner.status[i] != 1 for i in range(3)]  # what the lost result said
            ended = [i for i, t in enumerate(terminated) if t]
            if ended:
                env.reset(ended)
        assert env.finished and interrupts > 2
        summary = env.runner.results.summary()
    assert sorted(r['episode_index'] for r in records(path)) == list(range(12))
    assert summary['episodes'] == summary['records'] == 12


def test_ctrl_c_inside_a_reset_loses_no_episode(make_config, tmp_path):
    path = tmp_path / 'results.jsonl'
    tasks = [task(0, max_steps=2), task(1, max_steps=2, interrupt_start=1), task(2, max_steps=2), task(3, max_steps=2)]
    with Env(make_config(tasks, env_num=3, metrics_save_path=str(path))) as env:
        with pytest.raises(KeyboardInterrupt):
            env.reset()
        run_to_the_end(env)
    assert sorted(r['episode_index'] for r in records(path)) == [0, 1, 2, 3]


# ------------------------------------------------------------------------------------------------
# slots started in a step's own call (step_arrays(reset_list=...)): a new episode whose first
# observation raises failed to start, a running slot whose observation raises failed, each alone
def test_a_start_in_the_step_whose_first_observation_raises_is_a_failed_start(make_config, tmp_path):
    path = tmp_path / 'results.jsonl'
    tasks = [task(0, max_steps=6), task(1, max_steps=1), task(2, observe_failures=99), task(3), task(4)]
    with Env(make_config(tasks, env_num=2, metrics_save_path=str(path))) as env:
        env.reset_arrays()
        out = env.step_arrays({})
        assert out.truncated.tolist() == [False, True]
        out = env.step_arrays({}, reset_list=[1])
        # Episode 2 failed its three tries; slot 1 took episode 3, observed with slot 0's step.
        assert [cfg.tag for cfg in out.started] == [3] and STARTS[2] == 3
        assert out.active.tolist() == [True, False] and out.obs['countdown'].tolist() == [2.0, 0.0]
        assert env.step_arrays({}).obs['countdown'].tolist() == [3.0, 1.0]
    got = records(path)
    assert [(r['episode_index'], r.get('outcome')) for r in got] == [(1, None), (2, 'failed'), (0, 'abandoned'),
                                                                     (3, 'abandoned')]  # (the last two: the close's)
    assert got[1]['error'] == 'the sensor of task 2 is unplugged' and got[1]['attempts'] == 3


def test_a_running_slot_whose_observation_raises_fails_alone_when_others_start_in_the_step(make_config, tmp_path):
    path = tmp_path / 'results.jsonl'
    tasks = [task(0, max_steps=6), task(1, max_steps=1), task(2), task(3)]
    with Env(make_config(tasks, env_num=2, metrics_save_path=str(path))) as env:
        env.reset_arrays()
        assert env.step_arrays({}).truncated.tolist() == [False, True]
        env.runner.terms.tasks['ReliabilityFaultTask'].blind[0] = 0  # slot 0's sensor goes now
        out = env.step_arrays({}, reset_list=[1])
        assert out.terminated.tolist() == [True, False] and out.failed == {0: 'OSError: the sensor of task 0 is unplugged'}
        assert [cfg.tag for cfg in out.started] == [2] and out.obs['countdown'].tolist() == [0.0, 0.0]
        assert env.active_slots == [1]
    got = records(path)
    assert [(r['episode_index'], r.get('outcome')) for r in got] == [(1, None), (0, 'failed'), (2, 'abandoned')]  # (the close's)
    assert got[1]['stage'] == 'step' and got[1]['steps'] == 2


def test_ctrl_c_in_a_vector_step_that_starts_envs_keeps_them_started(make_config, tmp_path):
    from internutopia.core.gym_vector import VectorEnv

    path = tmp_path / 'results.jsonl'
    config = make_config([task(0, max_steps=9), task(1, max_steps=2), task(2, max_steps=9), task(3, max_steps=9)],
                         env_num=2, metrics_save_path=str(path))
    env = VectorEnv(config)
    try:
        env.reset()
        zero = np.zeros((2, 2), dtype=np.float32)
        for _ in range(2):
            _, _, _, truncated, _ = env.step(zero)
        assert truncated.tolist() == [False, True]  # env 1's episode ended: it starts on the next step
        IN_STEP[0] = lambda: (IN_STEP.clear(), signal.raise_signal(signal.SIGINT))
        with pytest.raises(KeyboardInterrupt):
            env.step(zero)  # (env 0 steps, env 1 starts its next episode, a Ctrl-C lands in between)
        # The env that started is booked as running its new episode: the next step steps it, once.
        _, _, _, _, info = env.step(zero)
        assert info['episode_index'].tolist() == [0, 2] and info['steps'].tolist() == [4, 1]
    finally:
        env.close()
    # Episode 1 ended; episode 2 was never abandoned to start again (0 and 2 ran on to the close,
    # which abandoned each of them once).
    assert [(r['episode_index'], r.get('outcome', 'ended')) for r in records(path)] == [(1, 'ended'), (0, 'abandoned'),
                                                                                        (2, 'abandoned')]
