"""Faults injected into a recorded run: what the dataset on disk holds afterwards.

Each test injects one fault and reads the dataset back with LeRobot's reader
(``open_lerobot_dataset``): a Ctrl-C inside a step or a reset (the step still reaches the
recording), inside the recorder's own work (its writer's start, a frame's row), a save that fails
on the writer (that episode only is lost; the counters say so), a close whose cleanup raises or
whose writer was killed (no process and no staging folder left), an action dict the loop reuses.
Every episode drives at a speed that names it (``_speed``), so each frame's action says which
episode and step it came from. docs/datasets.md ("Interruptions") says what each promises.
"""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

pytest.importorskip('pyarrow')

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.task.base import BaseTask  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.recording import Recorder  # noqa: E402
from internutopia.recording import layout as layout_module  # noqa: E402
from internutopia.recording import recorder as recorder_module  # noqa: E402
from internutopia.recording.reader import open_lerobot_dataset  # noqa: E402
from internutopia.recording.writer import DatasetWriter  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, jetbot_camera_cfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402
from internutopia_extension.tasks.finite_step import FiniteStepTask  # noqa: E402

#: Hooks run inside the next step's tasks and the next episode start (a Ctrl-C), then forgotten.
IN_STEP: list = []
IN_START: list = []


@pytest.fixture(autouse=True)
def _no_hooks_left():
    IN_STEP.clear()
    IN_START.clear()
    yield
    IN_STEP.clear()
    IN_START.clear()


class RecFaultTaskCfg(FiniteStepTaskCfg):
    """A finite-step task whose ``success`` metric is ``succeed`` (``None``: no such metric)."""

    type: str = 'RecordingFaultTask'
    succeed: bool | None = None


@BaseTask.register('RecordingFaultTask')
class RecFaultTask(FiniteStepTask):
    def reset_slot(self, slot: int, config) -> None:
        super().reset_slot(slot, config)
        self.succeed = getattr(self, 'succeed', {})
        self.succeed[slot] = config.succeed
        while IN_START:
            IN_START.pop()()

    def step(self, slots):
        while IN_STEP:
            IN_STEP.pop()()
        return super().step(slots)

    def episode_metrics(self, slot, metrics):
        succeed = self.succeed.get(slot)
        return metrics if succeed is None else {**metrics, 'success': succeed}


def _ctrl_c() -> None:
    signal.raise_signal(signal.SIGINT)


def _config(tasks: list, env_num: int = 1) -> Config:
    return Config(simulator=SimConfig(physics_dt=1 / 60, rendering_dt=1 / 60, headless=True), env_num=env_num,
                  env_offset_size=5.0, metrics_save_path='none', task_configs=tasks)


def _tasks(count: int, steps: int = 3, camera: bool = False, **kw) -> list:
    sensors = [jetbot_camera_cfg.update(resolution=(32, 24), depth=False)] if camera else []
    robot = JetbotRobotCfg(sensors=sensors)
    robot = robot.update(controllers=[c for c in robot.controllers if c.name == 'move_by_speed'])  # (the one driven)
    return [RecFaultTaskCfg(max_steps=steps, robots=[robot], **kw) for _ in range(count)]


def _speed(run_index: int, step: int = 0) -> float:
    """The forward speed step ``step`` of episode ``run_index`` sends: one value per (episode, step)."""
    return round(0.1 * (run_index + 1) + 0.01 * step, 3)


def _act(speed: float) -> dict:
    return {'jetbot': {'move_by_speed': [speed, 0.0]}}


def _drive(env: Env) -> int:
    """Run the queue to its end, each slot at its episode's speeds, resetting slots as they end; a
    ``KeyboardInterrupt`` is caught and the loop goes on (the call it ended was done). Returns how
    many were caught."""
    caught = 0
    steps: dict[int, int] = {}  # run index -> steps taken
    while not env.finished:
        try:
            idle = [slot for slot in range(env.env_num) if slot not in env.active_slots]
            if idle:
                env.reset(idle)
            active = env.active_slots
            runs = {slot: int(env.runner.episodes[slot].index) for slot in active}
            actions = [_act(_speed(runs[slot], steps.get(runs[slot], 0))) if slot in active else None
                       for slot in range(env.env_num)]
            for run in runs.values():  # (counted before the call: an interrupted step was taken)
                steps[run] = steps.get(run, 0) + 1
            env.step(actions)
        except KeyboardInterrupt:
            caught += 1
    return caught


def _episodes(root: str) -> list[dict]:
    """The saved episodes as LeRobot's reader gives them, in dataset order: run index, actions
    (the speed column), ``next.done``; each episode's last frame is decoded when it has cameras."""
    dataset = open_lerobot_dataset(root)
    table = dataset.hf_dataset.with_format('numpy')
    episodes = dataset.meta.episodes
    out = []
    for index in range(dataset.num_episodes):
        start, stop = int(episodes['dataset_from_index'][index]), int(episodes['dataset_to_index'][index])
        rows = table.select(range(start, stop))
        out.append({'run': int(episodes['run_episode_index'][index]), 'length': int(episodes['length'][index]),
                    'speeds': np.round(np.stack(rows['action'])[:, 0].astype(float), 3).tolist(),
                    'done': np.asarray(rows['next.done']).tolist()})
        if any(key.startswith('observation.images.') for key in dataset.features):
            dataset[stop - 1]  # the episode's video holds all its frames
    return out


def _whole(episode: dict, steps: int = 3) -> bool:
    """Every frame of a ``steps``-step episode, each with the action its step sent."""
    return (episode['length'] == steps and episode['speeds'] == [_speed(episode['run'], t) for t in range(steps)]
            and episode['done'] == [False] * (steps - 1) + [True])


# ------------------------------------------------------------------------------------------------
# Ctrl-C: the step or reset it interrupted still reaches the recording
def test_a_ctrl_c_in_a_step_or_a_reset_still_reaches_the_recording(tmp_path):
    root = str(tmp_path / 'ds')
    tasks = [*_tasks(1, steps=4, succeed=True), *_tasks(1, steps=4, succeed=False), *_tasks(2, steps=3)]
    with Env(_config(tasks)) as env:
        recorder = Recorder(root).attach(env)

        def step(run: int, t: int, interrupt: bool = False) -> None:
            if interrupt:
                IN_STEP.append(_ctrl_c)
            try:
                env.step([_act(_speed(run, t))])
            except KeyboardInterrupt:
                assert interrupt
            else:
                assert not interrupt

        env.reset()
        for t in range(4):  # episode 0 (success), its second step interrupted
            step(0, t, interrupt=t == 1)
        env.reset()
        for t in range(4):  # episode 1 (no success: dropped), its last step interrupted
            step(1, t, interrupt=t == 3)
        env.reset()
        step(2, 0)
        step(2, 1)
        IN_START.append(_ctrl_c)  # episode 2 abandoned by a reset that Ctrl-C interrupts
        with pytest.raises(KeyboardInterrupt):
            env.reset([0])
        assert env.runner.episodes[0].index == 3
        for t in range(3):
            step(3, t)
    episodes = _episodes(root)
    assert [e['run'] for e in episodes] == [0, 3] and all(_whole(e, e['length']) for e in episodes)
    assert [e['length'] for e in episodes] == [4, 3]
    assert (recorder.episodes_saved, recorder.saved_run_indices, recorder.episodes_dropped) == (2, [0, 3], 2)


# ------------------------------------------------------------------------------------------------
# Ctrl-C (or an error) inside the recorder's own work: it is never left half-done
@pytest.mark.parametrize('where', ['writer start', 'between a frame\'s columns'])
def test_a_ctrl_c_inside_the_recorders_work_leaves_it_whole(tmp_path, monkeypatch, where):
    root = str(tmp_path / 'ds')
    if where == 'writer start':
        def writer(*args, _real=DatasetWriter, **kwargs):
            _ctrl_c()
            return _real(*args, **kwargs)

        monkeypatch.setattr(recorder_module, 'DatasetWriter', writer)
    else:
        calls = []

        def action(self, entry, _real=layout_module.Layout.action):
            calls.append(1)
            if len(calls) in (2, 7):  # slot 1 of the first step, slot 0 of the fourth
                _ctrl_c()
            return _real(self, entry)

        monkeypatch.setattr(layout_module.Layout, 'action', action)
    with Env(_config(_tasks(4, camera=True), env_num=2)) as env:
        recorder = Recorder(root).attach(env)
        caught = _drive(env)
    assert caught == (1 if where == 'writer start' else 2)
    episodes = _episodes(root)
    assert sorted(e['run'] for e in episodes) == [0, 1, 2, 3] and all(_whole(e) for e in episodes), episodes
    assert recorder.episodes_saved == 4 and recorder.saves_failed == 0


def test_an_error_starting_the_writer_drops_the_running_episodes_and_recording_goes_on(tmp_path, monkeypatch):
    root = str(tmp_path / 'ds')
    failures = [RuntimeError('no process today')]

    def writer(*args, _real=DatasetWriter, **kwargs):
        if failures:
            raise failures.pop()
        return _real(*args, **kwargs)

    monkeypatch.setattr(recorder_module, 'DatasetWriter', writer)
    with Env(_config(_tasks(4), env_num=2)) as env:
        recorder = Recorder(root).attach(env)
        env.reset()
        with pytest.raises(RuntimeError, match='no process today'):
            env.step([_act(_speed(0)), _act(_speed(1))])
        assert recorder.layout is None and recorder.episodes_dropped == 2  # they would miss that step
        env.reset()  # episodes 2 and 3
        for t in range(3):
            env.step([_act(_speed(2, t)), _act(_speed(3, t))])
    episodes = _episodes(root)
    assert [e['run'] for e in episodes] == [2, 3] and all(_whole(e) for e in episodes)


# ------------------------------------------------------------------------------------------------
# A save that fails on the writer: that episode is lost, warned about and counted; the others saved
def _bad_save(self, token, columns, task, extra, _real=DatasetWriter.save_episode):
    if extra['run_episode_index'] == 1:  # a column one row short: the worker's table cannot be made
        columns = {**columns, 'action': columns['action'][:-1]}
    return _real(self, token, columns, task, extra)


def _bad_frame(self, token, images, _real=DatasetWriter.add_frames):
    if token == 1:  # (episode 1's token) not an image: the worker raises on it
        images = [np.zeros(2, np.uint8) for _ in images]
    return _real(self, token, images)


@pytest.mark.parametrize('fault', ['save', 'frame'])
def test_a_failed_save_loses_that_episode_only(tmp_path, monkeypatch, fault):
    root = str(tmp_path / 'ds')
    if fault == 'save':
        monkeypatch.setattr(DatasetWriter, 'save_episode', _bad_save)
    else:
        monkeypatch.setattr(DatasetWriter, 'add_frames', _bad_frame)
    with Env(_config(_tasks(4, camera=True))) as env:
        recorder = Recorder(root).attach(env)
        with pytest.warns(UserWarning, match=r'episode 1 could not be saved, it is not in the dataset: .*'
                                             + ('save_episode' if fault == 'save' else 'add_frames')):
            _drive(env)
            recorder.flush()
        assert (recorder.episodes_saved, recorder.saved_run_indices, recorder.saves_failed) == (3, [0, 2, 3], 1)
        writer = recorder._writer
    episodes = _episodes(root)
    assert [e['run'] for e in episodes] == [0, 2, 3] and all(_whole(e) for e in episodes)
    assert not writer._process.is_alive() and not os.path.exists(os.path.join(root, '.staging'))


# ------------------------------------------------------------------------------------------------
# close: the writer always stopped, nothing left behind
@pytest.mark.parametrize('fault', ['a drop raises', 'the writer was killed'])
def test_close_stops_the_writer_whatever_fails(tmp_path, monkeypatch, fault):
    root = str(tmp_path / 'ds')
    env = Env(_config(_tasks(3, camera=True)))
    recorder = Recorder(root).attach(env)
    env.reset()
    for t in range(3):
        env.step([_act(_speed(0, t))])
    recorder.flush()  # episode 0 saved
    env.reset()
    env.step([_act(_speed(1, 0))])  # episode 1 running (its video in .staging)
    writer = recorder._writer
    if fault == 'a drop raises':
        def drop(self, token):
            raise RuntimeError('the drop failed')

        monkeypatch.setattr(DatasetWriter, 'drop_episode', drop)
        expected = 'the drop failed'
    else:
        os.kill(writer._process.pid, signal.SIGKILL)
        writer._process.join(10)
        expected = r'died \(exit code -9\)'
    with pytest.warns(UserWarning, match='recording to .* failed: .*' + expected):
        env.close()
    assert not writer._process.is_alive() and writer._process.exitcode is not None
    assert not os.path.exists(os.path.join(root, '.staging'))
    episodes = _episodes(root)
    assert [e['run'] for e in episodes] == [0] and _whole(episodes[0])
    assert recorder.episodes_saved == 1


# ------------------------------------------------------------------------------------------------
# An action dict a loop reuses: recorded as it was sent, also before the layout exists
def test_a_reused_action_dict_is_recorded_as_it_was_sent(tmp_path):
    root = str(tmp_path / 'ds')
    with Env(_config(_tasks(1))) as env:
        Recorder(root).attach(env)
        env.reset()
        action = [{}]
        env.step(action)  # no command: the layout waits for one, this step is kept as it came
        action[0]['jetbot'] = {'move_by_speed': [0.5, 0.0]}  # the same dict, filled in afterwards
        env.step(action)
        action[0]['jetbot']['move_by_speed'][0] = 0.6
        env.step(action)
    (episode,) = _episodes(root)
    assert np.isnan(episode['speeds'][0]) and episode['speeds'][1:] == [0.5, 0.6]


# ------------------------------------------------------------------------------------------------
# The observer hook itself
def test_every_observer_sees_a_call_another_one_raised_in(tmp_path):
    seen = []

    class Broken:
        def on_reset(self, slots, obs, info):
            raise ValueError('broken on_reset')

        def on_step(self, action, result):
            raise ValueError('broken on_step')

        def on_close(self):
            pass

    class Counting(Broken):
        def on_reset(self, slots, obs, info):
            seen.append('reset')

        def on_step(self, action, result):
            seen.append('step')

    with Env(_config(_tasks(1))) as env:
        env.add_observer(Broken())
        env.add_observer(Counting())
        with pytest.raises(ValueError, match='broken on_reset'):
            env.reset()
        with pytest.raises(ValueError, match='broken on_step'):
            env.step([None])
        IN_STEP.append(_ctrl_c)
        with pytest.raises(KeyboardInterrupt):
            env.step([None])  # the Ctrl-C is raised once every observer has seen the step
    assert seen == ['reset', 'step', 'step']


def test_a_recording_whose_writer_died_is_closed_and_the_run_goes_on(tmp_path):
    root = str(tmp_path / 'ds')
    with Env(_config(_tasks(4))) as env:
        recorder = Recorder(root).attach(env)
        env.reset()
        env.step([_act(_speed(0))])
        os.kill(recorder._writer._process.pid, signal.SIGKILL)
        recorder._writer._process.join(10)
        with pytest.raises(RuntimeError, match=r'died \(exit code -9\)'):
            for _ in range(3):
                env.step([_act(_speed(0))])
        with pytest.raises(RuntimeError, match=r'died \(exit code -9\)'):
            recorder.close()  # (it says so again, and the env stops calling it)
        before = env.runner.world_steps
        finished = _drive(env)  # the rest of the queue, unrecorded, without an error
        assert finished == 0 and env.finished and env.runner.world_steps > before
        with pytest.raises(ValueError, match='is not an observer of this env'):
            env.remove_observer(recorder)


def test_a_step_raised_after_by_episode_errors_raise_still_reaches_the_recording(tmp_path, monkeypatch):
    """With ``episode_errors='raise'`` a slot's error is raised once the step is complete: the other
    slots' frames of that step are recorded all the same (the failed episode is not saved)."""
    root = str(tmp_path / 'ds')
    broke = []

    def step(self, slots):
        if 0 in slots.tolist() and not broke:  # (its episode 0's second step, with the other slot and alone)
            if env.runner.table.steps[0] == 2:
                if len(slots) == 1:
                    broke.append(True)
                raise ValueError('slot 0 breaks')
        return FiniteStepTask.step(self, slots)

    monkeypatch.setattr(RecFaultTask, 'step', step)
    config = _config(_tasks(4), env_num=2).model_copy(update={'episode_errors': 'raise'})
    with Env(config) as env:
        recorder = Recorder(root).attach(env)
        env.reset()
        raised = 0
        while not env.finished:
            idle = [slot for slot in range(2) if slot not in env.active_slots]
            if idle:
                env.reset(idle)
            runs = {slot: int(env.runner.episodes[slot].index) for slot in env.active_slots}
            steps = {slot: int(env.runner.table.steps[slot]) for slot in runs}
            try:
                env.step([_act(_speed(runs[s], steps[s])) if s in runs else None for s in range(2)])
            except ValueError as exc:
                assert str(exc) == 'slot 0 breaks'
                raised += 1
    assert raised == 1
    episodes = _episodes(root)
    assert sorted(e['run'] for e in episodes) == [1, 2, 3] and all(_whole(e) for e in episodes)
    assert recorder.episodes_dropped == 1  # episode 0, failed


# ------------------------------------------------------------------------------------------------
# A closed recording holds nothing of its writer: no descriptor, no thread, however long it is kept
def _fds_and_threads() -> tuple[int, list[str]]:
    import threading

    return len(os.listdir('/proc/self/fd')), sorted(thread.name for thread in threading.enumerate())


@pytest.mark.skipif(not os.path.isdir('/proc/self/fd'), reason='counts descriptors in /proc')
def test_closed_recordings_kept_alive_hold_no_descriptor_or_thread(tmp_path):
    def record(index: int) -> Recorder:
        with Env(_config(_tasks(1, camera=True))) as env:
            recorder = Recorder(str(tmp_path / f'ds{index}')).attach(env)
            _drive(env)
        assert recorder.episodes_saved == 1
        return recorder

    kept = [record(0)]  # (the first starts what stays for good: the resource tracker, the renderer)
    before = _fds_and_threads()
    kept += [record(index) for index in range(1, 4)]
    assert _fds_and_threads() == before
    assert all(recorder._writer.closed and not recorder._writer._process.is_alive() for recorder in kept)


def test_a_closed_writer_releases_its_queues_and_process_whether_it_ended_or_died(tmp_path):
    ended = DatasetWriter(str(tmp_path / 'ended'), {}, [], 30.0)
    ended.close()
    died = DatasetWriter(str(tmp_path / 'died'), {}, [], 30.0)
    died.flush()
    os.kill(died._process.pid, signal.SIGKILL)
    died._process.join(10)
    with pytest.raises(RuntimeError, match=r'died \(exit code -9\)'):
        died.close()
    for writer, code in ((ended, 0), (died, -9)):
        assert writer._jobs._closed and writer._reports._closed  # (their pipes and sending thread gone)
        assert not writer._process.is_alive() and writer._process.exitcode == code
        writer.take_reports()  # (answers without its queues)
    ended.flush()  # (returns at once)
    with pytest.raises(RuntimeError, match=r'died \(exit code -9\)'):
        died.close()  # (says so again)
