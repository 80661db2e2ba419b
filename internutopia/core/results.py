"""Where finished episodes are reported: ``'console'``, ``'none'``, or a JSON-lines file path.

A file target is opened when the writer is made (so when the env is built): a path that cannot be
written (a directory, a folder without write permission) is a ``ValueError`` naming
``metrics_save_path`` before anything runs. The file is started empty, as InternUtopia does: one
file holds one run, so a second run never mixes its episode indices with the first's (give each
run its own path to keep both). A write that fails later (a full disk) never stops the env: the
record is kept and written with the next one, a warning says what failed, and :meth:`close`
tries once more.

Only aggregates are kept for :meth:`ResultsWriter.summary`, so memory stays flat however many
episodes run; ``keep_records=True`` keeps the records too, for a caller that drains them.

>>> writer = ResultsWriter('none')
>>> writer.write({'episode_index': 0, 'metrics': {'success': True, 'spl': 0.5}})
>>> writer.write({'episode_index': 1, 'metrics': {'success': False}})
>>> summary = writer.summary(); summary['episodes'], summary['success'], summary['spl']
(2, 0.5, 0.5)
>>> writer.records
[]
"""

from __future__ import annotations

import gc
import json
import math
import os
import stat
import time
import warnings
from typing import Any, TextIO


class ResultsWriter:
    """Writes one record per finished episode to the console, nowhere, or a JSON-lines file.

    Args:
        target: ``'console'``, ``'none'`` (or ``None``), or the path of a JSON-lines file,
            created (with its folders) and emptied now.
        keep_records: also keep every record in :attr:`records` (the caller empties it).

    Raises:
        ValueError: ``target`` is a path that cannot be opened for writing.
    """

    def __init__(self, target: str | None, keep_records: bool = False) -> None:
        self.target = 'none' if target is None else target
        self.keep_records = keep_records
        #: Whether the env prints :meth:`summary` when it closes (a tool printing its own turns it off).
        self.summary_on_close = True
        #: Records written since the caller last emptied this list (only with ``keep_records``).
        self.records: list[dict[str, Any]] = []
        self.started_at = time.perf_counter()
        self.last_write_at: float | None = None
        self._episodes = 0
        self._counts: dict[str, int] = {}  # per record kind ('abandoned', 'diverged', ...)
        self._sums: dict[str, list[float]] = {}  # metric name -> [sum, count]
        self._unwritten: list[str] = []
        self._stream: TextIO | None = None
        if self.target not in ('console', 'none'):
            self._stream = _open_for_run(self.target)

    @property
    def is_file(self) -> bool:
        """True when records go to a JSON-lines file."""
        return self.target not in ('console', 'none')

    def write(self, record: dict[str, Any]) -> None:
        """Report one episode: aggregate it, then print or append it (see the module doc on failures)."""
        self._aggregate(record)
        if self.keep_records:
            self.records.append(record)
        self.last_write_at = time.perf_counter()
        if self.target == 'none':
            return
        line = json.dumps(record, default=_jsonable)
        if self.target == 'console':
            print(f'[internutopia] episode finished: {line}', flush=True)
            return
        self._unwritten.append(line)
        self._flush()

    def _flush(self, warn: bool = True) -> bool:
        if not self._unwritten or self._stream is None:
            return not self._unwritten
        try:
            self._stream.write(''.join(line + '\n' for line in self._unwritten))
            self._stream.flush()
        except OSError as exc:
            if warn:
                warnings.warn(f'metrics_save_path {self.target!r}: cannot write {len(self._unwritten)} episode record(s) '
                              f'({exc}); they are kept and written with the next record', RuntimeWarning, stacklevel=3)
            return False
        self._unwritten.clear()
        return True

    def _aggregate(self, record: dict[str, Any]) -> None:
        kind = record.get('outcome')
        if kind is not None:
            self._counts[kind] = self._counts.get(kind, 0) + 1
        if kind == 'abandoned':
            return  # not finished: its metrics describe a cut-short episode
        self._episodes += 1
        for name, value in (record.get('metrics') or {}).items():
            if isinstance(value, (bool, int, float)) and not (isinstance(value, float) and math.isnan(value)):
                total = self._sums.setdefault(name, [0.0, 0])
                total[0] += float(value)
                total[1] += 1

    def summary(self) -> dict[str, Any]:
        """Aggregates over the episodes reported so far.

        ``episodes``: finished episodes (abandoned ones not counted); ``success`` and ``spl``: means
        of the metrics of those names (``None`` when no episode reported them); ``metrics_mean``:
        the mean of every numeric (or bool) metric, over the episodes that reported it;
        ``outcomes``: how many records had each ``outcome`` (``'abandoned'``, ``'diverged'``);
        ``wall_time_s``: from the writer's creation (the env's) to the last record;
        ``episodes_per_second``: ``episodes / wall_time_s``.
        """
        means = {name: total / count for name, (total, count) in self._sums.items()}
        wall = (self.last_write_at - self.started_at) if self.last_write_at is not None else 0.0
        return {
            'episodes': self._episodes,
            'success': means.get('success'),
            'spl': means.get('spl'),
            'metrics_mean': means,
            'outcomes': dict(self._counts),
            'wall_time_s': wall,
            'episodes_per_second': self._episodes / wall if wall > 0 else 0.0,
        }

    def close(self) -> None:
        """Write what is still pending and close the file (idempotent)."""
        if self._stream is None:
            return
        if not self._flush(warn=False):
            warnings.warn(f'metrics_save_path {self.target!r}: {len(self._unwritten)} episode record(s) could not be '
                          'written; the env returned their metrics in info', RuntimeWarning, stacklevel=2)
        try:
            self._stream.close()
        except OSError:
            pass
        self._stream = None


def _open_for_run(path: str) -> TextIO:
    """``path`` created (with its folders) and emptied for a new run, or a ``ValueError`` saying why not.

    The file is locked while the writer holds it: a second env writing to the same path (in this
    process or another) would empty it under the first and overwrite its records, so it is refused.
    """
    where = f'metrics_save_path {path!r}'
    if os.path.isdir(path):
        raise ValueError(f"{where} is a directory; give a file path (e.g. {os.path.join(path, 'results.jsonl')!r}), "
                         "'console' or 'none'")
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        stream = open(path, 'a', encoding='utf-8')  # not 'w': emptied only once it is ours
    except OSError as exc:
        raise ValueError(f"{where} cannot be written: {exc.strerror or exc}; give a writable file path, 'console' or 'none'") from None
    if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
        return stream  # a device or a pipe ('/dev/stdout', '/dev/full'): nothing to empty or lock
    if not _lock(stream):
        gc.collect()  # an env dropped without close() holds the file until it is collected
        if not _lock(stream):
            stream.close()
            raise ValueError(f'{where} is being written by another env that is still open (in this process or '
                             'another); close() that env first, or give each run its own path')
    try:
        stream.truncate(0)
    except OSError as exc:
        stream.close()
        raise ValueError(f"{where} cannot be written: {exc.strerror or exc}; give a writable file path, 'console' or 'none'") from None
    return stream


def _lock(stream: TextIO) -> bool:
    """Take an exclusive lock on ``stream``'s file (released when it closes); ``False`` when another
    open file holds it. Where files cannot be locked (no ``fcntl``, a file system without locks) it
    reports ``True``: the check is a guard, not a requirement."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return True
    try:
        fcntl.flock(stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # pragma: no cover - a file system without flock
        return True
    return True


def _jsonable(value: Any) -> Any:
    if hasattr(value, 'tolist'):
        return value.tolist()
    return repr(value)  # a metric of an unknown type still leaves a readable trace in the record
