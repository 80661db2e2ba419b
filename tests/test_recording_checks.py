"""What a recording checks and counts, read back as a user sees it: the dataset on disk as LeRobot
reads it (``open_lerobot_dataset``), the recorder's counters, the errors and warnings it gives.

Episodes that do not fit the layout (either way) are skipped and counted once; a ``success``
metric is read as a bool; an unusable or shared ``root`` and bad ``VideoOptions`` are refused when
the recorder is made; ``meta/stats.json`` equals the pooling of every episode's statistics; a run
that sends no command keeps no observation; a save that fails leaves no file, files a kill left
uncounted are not read; a dataset without episodes says so. docs/datasets.md describes each.
"""

from __future__ import annotations

import copy
import errno
import json
import os
import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest

pytest.importorskip('pyarrow')

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.task.base import BaseTask  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.recording import Recorder, VideoOptions  # noqa: E402
from internutopia.recording import files as files_module  # noqa: E402
from internutopia.recording import recorder as recorder_module  # noqa: E402
from internutopia.recording.files import CLAIM, DatasetFiles  # noqa: E402
from internutopia.recording.layout import DEFAULT_FEATURES, EXTRA_FEATURES  # noqa: E402
from internutopia.recording.reader import open_lerobot_dataset  # noqa: E402
from internutopia.recording.stats import episode_stats, pool_stats  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, jetbot_camera_cfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402
from internutopia_extension.tasks.finite_step import FiniteStepTask  # noqa: E402

#: The ``success`` metric each episode of a ``CheckSuccessTask`` reports (by ``value``, an index).
SUCCESS_VALUES: list[Any] = []


class CheckTaskCfg(FiniteStepTaskCfg):
    """A finite-step task whose ``success`` metric is ``SUCCESS_VALUES[value]`` (``None``: none)."""

    type: str = 'RecordingCheckTask'
    value: int | None = None


@BaseTask.register('RecordingCheckTask')
class CheckTask(FiniteStepTask):
    def reset_slot(self, slot: int, config) -> None:
        super().reset_slot(slot, config)
        self.values = getattr(self, 'values', {})
        self.values[slot] = config.value

    def episode_metrics(self, slot, metrics):
        value = self.values.get(slot)
        return metrics if value is None else {**metrics, 'success': SUCCESS_VALUES[value]}


def _config(tasks: list, env_num: int = 1) -> Config:
    return Config(simulator=SimConfig(physics_dt=1 / 60, rendering_dt=1 / 60, headless=True), env_num=env_num,
                  env_offset_size=5.0, metrics_save_path='none', task_configs=tasks)


def _robot(camera: bool = False, all_controllers: bool = False) -> JetbotRobotCfg:
    robot = JetbotRobotCfg(sensors=[jetbot_camera_cfg.update(resolution=(32, 24), depth=False)] if camera else [])
    if not all_controllers:
        robot = robot.update(controllers=[c for c in robot.controllers if c.name == 'move_by_speed'])
    return robot


def _act(speed: float) -> dict:
    return {'jetbot': {'move_by_speed': [speed, 0.0]}}


def _drive(env: Env) -> list[int]:
    """Run the queue to its end; the run indices of the episodes that ended."""
    ended = []
    while not env.finished:
        idle = [slot for slot in range(env.env_num) if slot not in env.active_slots]
        if idle:
            env.reset(idle)
        runs = {slot: int(env.runner.episodes[slot].index) for slot in env.active_slots}
        _, _, terminated, _, info = env.step([_act(0.1 * (runs[s] + 1)) if s in runs else None for s in range(env.env_num)])
        ended += [runs[s] for s in runs if terminated[s] and info[s] is not None]
    return ended


# ------------------------------------------------------------------------------------------------
# Episodes that do not fit the layout: skipped (either direction), each counted once
@pytest.mark.parametrize('case', ['extra camera', 'missing camera', 'extra state leaves'])
def test_episodes_that_do_not_fit_the_layout_are_skipped_and_counted_once(tmp_path, case):
    root = str(tmp_path / 'ds')
    odd = {'extra camera': _robot(camera=True), 'missing camera': _robot(), 'extra state leaves': _robot(all_controllers=True)}[case]
    usual = _robot(camera=case == 'missing camera')
    # episodes 1 and 3 differ from the layout episode 0 fixes (episode 3 is abandoned mid-way)
    tasks = [CheckTaskCfg(max_steps=3, robots=[odd if i in (1, 3) else usual]) for i in range(5)]
    with Env(_config(tasks)) as env:
        recorder = Recorder(root).attach(env)
        with pytest.warns(UserWarning, match=r'episode 1 \(slot 0\) does not fit the dataset\'s layout'):
            for run in range(3):
                env.reset()
                for _ in range(3):
                    env.step([_act(0.1 * (run + 1))])
        with pytest.warns(UserWarning, match=r'episode 3 \(slot 0\) does not fit'):
            env.reset()  # episode 3: skipped, then abandoned by a reset
        env.step([_act(0.4)])
        env.reset()  # episode 4
        for _ in range(3):
            env.step([_act(0.5)])
    assert recorder.saved_run_indices == [0, 2, 4]
    assert (recorder.episodes_saved, recorder.episodes_dropped, recorder.saves_failed) == (3, 2, 0)
    dataset = open_lerobot_dataset(root)
    assert dataset.num_episodes == 3 and list(dataset.meta.episodes['run_episode_index']) == [0, 2, 4]
    cameras = [key for key in dataset.features if key.startswith('observation.images.')]
    assert cameras == (['observation.images.camera'] if case == 'missing camera' else [])
    state = dataset.features['observation.state']
    assert len(state['names']) == dataset[0]['observation.state'].shape[0] == 12  # move_by_speed's jetbot only
    if cameras:
        dataset[len(dataset) - 1]  # every saved episode's video decodes


def test_a_skipped_episode_running_at_close_is_counted_once(tmp_path):
    root = str(tmp_path / 'ds')
    tasks = [CheckTaskCfg(max_steps=3, robots=[_robot()]), CheckTaskCfg(max_steps=30, robots=[_robot(camera=True)])]
    with Env(_config(tasks, env_num=2)) as env:
        recorder = Recorder(root).attach(env)
        env.reset()
        with pytest.warns(UserWarning, match='episode 1 .*does not fit') as caught:
            for _ in range(5):
                env.step([_act(0.1), _act(0.2)])
    assert not [w for w in caught if "out of the recording's sight" in str(w.message)]  # (it keeps no rows: not a gap)
    assert (recorder.saved_run_indices, recorder.episodes_dropped) == ([0], 1)


# ------------------------------------------------------------------------------------------------
# The success metric, read as a bool
def test_a_success_metric_is_read_as_a_bool(tmp_path):
    root = str(tmp_path / 'ds')
    SUCCESS_VALUES[:] = [np.False_, 0, 0.0, False, np.True_, 1, 2.5, np.float32(1.0), True, 'yes', [1, 0], float('nan')]
    saved = [4, 5, 6, 7, 8]
    tasks = [CheckTaskCfg(max_steps=2, robots=[_robot()], value=i) for i in range(len(SUCCESS_VALUES))]
    tasks.append(CheckTaskCfg(max_steps=2, robots=[_robot()]))  # no success metric: saved
    with Env(_config(tasks)) as env:
        recorder = Recorder(root).attach(env)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            _drive(env)
    messages = [str(w.message) for w in caught if 'success metric' in str(w.message)]
    assert len(messages) == 3 and all('not a bool or a number: it is taken as unsuccessful' in m for m in messages)
    assert any("episode 9 has a success metric of 'yes' (str)" in m for m in messages)
    assert any('episode 10 has a success metric of [1, 0] (list)' in m for m in messages)
    assert any('episode 11 has a success metric of nan (float)' in m for m in messages)
    assert recorder.saved_run_indices == [*saved, 12] and recorder.episodes_dropped == 7
    dataset = open_lerobot_dataset(root)
    assert list(dataset.meta.episodes['success']) == [True] * 6
    assert np.asarray(dataset.hf_dataset.with_format('numpy')['next.success']).all()


def test_kept_failures_are_marked_unsuccessful_whatever_the_metrics_type(tmp_path):
    root = str(tmp_path / 'ds')
    SUCCESS_VALUES[:] = [np.False_, 0.0, np.int64(1), 'maybe']
    tasks = [CheckTaskCfg(max_steps=2, robots=[_robot()], value=i) for i in range(4)]
    with Env(_config(tasks)) as env:
        recorder = Recorder(root, keep_failed=True).attach(env)
        with pytest.warns(UserWarning, match="success metric of 'maybe'"):
            _drive(env)
    assert recorder.saved_run_indices == [0, 1, 2, 3]
    dataset = open_lerobot_dataset(root)
    assert list(dataset.meta.episodes['success']) == [False, False, True, False]
    assert np.asarray(dataset.hf_dataset.with_format('numpy')['next.success']).tolist() == [False] * 4 + [True] * 2 + [False] * 2


# ------------------------------------------------------------------------------------------------
# The writer's libraries: missing, or installed but failing to import
def _fail_imports_of(package: str, error: ImportError, monkeypatch) -> None:
    """Every import of ``package`` (or a module in it) raises ``error`` for the rest of the test."""
    real_import = __import__

    def failing(name, *args, **kwargs):
        if name == package or name.startswith(package + '.'):
            raise error
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr('builtins.__import__', failing)


@pytest.mark.parametrize(('error', 'expected'), [
    (ModuleNotFoundError("No module named 'pyarrow'", name='pyarrow'),
     r"needs pyarrow and PyAV \(pyarrow is missing\): pip install 'internutopia\[dataset\]'"),
    # (pyarrow 26 with NumPy 1.x: installed, so the install hint would not help)
    (ImportError('pyarrow requires NumPy 2.0 or newer, found 1.26.4'),
     r'needs pyarrow and PyAV; it is installed but did not import \(pyarrow requires NumPy 2\.0 or newer, found '
     r"1\.26\.4\); the versions this project tests: pip install 'internutopia\[dataset\]'"),
])
def test_a_recorder_says_whether_its_libraries_are_missing_or_fail_to_import(tmp_path, monkeypatch, error, expected):
    _fail_imports_of('pyarrow', error, monkeypatch)
    with pytest.raises(ImportError, match=expected):
        Recorder(tmp_path / 'dataset')
    assert not (tmp_path / 'dataset').exists()  # (refused before the folder was claimed)


@pytest.mark.parametrize(('error', 'expected'), [
    (ModuleNotFoundError("No module named 'lerobot'", name='lerobot'), r'imports \(lerobot is missing\): pip install --no-deps lerobot=='),
    # (the pinned pandas with NumPy 1.x: its compiled part does not load)
    (ImportError('C extension: None not built.'),
     r'imports; it is installed but did not import \(C extension: None not built\.\); the versions this project tests: pip install --no-deps lerobot=='),
])
def test_the_reader_says_whether_lerobot_is_missing_or_fails_to_import(tmp_path, monkeypatch, error, expected):
    (tmp_path / 'meta').mkdir()
    (tmp_path / 'meta' / 'info.json').write_text(json.dumps({'total_episodes': 1}))
    _fail_imports_of('lerobot', error, monkeypatch)
    with pytest.raises(ImportError, match=expected):
        open_lerobot_dataset(tmp_path)


# ------------------------------------------------------------------------------------------------
# The folder: checked and claimed when the recorder is made
def test_an_unusable_root_is_refused_when_the_recorder_is_made(tmp_path):
    plain = tmp_path / 'plain'
    plain.write_text('x')
    with pytest.raises(NotADirectoryError, match=r"record: root '.*plain/sub' cannot be created"):
        Recorder(plain / 'sub')
    with pytest.raises(FileExistsError, match=r'plain.*not empty \(a file, not a folder\)'):
        Recorder(plain)
    assert plain.read_text() == 'x'


def test_a_root_that_cannot_be_written_is_refused(tmp_path, monkeypatch):
    root = tmp_path / 'ro'
    real = os.open

    def refuse(path, *args, **kwargs):
        if str(path).endswith(CLAIM):
            raise PermissionError(errno.EACCES, 'Permission denied', str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(files_module.os, 'open', refuse)
    with pytest.raises(PermissionError, match=r"record: root '.*ro' is not writable: Permission denied"):
        Recorder(root)


def test_a_read_only_root_is_refused(tmp_path, monkeypatch):
    # (a read-only folder, as the file system answers a process that may not write there: root
    # writes into a mode 0o500 folder, so the refusal is injected where the claim is written)
    root = tmp_path / 'ro'
    root.mkdir()
    real_open = files_module.os.open

    def read_only(path, flags, *args):
        if os.fspath(path).startswith(str(root)) and flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, 'Permission denied', os.fspath(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(files_module.os, 'open', read_only)
    with pytest.raises(PermissionError, match=r"record: root '.*ro' is not writable: Permission denied"):
        Recorder(root)
    assert os.listdir(root) == []


def test_a_root_the_system_does_not_let_anyone_create_is_refused():
    with pytest.raises(OSError, match=r"record: root '/sys/internutopia-dataset' cannot be created"):
        Recorder('/sys/internutopia-dataset')


def test_the_command_line_refuses_an_unusable_root_before_anything_runs(tmp_path, capsys):
    from internutopia.cli import EXIT_ERROR, main

    (tmp_path / 'plain').write_text('x')
    results = tmp_path / 'r.jsonl'
    config = os.path.join(os.path.dirname(__file__), '..', 'configs', 'jetbot_point_nav.yaml')
    status = main(['run', config, '--steps', '2', '--record', str(tmp_path / 'plain' / 'sub'), '--no-progress',
                   '--results', str(results)])
    assert status == EXIT_ERROR
    err = capsys.readouterr().err
    assert "--record: record: root '" in err and 'plain/sub' in err and 'cannot be created' in err
    assert not results.exists()  # nothing ran


def test_two_recorders_cannot_share_a_folder(tmp_path):
    root = tmp_path / 'shared'
    first = Recorder(root)
    assert (root / CLAIM).exists()
    for overwrite in (False, True):
        with pytest.raises(FileExistsError, match=rf'is claimed by the recording of process {os.getpid()} on .*choose another'):
            Recorder(root, overwrite=overwrite)
    first.close()  # nothing recorded: the claim and the folder it made are removed
    assert not root.exists()
    with Env(_config([CheckTaskCfg(max_steps=2, robots=[_robot()])])) as env:
        recorder = Recorder(root).attach(env)
        with pytest.raises(FileExistsError, match='is claimed'):
            Recorder(root)
        _drive(env)
    assert not (root / CLAIM).exists() and recorder.episodes_saved == 1
    with pytest.raises(FileExistsError, match='not empty; choose a new folder or pass overwrite=True'):
        Recorder(root)
    assert open_lerobot_dataset(root).num_episodes == 1


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, '-c', 'pass'])
    process.wait()
    return process.pid


def _stale_claim(root) -> None:
    claim = json.loads((root / CLAIM).read_text()) if (root / CLAIM).exists() else {}
    claim.update(pid=_dead_pid(), process_start=None, host=files_module.socket.gethostname(), time=0, claim='old')
    (root / CLAIM).write_text(json.dumps(claim))


def test_a_claim_left_by_a_killed_recording(tmp_path):
    # only the claim (killed before its first step): taken over
    root = tmp_path / 'ds'
    root.mkdir()
    _stale_claim(root)
    Recorder(root).close()
    assert os.listdir(root) == []  # (its claim removed; the folder was there before it)
    # the claim and files (killed mid-run): refused saying so, replaced with overwrite=True
    _stale_claim(root)
    (root / 'meta').mkdir()
    with pytest.raises(FileExistsError, match=r'not empty \(left by the recording of process \d+ .*which no longer runs'):
        Recorder(root)
    recorder = Recorder(root, overwrite=True)
    assert os.listdir(root) == [CLAIM]
    recorder.close()


def test_the_writer_refuses_a_folder_it_does_not_own(tmp_path):
    features = {**EXTRA_FEATURES, **DEFAULT_FEATURES}
    root = str(tmp_path / 'ds')
    os.makedirs(root)
    with pytest.raises(FileExistsError, match='holds no claim'):
        DatasetFiles(root, features, [], 30.0, VideoOptions(), claim='mine')
    DatasetFiles(root, features, [], 30.0, VideoOptions()).close()  # (a dataset now: meta/info.json)
    with pytest.raises(FileExistsError, match=r'holds another dataset already \(meta/info.json exists\)'):
        DatasetFiles(root, features, [], 30.0, VideoOptions())


# ------------------------------------------------------------------------------------------------
# VideoOptions and the recorder's arguments: checked when made
@pytest.mark.parametrize(('options', 'error', 'message'), [
    ({'codec': 'nope'}, ValueError, r"VideoOptions.codec='nope': not a video encoder .*valid codecs include libx264"),
    ({'codec': 'aac'}, ValueError, r"VideoOptions.codec='aac': not a video encoder"),
    ({'codec': 7}, TypeError, r'VideoOptions.codec=7: the name of a video encoder'),
    ({'preset': 'bogus'}, ValueError, r"VideoOptions.preset='bogus': libx264 presets are ultrafast, .*, veryslow, placebo"),
    ({'crf': -7}, ValueError, r'VideoOptions.crf=-7: an int from 0 to 51 \(codec libx264\)'),
    ({'crf': 52}, ValueError, r'VideoOptions.crf=52: an int from 0 to 51'),
    ({'crf': 23.5}, TypeError, r'VideoOptions.crf=23.5: an int from 0 to 51'),
    ({'gop': 0}, ValueError, r'VideoOptions.gop=0: an int from 1 up'),
    ({'threads': -1}, ValueError, r'VideoOptions.threads=-1: an int from 0 to 256'),
    ({'threads': True}, TypeError, r'VideoOptions.threads=True: an int from 0 to 256'),
    ({'tune': 'fast'}, ValueError, r"VideoOptions.tune='fast'.*valid tunes"),
])
def test_video_options_are_checked_when_made(options, error, message):
    with pytest.raises(error, match=message):
        VideoOptions(**options)


def test_valid_video_options_are_accepted():
    assert VideoOptions(codec='libsvtav1', crf=40, preset='anything', gop=2, threads=0).stream_options() == {'crf': '40', 'g': '2'}
    assert VideoOptions(codec='libx265', preset='slow', crf=0).stream_options()['preset'] == 'slow'


@pytest.mark.parametrize(('kwargs', 'message'), [
    ({'video': 'libx264'}, r"Recorder: video='libx264': a VideoOptions"),
    ({'keep_failed': 'yes'}, r"Recorder: keep_failed='yes': valid values are True and False"),
    ({'overwrite': 1}, r'Recorder: overwrite=1: valid values are True and False'),
])
def test_the_recorders_arguments_are_checked_before_the_folder_is_touched(tmp_path, kwargs, message):
    with pytest.raises(TypeError, match=message):
        Recorder(tmp_path / 'ds', **kwargs)
    assert not (tmp_path / 'ds').exists()


# ------------------------------------------------------------------------------------------------
# meta/stats.json: running aggregates, equal to pooling every episode's statistics
def _frames(seed: int, length: int, shape=(16, 24)) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (*shape, 3), dtype=np.uint8) for _ in range(length)]


def test_stats_equal_the_pooling_of_every_episode(tmp_path):
    root = str(tmp_path / 'ds')
    camera = 'observation.images.cam'
    features = {'observation.state': {'dtype': 'float32', 'shape': (3,), 'names': ['a', 'b', 'c']},
                'action': {'dtype': 'float32', 'shape': (2,), 'names': ['u', 'v']},
                camera: {'dtype': 'video', 'shape': (16, 24, 3), 'names': ['height', 'width', 'channels']},
                **EXTRA_FEATURES, **DEFAULT_FEATURES}
    files = DatasetFiles(root, features, [camera], 30.0, VideoOptions())
    rng = np.random.default_rng(0)
    expected = []
    frames_saved = 0
    for index, length in enumerate([5, 23, 1, 12, 31, 8]):
        frames = _frames(index, length)
        files.open_episode(index)
        for frame in frames:
            files.add_frames(index, [frame])
        action = rng.normal(size=(length, 2)) * (index + 1)
        action[::3, 1] = np.nan  # a controller without a command on some steps
        if index == 2:
            action[:, :] = np.nan  # (all of an episode's)
        columns = {'observation.state': rng.normal(loc=index, size=(length, 3)).astype(np.float32),
                   'action': action.astype(np.float32), 'next.reward': rng.random(length).astype(np.float32),
                   'next.done': np.arange(length) == length - 1, 'next.truncated': np.zeros(length, bool),
                   'next.success': np.ones(length, bool), 'run_episode_index': np.full(length, 10 + index),
                   'env_slot': np.full(length, index % 2)}
        files.save_episode(index, columns, f'task {index % 3}', {'run_episode_index': 10 + index, 'env_slot': index % 2,
                                                                   'success': True})
        # what the writer computes for the episode (the frames it samples for the camera's statistics)
        steps = np.arange(length)
        numeric = {**columns, 'timestamp': (steps / 30.0).astype(np.float32), 'frame_index': steps,
                   'episode_index': np.full(length, index), 'index': frames_saved + steps,
                   'task_index': np.full(length, [0, 1, 2, 0, 1, 2][index])}
        numeric = {name: numeric[name] for name, spec in features.items() if spec['dtype'] != 'video'}
        sampled = np.stack([f[::4, ::4] for f in frames[::files_module.STATS_FRAME_STRIDE]])
        expected.append(episode_stats(numeric, {camera: sampled}))
        frames_saved += length
    files.close()
    with open(os.path.join(root, 'meta', 'stats.json')) as f:
        written = json.load(f)
    pooled = pool_stats(expected)  # every episode pooled at once, as the writer did on each save before
    assert set(written) == set(pooled)
    for name, entry in pooled.items():
        assert set(written[name]) == set(entry), name
        for key, value in entry.items():
            np.testing.assert_allclose(np.asarray(written[name][key], np.float64), np.asarray(value, np.float64),
                                       rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=f'{name} {key}')
    # the exact statistics where pooling is exact (min, max, mean, count) against the frames LeRobot reads
    dataset = open_lerobot_dataset(root)
    table = dataset.hf_dataset.with_format('numpy')
    for name in ('observation.state', 'action', 'next.reward', 'index'):
        values = np.asarray(np.stack(table[name]) if np.ndim(table[name][0]) else table[name], np.float64).reshape(len(dataset), -1)
        np.testing.assert_allclose(written[name]['mean'], np.nanmean(values, axis=0), rtol=1e-6)
        np.testing.assert_allclose(written[name]['std'], np.nanstd(values, axis=0), rtol=1e-6)
        np.testing.assert_allclose(written[name]['min'], np.nanmin(values, axis=0), rtol=1e-6)
        assert written[name]['count'] == np.sum(~np.isnan(values), axis=0).tolist()
    assert dataset.meta.stats['observation.state']['mean'].shape == (3,)


def test_the_recorders_stats_equal_the_pooling_of_its_episodes(tmp_path):
    root = str(tmp_path / 'ds')
    tasks = [CheckTaskCfg(max_steps=n, robots=[_robot()]) for n in (4, 9, 3, 7, 5)]
    with Env(_config(tasks, env_num=2)) as env:
        Recorder(root).attach(env)
        _drive(env)
    dataset = open_lerobot_dataset(root)
    table = dataset.hf_dataset.with_format('numpy')
    episodes = dataset.meta.episodes
    names = [name for name, spec in dataset.features.items() if spec['dtype'] not in ('video', 'image', 'string')]
    per_episode = []
    for index in range(dataset.num_episodes):
        rows = table.select(range(int(episodes['dataset_from_index'][index]), int(episodes['dataset_to_index'][index])))
        per_episode.append(episode_stats({name: np.asarray(np.stack(rows[name]) if np.ndim(rows[name][0]) else rows[name])
                                          for name in names}, {}))
    pooled = pool_stats(per_episode)
    with open(os.path.join(root, 'meta', 'stats.json')) as f:
        written = json.load(f)
    assert set(written) == set(pooled) == set(names)
    for name in names:
        for key, value in pooled[name].items():
            np.testing.assert_allclose(np.asarray(written[name][key], np.float64), np.asarray(value, np.float64),
                                       rtol=1e-6, atol=1e-9, equal_nan=True, err_msg=f'{name} {key}')


# ------------------------------------------------------------------------------------------------
# Before the first command: nothing of the observations kept, the frames go to the writer
def test_a_run_without_commands_keeps_no_observation(tmp_path, monkeypatch):
    root = str(tmp_path / 'ds')
    copies = []

    class CountingCopy:
        @staticmethod
        def deepcopy(value):
            copies.append(1)
            return copy.deepcopy(value)

    monkeypatch.setattr(recorder_module, 'copy', CountingCopy)
    with Env(_config([CheckTaskCfg(max_steps=40, robots=[_robot(camera=True)])])) as env:
        recorder = Recorder(root).attach(env)
        env.reset()
        assert len(copies) == 1  # the reset's observation, until the first step lays it out
        for _ in range(30):
            env.step([None])
        assert len(copies) == 1
        layout = recorder.layout
        assert layout is not None and 'observation.images.camera' in layout.features and 'action' not in layout.features
        assert recorder._writer._sent > 30  # (each step's frame is on its way to the encoder)
        episode = recorder._slots[0]
        assert len(episode.rows) == 30 and all(row[2] is None for row in episode.rows)
        for t in range(10):
            env.step([_act(0.1 + 0.01 * t)])
        assert layout.features['action']['names'] == ['jetbot.move_by_speed.0', 'jetbot.move_by_speed.1']
    assert recorder.episodes_saved == 1
    dataset = open_lerobot_dataset(root)
    actions = np.stack(dataset.hf_dataset.with_format('numpy')['action'])
    assert actions.shape == (40, 2) and np.isnan(actions[:30]).all()
    np.testing.assert_allclose(actions[30:, 0], [0.1 + 0.01 * t for t in range(10)], rtol=1e-6)
    assert list(dataset.features)[:3] == ['observation.state', 'action', 'observation.images.camera']
    dataset[39]  # the video holds all 40 frames


def test_a_run_that_never_commands_is_recorded_with_nan_actions(tmp_path):
    root = str(tmp_path / 'ds')
    with Env(_config([CheckTaskCfg(max_steps=4, robots=[_robot()]) for _ in range(2)])) as env:
        recorder = Recorder(root).attach(env)
        env.reset()
        for _ in range(4):
            env.step([None])
        env.reset()
        for _ in range(4):
            env.step([{}])
    assert recorder.saved_run_indices == [0, 1]
    actions = np.stack(open_lerobot_dataset(root).hf_dataset.with_format('numpy')['action'])
    assert actions.shape == (8, 2) and np.isnan(actions).all()  # sized by move_by_speed's action_shape


# ------------------------------------------------------------------------------------------------
# A failed save leaves no file; files a kill left uncounted are not read; no episode: said so
def _episode_columns(index: int, length: int) -> dict:
    return {'observation.state': np.full((length, 2), index, np.float32), 'next.reward': np.zeros(length),
            'next.done': np.zeros(length, bool), 'next.truncated': np.zeros(length, bool),
            'next.success': np.ones(length, bool), 'run_episode_index': np.full(length, index),
            'env_slot': np.zeros(length, int)}


def _small_dataset(root: str) -> DatasetFiles:
    features = {'observation.state': {'dtype': 'float32', 'shape': (2,), 'names': ['a', 'b']},
                'observation.images.cam': {'dtype': 'video', 'shape': (16, 16, 3), 'names': ['height', 'width', 'channels']},
                **EXTRA_FEATURES, **DEFAULT_FEATURES}
    return DatasetFiles(root, features, ['observation.images.cam'], 30.0, VideoOptions())


def _save(files: DatasetFiles, index: int, length: int = 4) -> None:
    files.open_episode(index)
    for frame in _frames(index, length, (16, 16)):
        files.add_frames(index, [frame])
    files.save_episode(index, _episode_columns(index, length), 'task', {'run_episode_index': index, 'env_slot': 0,
                                                                        'success': True})


def _episode_files(root: str) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, names in os.walk(root) for f in names
                  if f.startswith('file-'))


@pytest.mark.parametrize('fails', ['meta/stats.json', 'meta/info.json'])
def test_a_save_that_fails_late_leaves_none_of_its_files(tmp_path, monkeypatch, fails):
    root = str(tmp_path / 'ds')
    files = _small_dataset(root)
    _save(files, 0)
    _save(files, 1)
    before = {name: open(os.path.join(root, 'meta', name)).read() for name in ('stats.json', 'info.json')}
    real = files_module._atomic_write

    def full(path, data):
        if path.endswith(fails):
            raise OSError(errno.ENOSPC, 'No space left on device', path)
        real(path, data)

    monkeypatch.setattr(files_module, '_atomic_write', full)
    with pytest.raises(OSError, match='No space left'):
        _save(files, 2)
    monkeypatch.setattr(files_module, '_atomic_write', real)
    assert _episode_files(root) == [f'{p}/chunk-000/file-00{i}.{ext}' for p, ext in
                                    [('data', 'parquet'), ('meta/episodes', 'parquet'), ('videos/observation.images.cam', 'mp4')]
                                    for i in (0, 1)]
    assert {name: open(os.path.join(root, 'meta', name)).read() for name in ('stats.json', 'info.json')} == before
    assert not [f for d, _, names in os.walk(root) for f in names if f.endswith('.tmp')]
    dataset = open_lerobot_dataset(root)
    assert (dataset.num_episodes, len(dataset), len(dataset.meta.episodes), len(dataset.hf_dataset)) == (2, 8, 2, 8)
    _save(files, 3)  # the next episode takes the index
    files.close()
    dataset = open_lerobot_dataset(root)
    assert dataset.num_episodes == 3 and list(dataset.meta.episodes['run_episode_index']) == [0, 1, 3]


def test_files_a_kill_left_uncounted_are_not_read(tmp_path, monkeypatch):
    root = str(tmp_path / 'ds')
    files = _small_dataset(root)
    _save(files, 0)
    _save(files, 1)
    monkeypatch.setattr(DatasetFiles, '_write_meta', lambda self: None)  # killed before info.json
    _save(files, 2, length=6)
    assert len(_episode_files(root)) == 9
    dataset = open_lerobot_dataset(root)
    assert (dataset.num_episodes, len(dataset), len(dataset.meta.episodes)) == (2, 8, 2)
    assert sorted(set(np.asarray(dataset.hf_dataset.with_format('numpy')['episode_index']).tolist())) == [0, 1]
    dataset[7]  # the last counted frame decodes


def test_a_dataset_without_episodes_says_so(tmp_path):
    root = str(tmp_path / 'ds')
    with Env(_config([CheckTaskCfg(max_steps=10, robots=[_robot()])])) as env:
        recorder = Recorder(root).attach(env)
        env.reset()
        for _ in range(3):
            env.step([_act(0.1)])
    assert (recorder.episodes_saved, recorder.episodes_dropped) == (0, 1)
    with pytest.raises(ValueError, match=r"'.*ds' holds no saved episode \(meta/info.json: total_episodes 0\)"):
        open_lerobot_dataset(root)
    with pytest.raises(FileNotFoundError, match='holds no dataset: there is no meta/info.json'):
        open_lerobot_dataset(str(tmp_path / 'nothing'))


# ------------------------------------------------------------------------------------------------
# Cameras of odd size (yuv420p needs even ones) and commands of a varying size (a path)
def test_a_camera_of_odd_size_is_recorded(tmp_path):
    root = str(tmp_path / 'ds')
    robot = _robot().update(sensors=[jetbot_camera_cfg.update(resolution=(31, 23), depth=False)])
    images = []
    with Env(_config([CheckTaskCfg(max_steps=4, robots=[robot])])) as env:
        recorder = Recorder(root).attach(env)
        obs, _ = env.reset()
        for t in range(4):
            images.append(obs[0]['jetbot']['sensors']['camera']['rgba'][..., :3].copy())
            obs, *_ = env.step([_act(0.5 + 0.1 * t)])
    assert (recorder.episodes_saved, recorder.saves_failed) == (1, 0)
    dataset = open_lerobot_dataset(root)
    assert dataset.meta.info['features']['observation.images.camera']['info']['video.pix_fmt'] == 'yuv444p'
    for t, image in enumerate(images):
        decoded = (dataset[t]['observation.images.camera'].numpy().transpose(1, 2, 0) * 255).round()
        assert decoded.shape == (23, 31, 3)
        mse = np.mean((decoded - image.astype(np.float64)) ** 2)
        assert mse == 0 or 10 * np.log10(255.0 ** 2 / mse) > 27.0  # (the frame itself, within the codec's error)


def test_a_camera_of_odd_size_an_encoder_cannot_take_is_refused_naming_it(tmp_path):
    if not _has_encoder('libsvtav1'):
        pytest.skip('libsvtav1 (an encoder of yuv420p only) is not in this PyAV build')
    robot = _robot().update(sensors=[jetbot_camera_cfg.update(resolution=(31, 23), depth=False)])
    with Env(_config([CheckTaskCfg(max_steps=4, robots=[robot])])) as env:
        recorder = Recorder(str(tmp_path / 'ds'), video=VideoOptions(codec='libsvtav1', crf=30)).attach(env)
        env.reset()
        with pytest.raises(ValueError, match=r'camera observation.images.camera: a 31x23 camera cannot be encoded with libsvtav1'):
            env.step([_act(0.1)])
    assert (recorder.episodes_saved, recorder.episodes_dropped) == (0, 1)


def _has_encoder(codec: str) -> bool:
    try:
        VideoOptions(codec=codec)
    except ValueError:
        return False
    return True


def test_a_path_controller_is_left_out_and_its_episodes_saved(tmp_path):
    root = str(tmp_path / 'ds')
    paths = [[(1.0, 0.0)], [(1.0, 0.0), (2.0, 0.0)], [(1.0, 0.0), (2.0, 0.0), (2.0, 1.0)], [(0.5, 0.5)]]
    with Env(_config([CheckTaskCfg(max_steps=4, robots=[_robot(all_controllers=True)])])) as env:
        recorder = Recorder(root).attach(env)
        env.reset()
        with pytest.warns(UserWarning, match="controller 'move_along_path' of robot 'jetbot' takes arguments that are not"):
            for t, path in enumerate(paths):  # a path of another length at each step
                env.step([{'jetbot': {'move_along_path': [path], 'move_by_speed': [0.1 * t, 0.0]}}])
    assert (recorder.episodes_saved, recorder.episodes_dropped) == (1, 0)
    dataset = open_lerobot_dataset(root)
    names = dataset.features['action']['names']
    assert not any('move_along_path' in name for name in names)
    actions = np.stack(dataset.hf_dataset.with_format('numpy')['action'])
    np.testing.assert_allclose(actions[:, names.index('jetbot.move_by_speed.0')], [0.0, 0.1, 0.2, 0.3], atol=1e-6)


def test_a_command_of_another_size_than_the_layouts_is_recorded_as_nan():
    from internutopia.recording.layout import Layout

    obs = {'arm': {'joint_positions': np.zeros(3)}}
    layout = Layout.from_observation(obs, ['arm'], {'arm': {'joints': (np.asarray, [1.0, 2.0]), 'grip': (float, 1.0)}})
    assert layout.action_size == 3
    with pytest.warns(UserWarning, match="controller 'joints' of robot 'arm' got a command of 3 numbers where the layout has 2"):
        row = layout.action({'arm': {'joints': [1.0, 2.0, 3.0], 'grip': 0.0}})
    assert np.isnan(row[:2]).all() and row[2] == 0.0


def test_a_controller_without_a_command_is_warned_about_only_when_one_comes():
    """A controller that had no command when the ``action`` columns were fixed is left out; nothing
    is lost (nor warned about) until it gets one, then once."""
    import warnings

    from internutopia.recording.layout import Layout

    obs = {'arm': {'joint_positions': np.zeros(3)}}
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # (no warning while the other controller is never commanded)
        layout = Layout.from_observation(obs, ['arm'], {'arm': {'joints': (np.asarray, [1.0, 2.0]), 'grip': (float, None)}})
        row = layout.action({'arm': {'joints': [1.0, 2.0]}})
    assert layout.action_size == 2 and row.tolist() == [1.0, 2.0]
    with pytest.warns(UserWarning, match="controller 'grip' of robot 'arm' got no command before the layout was fixed"):
        layout.action({'arm': {'joints': [1.0, 2.0], 'grip': 0.0}})
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # (once)
        assert np.isnan(layout.action({'arm': {'grip': 1.0}})).all()  # (grip left out; joints not sent)


def test_a_relative_root_names_the_folder_it_was_made_in_after_a_chdir(tmp_path, monkeypatch):
    # The writer opens the folder at the first step: a script that changes its working folder
    # between making the recorder and stepping still records into the folder it named.
    monkeypatch.chdir(tmp_path)
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir()
    with Env(_config([CheckTaskCfg(max_steps=2, robots=[_robot()])])) as env:
        recorder = Recorder('demos').attach(env)
        assert recorder.root == str(tmp_path / 'demos')
        monkeypatch.chdir(elsewhere)
        _drive(env)
        recorder.close()
    assert recorder.episodes_saved == 1 and not (elsewhere / 'demos').exists()
    assert open_lerobot_dataset(tmp_path / 'demos').num_episodes == 1
