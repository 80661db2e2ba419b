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
instant between an episode's files and ``info.json`` leaves that episode's files uncounted). Videos
are encoded as frames arrive, into ``.staging/``, and moved into place when their episode is saved.
A save that raises changes nothing a reader sees (its staging videos are deleted, the totals and
task list are as before it): the next episode is saved under the same index, over its files.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

import numpy as np

from internutopia.recording.stats import episode_stats, pool_stats
from internutopia.recording.video import VideoOptions, VideoStream

__all__ = ['DatasetFiles', 'import_pyarrow']

CODEBASE_VERSION = 'v3.0'
CHUNKS_SIZE = 1000
DATA_PATH = 'data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet'
VIDEO_PATH = 'videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4'
EPISODES_PATH = 'meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet'
#: Every how many frames one is kept for a camera's statistics.
STATS_FRAME_STRIDE = 10
#: The folder (in the dataset's) where the videos of episodes not yet saved are encoded.
STAGING = '.staging'


def import_pyarrow() -> Any:
    """``pyarrow`` and ``av``, or an ``ImportError`` naming the extra that installs them."""
    try:
        import av  # noqa: F401
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"recording a dataset needs pyarrow and PyAV ({exc.name} is missing): "
                          "pip install 'internutopia[dataset]'") from None
    return pyarrow


def _atomic_write(path: str, data: bytes) -> None:
    tmp = path + '.tmp'
    with open(tmp, 'wb') as f:
        f.write(data)
    os.replace(tmp, path)


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
    frames come. Not thread-safe: :class:`~internutopia.recording.writer.DatasetWriter` calls it
    from one worker.
    """

    def __init__(self, root: str, features: dict[str, dict[str, Any]], cameras: list[str], fps: float,
                 video: VideoOptions, robot_type: str | None = None) -> None:
        self._pa = import_pyarrow()
        self.root = os.path.abspath(root)
        self.features = features
        self.cameras = cameras
        self.fps = float(fps)
        self.video = video
        self.robot_type = robot_type
        self.episodes_saved = 0
        self.frames_saved = 0
        self.tasks: dict[str, int] = {}
        self._stats: list[dict[str, dict[str, Any]]] = []
        self._open: dict[int, _Episode] = {}
        os.makedirs(os.path.join(self.root, 'meta'), exist_ok=True)
        self._staging = os.path.join(self.root, STAGING)
        os.makedirs(self._staging, exist_ok=True)
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
        (its staging videos deleted) and the dataset is as it was before (see the module doc)."""
        episode = self._open.pop(token)
        saved = (self.episodes_saved, self.frames_saved, dict(self.tasks), len(self._stats))
        try:
            self._save(episode, columns, task, extra)
        except BaseException:
            _delete_videos(episode)  # (those not yet moved into place; the others are overwritten)
            self.episodes_saved, self.frames_saved, self.tasks, stats = saved
            del self._stats[stats:]
            raise

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
        self._stats.append(episode_stats(stats_columns, images))
        self.episodes_saved += 1
        self.frames_saved += length
        self._write_meta()

    def _write_parquet(self, table: Any, relative: str) -> None:
        import pyarrow.parquet as pq

        path = os.path.join(self.root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        pq.write_table(table, path + '.tmp')
        os.replace(path + '.tmp', path)

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
        _atomic_write(os.path.join(self.root, 'meta', 'stats.json'), json.dumps(pool_stats(self._stats), indent=1).encode())
        features = {}
        for name, spec in self.features.items():
            entry = {'dtype': spec['dtype'], 'shape': list(spec['shape']), 'names': spec['names']}
            if spec['dtype'] == 'video':
                height, width = spec['shape'][:2]
                entry['info'] = {'video.height': height, 'video.width': width, 'video.codec': self.video.codec_name,
                                 'video.pix_fmt': 'yuv420p', 'video.is_depth_map': False, 'video.fps': self.fps,
                                 'video.channels': 3, 'has_audio': False}
            features[name] = entry
        info = {'codebase_version': CODEBASE_VERSION, 'robot_type': self.robot_type,
                'total_episodes': self.episodes_saved, 'total_frames': self.frames_saved, 'total_tasks': len(self.tasks),
                'chunks_size': CHUNKS_SIZE, 'data_files_size_in_mb': 100, 'video_files_size_in_mb': 200,
                'fps': _fps_value(self.fps), 'splits': {'train': f'0:{self.episodes_saved}'},
                'data_path': DATA_PATH, 'video_path': VIDEO_PATH if self.cameras else None, 'features': features}
        _atomic_write(os.path.join(self.root, 'meta', 'info.json'), json.dumps(info, indent=4).encode())
