"""The files of a LeRobot v3.0 dataset folder, written episode by episode (on the writer's process).

The folder, as LeRobot's ``LeRobotDataset(repo_id, root=...)`` reads it::

    meta/info.json                               features, fps, totals, path templates
    meta/stats.json                              feature statistics (:mod:`.stats`)
    meta/tasks.parquet                           task text -> task_index
    meta/episodes/chunk-000/file-000.parquet     one row per episode: length, frame range, files
    data/chunk-000/file-000.parquet              one row per frame (every feature but the videos)
    videos/<camera key>/chunk-000/file-000.mp4   the camera's frames

Each saved episode gets its own data, video and episode-metadata files (file index = episode index
modulo ``chunks_size``): nothing written before is ever rewritten, and ``meta/info.json`` (written
last, atomically) counts only episodes whose files are complete. So a run stopped by Ctrl-C, an
exception or a kill leaves a dataset that loads with every episode saved before it (a kill in the
instant between an episode's files and ``info.json`` leaves that episode's files uncounted:
:func:`~internutopia.recording.reader.open_lerobot_dataset` leaves out files at episode indices
past ``total_episodes``). Videos are encoded as frames arrive, into ``.staging/``, and moved into
place when their episode is saved. A save that raises changes nothing a reader sees: its staging
videos and the files it had written at its episode index are deleted, the totals, task list and
statistics are as before it (``meta/`` is written again from them), and the next episode is saved
under the same index.

The folder is the recorder's alone: :func:`claim_folder` creates it with a claim file
(:data:`CLAIM`) that a second recorder sees and refuses, and :class:`DatasetFiles` given the claim
refuses a folder whose claim is another's or that already holds a dataset.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import time
import uuid
from typing import Any

import numpy as np

from internutopia.core.extras import import_failure
from internutopia.recording.stats import RunningStats, episode_stats
from internutopia.recording.video import VideoOptions, VideoStream

__all__ = ['CLAIM', 'DatasetFiles', 'claim_folder', 'import_pyarrow', 'release_folder']

CODEBASE_VERSION = 'v3.0'
CHUNKS_SIZE = 1000
DATA_PATH = 'data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet'
VIDEO_PATH = 'videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4'
EPISODES_PATH = 'meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet'
#: Every how many frames one is kept for a camera's statistics.
STATS_FRAME_STRIDE = 10
#: The folder (in the dataset's) where the videos of episodes not yet saved are encoded.
STAGING = '.staging'
#: The file (in the dataset's folder) that says which recording is writing it (:func:`claim_folder`).
CLAIM = '.recording-claim.json'


def import_pyarrow() -> Any:
    """``pyarrow`` and ``av``, or an ``ImportError`` naming the extra that installs them (one
    missing) or saying why they did not import (installed: pyarrow 26 and later refuse NumPy 1.x)."""
    try:
        import av  # noqa: F401
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:
        raise import_failure('recording a dataset needs pyarrow and PyAV', exc, "pip install 'internutopia[dataset]'") from None
    return pyarrow


def _atomic_write(path: str, data: bytes) -> None:
    tmp = path + '.tmp'
    try:
        with open(tmp, 'wb') as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


# -- the folder's claim ------------------------------------------------------------------------------
def _process_start(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, Linux's ``/proc``), or ``None``."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            return int(f.read().rsplit(')', 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def read_claim(root: str) -> dict[str, Any] | None:
    """The claim file of ``root`` (``None`` if there is none; ``{}`` if it cannot be read)."""
    try:
        with open(os.path.join(root, CLAIM)) as f:
            claim = json.load(f)
        return claim if isinstance(claim, dict) else {}
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}


def claim_is_live(claim: dict[str, Any]) -> bool:
    """Whether the recording that wrote ``claim`` may still be running: its process lives (the same
    pid, started at the same time) on this host. A claim of another host, or one that cannot be
    read, counts as live (it cannot be checked)."""
    pid = claim.get('pid')
    if claim.get('host') != socket.gethostname() or not isinstance(pid, int):
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    started = claim.get('process_start')
    return started is None or _process_start(pid) in (None, started)


def describe_claim(root: str, claim: dict[str, Any]) -> str:
    """A claim in words, for an error message."""
    if not claim:
        return f'an unreadable claim file {os.path.join(root, CLAIM)!r}'
    since = time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(claim.get('time', 0)))
    return f"the recording of process {claim.get('pid')} on {claim.get('host')!r} (since {since})"


def claim_folder(root: str, overwrite: bool = False) -> tuple[str, bool]:
    """Make ``root`` this recording's dataset folder: create it (with its parents) and write its
    claim file; returns the claim's id (for :class:`DatasetFiles`) and whether ``root`` was created.

    ``root`` must be new or empty; ``overwrite`` deletes what is there, unless another recording
    that may still run claims it. A claim left by a recording that ended without closing (killed:
    its process no longer runs) is taken over when the folder holds nothing else; with files beside
    it the folder is refused (the message says whose they were) unless ``overwrite``.

    Raises:
        FileExistsError: ``root`` holds files (and not ``overwrite``), or another recording that
            may still run claims it.
        OSError: ``root`` cannot be created or written (under a file, no permission, read-only).
    """
    path = os.path.join(root, CLAIM)
    if os.path.isdir(root):
        claim = read_claim(root)
        if claim is not None and claim_is_live(claim):
            raise FileExistsError(f'record: {root!r} is claimed by {describe_claim(root, claim)}; two recordings '
                                  f'cannot share a folder: choose another one (if that recording is over, delete {path!r})')
        if claim is not None and set(os.listdir(root)) == {CLAIM}:  # a stale claim and nothing else
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
        if os.listdir(root):
            if not overwrite:
                why = '' if claim is None else (f' (left by {describe_claim(root, claim)}, which no longer runs: a '
                                                 'killed run; its saved episodes load as they are)')
                raise FileExistsError(f'record: {root!r} already exists and is not empty{why}; choose a new folder '
                                      'or pass overwrite=True')
            shutil.rmtree(root)
    elif os.path.lexists(root):
        if not overwrite:
            raise FileExistsError(f'record: {root!r} already exists and is not empty (a file, not a folder); '
                                  'choose a new folder or pass overwrite=True')
        os.remove(root)
    created = not os.path.isdir(root)
    try:
        os.makedirs(root, exist_ok=True)
    except OSError as exc:
        raise _folder_error(root, 'cannot be created', exc) from None
    ident = uuid.uuid4().hex
    claim = {'pid': os.getpid(), 'host': socket.gethostname(), 'process_start': _process_start(os.getpid()),
             'time': time.time(), 'claim': ident}
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:  # another recorder claimed it since the check above
        raise FileExistsError(f'record: {root!r} is claimed by {describe_claim(root, read_claim(root) or {})}; two '
                              'recordings cannot share a folder: choose another one') from None
    except OSError as exc:
        raise _folder_error(root, 'is not writable', exc) from None
    try:
        with os.fdopen(fd, 'w') as f:
            json.dump(claim, f)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.remove(path)
        raise _folder_error(root, 'is not writable', exc) from None
    return ident, created


def _folder_error(root: str, what: str, exc: OSError) -> OSError:
    error = type(exc) if type(exc) is not OSError else OSError
    return error(f'record: root {root!r} {what}: {exc.strerror or exc}'
                 + (f' ({exc.filename!r})' if exc.filename and exc.filename != root else ''))


def release_folder(root: str, ident: str, created: bool) -> None:
    """Remove the claim file of ``root`` if it is claim ``ident``'s (and ``root`` itself if this
    recording ``created`` it and wrote nothing there)."""
    claim = read_claim(root)
    if claim is None or claim.get('claim') != ident:
        return
    with contextlib.suppress(OSError):
        os.remove(os.path.join(root, CLAIM))
    if created:
        with contextlib.suppress(OSError):
            os.rmdir(root)  # (only if empty)


def _fps_value(fps: float) -> float | int:
    """An fps as ``info.json`` gives it: an int when it is one (LeRobot's datasets have int fps)."""
    return int(round(fps)) if abs(fps - round(fps)) < 1e-9 else fps


def _hf_feature(spec: dict[str, Any]) -> dict[str, Any]:
    """A feature as HuggingFace ``datasets`` describes it in a parquet file's metadata."""
    value = {'dtype': spec['dtype'], '_type': 'Value'}
    if tuple(spec['shape']) == (1,):
        return value
    return {'feature': value, 'length': int(spec['shape'][0]), '_type': 'List'}


class _Episode:
    """An episode being recorded on the worker: its open video files and sampled frames."""

    def __init__(self, streams: list[VideoStream]) -> None:
        self.streams = streams
        self.samples: list[list[np.ndarray]] = [[] for _ in streams]


def _delete_videos(episode: _Episode) -> None:
    """Close an episode's video streams and delete their files (still in the staging folder)."""
    for stream in episode.streams:
        try:
            stream.close()
        finally:
            if os.path.exists(stream.path):
                os.remove(stream.path)


class DatasetFiles:
    """The dataset at ``root`` (see the module doc): its episodes' files and its metadata.

    ``features`` is the layout's features table, ``cameras`` its camera feature keys in the order
    frames come. ``claim``: the id :func:`claim_folder` gave the recording; the folder must hold
    that claim (another's, or none, is refused). Not thread-safe:
    :class:`~internutopia.recording.writer.DatasetWriter` calls it from one worker.

    Raises:
        FileExistsError: the folder holds a dataset already, or another recording's claim.
    """

    def __init__(self, root: str, features: dict[str, dict[str, Any]], cameras: list[str], fps: float,
                 video: VideoOptions, robot_type: str | None = None, claim: str | None = None) -> None:
        self._pa = import_pyarrow()
        self.root = os.path.abspath(root)
        if claim is not None:
            found = read_claim(self.root)
            if found is None or found.get('claim') != claim:
                whose = 'no claim' if found is None else describe_claim(self.root, found)
                raise FileExistsError(f'{self.root!r} is not this recording\'s folder any more: it holds {whose}')
        for taken in ('meta/info.json', 'data', 'videos'):
            if os.path.exists(os.path.join(self.root, taken)):
                raise FileExistsError(f'{self.root!r} holds another dataset already ({taken} exists)')
        self.features = features
        self.cameras = cameras
        self.fps = float(fps)
        self.video = video
        self.robot_type = robot_type
        self.episodes_saved = 0
        self.frames_saved = 0
        self.tasks: dict[str, int] = {}
        self._stats = RunningStats()  # every saved episode's statistics, pooled
        self._open: dict[int, _Episode] = {}
        os.makedirs(os.path.join(self.root, 'meta'), exist_ok=True)
        self._staging = os.path.join(self.root, STAGING)
        os.makedirs(self._staging, exist_ok=True)
        self._write_meta()

    def set_features(self, features: dict[str, dict[str, Any]]) -> None:
        """Replace the features table (the recorder fixes the ``action`` columns after the others,
        before any episode is saved) and write the metadata again."""
        if self.episodes_saved:
            raise RuntimeError('the features of a dataset with saved episodes cannot change')
        self.features = features
        self._write_meta()

    def close(self) -> None:
        """Drop the episodes still open (their videos are deleted) and the staging folder."""
        for token in list(self._open):
            self.drop_episode(token)
        shutil.rmtree(self._staging, ignore_errors=True)

    def open_episode(self, token: int) -> None:
        """Start an episode's video files."""
        streams = []
        for index, key in enumerate(self.cameras):
            height, width = self.features[key]['shape'][:2]
            path = os.path.join(self._staging, f'{token}-{index}.mp4')
            streams.append(VideoStream(path, width, height, self.fps, self.video))
        self._open[token] = _Episode(streams)

    def add_frames(self, token: int, images: list[np.ndarray]) -> None:
        """Encode one frame per camera."""
        episode = self._open[token]
        for stream, samples, image in zip(episode.streams, episode.samples, images, strict=True):
            if stream.frames % STATS_FRAME_STRIDE == 0:
                samples.append(image[::4, ::4])
            stream.write(image)

    def drop_episode(self, token: int) -> None:
        """Forget an episode; its video files are deleted."""
        episode = self._open.pop(token, None)
        if episode is not None:
            _delete_videos(episode)

    def save_episode(self, token: int, columns: dict[str, np.ndarray], task: str, extra: dict[str, Any]) -> None:
        """Save an episode: its videos, its frames (``columns``: per-frame features), its row in
        ``meta/episodes`` (with ``extra``), then the metadata. If it raises, the episode is gone
        (its staging videos and the files written at its index deleted) and the dataset is as it
        was before (see the module doc)."""
        episode = self._open.pop(token)
        saved = (self.episodes_saved, self.frames_saved, dict(self.tasks), self._stats)
        try:
            self._save(episode, columns, task, extra)
        except BaseException:
            _delete_videos(episode)  # (those not yet moved into place)
            self.episodes_saved, self.frames_saved, self.tasks, self._stats = saved
            self._remove_episode_files(self.episodes_saved)
            with contextlib.suppress(Exception):  # (what meta/ held before; the save's error is the one raised)
                self._write_meta()
            raise

    def _remove_episode_files(self, index: int) -> None:
        """Delete the data, episode-metadata and video files of episode ``index`` (a save that failed)."""
        chunk, file = divmod(index, CHUNKS_SIZE)
        where = {'chunk_index': chunk, 'file_index': file}
        paths = [DATA_PATH.format(**where), EPISODES_PATH.format(**where)]
        paths += [VIDEO_PATH.format(video_key=key, **where) for key in self.cameras]
        for relative in paths:
            for path in (os.path.join(self.root, relative), os.path.join(self.root, relative) + '.tmp'):
                with contextlib.suppress(OSError):
                    os.remove(path)

    def _save(self, episode: _Episode, columns: dict[str, np.ndarray], task: str, extra: dict[str, Any]) -> None:
        pa = self._pa
        index = self.episodes_saved
        length = len(columns['next.reward'])
        chunk, file = divmod(index, CHUNKS_SIZE)
        where = {'chunk_index': chunk, 'file_index': file}
        if task not in self.tasks:
            self.tasks[task] = len(self.tasks)
        frames = np.arange(length)
        columns = {**columns, 'timestamp': (frames / self.fps).astype(np.float32), 'frame_index': frames,
                   'episode_index': np.full(length, index), 'index': self.frames_saved + frames,
                   'task_index': np.full(length, self.tasks[task])}
        # The videos first (closed, then moved into place), the frames, then the episode's row:
        # nothing refers to a file before it is complete.
        row: dict[str, Any] = {'episode_index': index, 'tasks': [task], 'length': length,
                               'data/chunk_index': chunk, 'data/file_index': file,
                               'dataset_from_index': self.frames_saved, 'dataset_to_index': self.frames_saved + length}
        for key, stream in zip(self.cameras, episode.streams, strict=True):
            stream.close()
            if stream.frames != length:
                raise RuntimeError(f'episode {index}: {stream.frames} frames of {key} for {length} steps')
            target = os.path.join(self.root, VIDEO_PATH.format(video_key=key, **where))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.replace(stream.path, target)
            row.update({f'videos/{key}/chunk_index': chunk, f'videos/{key}/file_index': file,
                        f'videos/{key}/from_timestamp': 0.0, f'videos/{key}/to_timestamp': length / self.fps})
        features = {k: v for k, v in self.features.items() if v['dtype'] != 'video'}
        arrays, fields = [], []
        for name, spec in features.items():
            values = np.asarray(columns[name])
            dtype = pa.from_numpy_dtype(np.dtype(spec['dtype']))
            if tuple(spec['shape']) == (1,):
                arrays.append(pa.array(values.reshape(length).astype(spec['dtype']), type=dtype))
            else:
                flat = pa.array(values.reshape(-1).astype(spec['dtype']), type=dtype)
                arrays.append(pa.FixedSizeListArray.from_arrays(flat, int(spec['shape'][0])))
            fields.append(name)
        hf = {'info': {'features': {name: _hf_feature(spec) for name, spec in features.items()}}}
        table = pa.Table.from_arrays(arrays, names=fields).replace_schema_metadata({'huggingface': json.dumps(hf)})
        self._write_parquet(table, DATA_PATH.format(**where))
        row.update(extra)
        row.update({'meta/episodes/chunk_index': chunk, 'meta/episodes/file_index': file})
        self._write_parquet(pa.Table.from_pylist([row]), EPISODES_PATH.format(**where))
        stats_columns = {name: columns[name] for name in features}
        images = {key: np.stack(samples) for key, samples in zip(self.cameras, episode.samples, strict=True) if samples}
        self._stats = self._stats.plus(episode_stats(stats_columns, images))
        self.episodes_saved += 1
        self.frames_saved += length
        self._write_meta()

    def _write_parquet(self, table: Any, relative: str) -> None:
        import pyarrow.parquet as pq

        path = os.path.join(self.root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            pq.write_table(table, path + '.tmp')
            os.replace(path + '.tmp', path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(path + '.tmp')
            raise

    def _write_meta(self) -> None:
        """tasks.parquet and stats.json, then info.json: the totals a reader trusts."""
        pa = self._pa
        names = list(self.tasks)
        pandas_meta = {'index_columns': ['__index_level_0__'],
                       'column_indexes': [{'name': None, 'field_name': None, 'pandas_type': 'unicode', 'numpy_type': 'object',
                                           'metadata': {'encoding': 'UTF-8'}}],
                       'columns': [{'name': 'task_index', 'field_name': 'task_index', 'pandas_type': 'int64',
                                    'numpy_type': 'int64', 'metadata': None},
                                   {'name': None, 'field_name': '__index_level_0__', 'pandas_type': 'unicode',
                                    'numpy_type': 'object', 'metadata': None}]}
        tasks = pa.table({'task_index': pa.array([self.tasks[n] for n in names], pa.int64()),
                          '__index_level_0__': pa.array(names, pa.string())}).replace_schema_metadata({'pandas': json.dumps(pandas_meta)})
        self._write_parquet(tasks, 'meta/tasks.parquet')
        _atomic_write(os.path.join(self.root, 'meta', 'stats.json'), json.dumps(self._stats.result(), indent=1).encode())
        features = {}
        for name, spec in self.features.items():
            entry = {'dtype': spec['dtype'], 'shape': list(spec['shape']), 'names': spec['names']}
            if spec['dtype'] == 'video':
                height, width = spec['shape'][:2]
                entry['info'] = {'video.height': height, 'video.width': width, 'video.codec': self.video.codec_name,
                                 'video.pix_fmt': self.video.pix_fmt(width, height), 'video.is_depth_map': False, 'video.fps': self.fps,
                                 'video.channels': 3, 'has_audio': False}
            features[name] = entry
        info = {'codebase_version': CODEBASE_VERSION, 'robot_type': self.robot_type,
                'total_episodes': self.episodes_saved, 'total_frames': self.frames_saved, 'total_tasks': len(self.tasks),
                'chunks_size': CHUNKS_SIZE, 'data_files_size_in_mb': 100, 'video_files_size_in_mb': 200,
                'fps': _fps_value(self.fps), 'splits': {'train': f'0:{self.episodes_saved}'},
                'data_path': DATA_PATH, 'video_path': VIDEO_PATH if self.cameras else None, 'features': features}
        _atomic_write(os.path.join(self.root, 'meta', 'info.json'), json.dumps(info, indent=4).encode())
