"""Where finished episodes are reported: ``'console'``, ``'none'``, or a JSON-lines file path.

A file target is opened when the writer is made (so when the env is built): a path that cannot be
written (a directory, a folder without write permission) is a ``ValueError`` naming
``metrics_save_path`` before anything runs. The file is started empty, as InternUtopia does: one
file holds one run, so a second run never mixes its episode indices with the first's (give each
run its own path to keep both). A write that fails later (a full disk) never stops the env: what
the system did not take is kept and written with the next record (only that: a line that reached
the file is never sent again), a warning says what failed, and :meth:`close` tries once more. A
file deleted while the run writes it is made again at its path with every line written so far.

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

import errno
import gc
import json
import logging
import numbers
import os
import stat
import time
import warnings
from typing import Any

import numpy as np

from internutopia.core.util.caller import caller_stacklevel, warn_per_episode

logger = logging.getLogger(__name__)

#: The formats of a results line: ours (one record per episode) and InternUtopia's (its metric dict).
RECORD_FORMATS = ('records', 'upstream')
#: The outcomes of episodes that did not finish: reset while running, failed, or handed by
#: ``env.task_config_manager.get_next()`` to its caller instead of a slot.
NOT_FINISHED = ('abandoned', 'failed', 'handed_out')

#: The one call that sends bytes to the file (a name of its own, so tests can make it fail).
_write_bytes = os.write


class ResultsWriter:
    """Writes one record per finished episode to the console, nowhere, or a JSON-lines file.

    Args:
        target: ``'console'``, ``'none'`` (or ``None``), or the path of a JSON-lines file,
            created (with its folders) and emptied now.
        keep_records: also keep every record in :attr:`records` (the caller empties it).
        record_format: ``'records'`` (ours: one record per episode, see ``docs/reliability.md``) or
            ``'upstream'`` (InternUtopia's: the episode's metric dict itself, one per line, and
            nothing for episodes that did not finish).

    Raises:
        ValueError: ``target`` is a path that cannot be opened for writing, or an unknown format.
    """

    def __init__(self, target: str | None, keep_records: bool = False, record_format: str = 'records') -> None:
        if record_format not in RECORD_FORMATS:
            raise ValueError(f'metrics_save_format must be one of {list(RECORD_FORMATS)}; got {record_format!r}')
        self.target = 'none' if target is None else target
        self.keep_records = keep_records
        self.record_format = record_format
        #: Whether the env prints :meth:`summary` when it closes (a tool printing its own turns it off).
        self.summary_on_close = True
        #: Records written since the caller last emptied this list (only with ``keep_records``).
        self.records: list[dict[str, Any]] = []
        self.started_at = time.perf_counter()
        self.last_write_at: float | None = None
        #: Lines that reached the file (or the console), and lines still waiting for a write.
        self.lines_written = 0
        self._episodes = 0
        self._reported = 0
        self._counts: dict[str, int] = {}  # per record kind ('abandoned', 'diverged', ...)
        self._sums: dict[str, list[float]] = {}  # metric name -> [sum, count]
        # Bytes not yet in the file. A write that fails part-way removes exactly what reached the
        # file from the front, so a retry never sends a line (or part of one) twice.
        self._pending = bytearray()
        self._fd: int | None = None
        self._regular = False  # a regular file (which can be deleted under us), not a device or pipe
        if self.is_file:
            self._fd, self._regular = _open_for_run(self.target)

    @property
    def is_file(self) -> bool:
        """True when records go to a JSON-lines file."""
        return self.target not in ('console', 'none')

    @property
    def lines_pending(self) -> int:
        """Lines kept because their write failed; written with the next record or on :meth:`close`."""
        return self._pending.count(b'\n')

    def write(self, record: dict[str, Any]) -> None:
        """Report one episode: aggregate it, then print or append it (see the module doc on failures).

        The line is made first: a metric whose conversion is interrupted (Ctrl-C inside its
        ``tolist()``) leaves the writer as it was, so the record can be written again."""
        line = None
        payload = self._payload(record) if self.target != 'none' else None
        if payload is not None:
            indent = 4 if self.target == 'console' and self.record_format == 'upstream' else None
            line = json.dumps(payload, indent=indent, default=_jsonable)
        self._aggregate(record)
        if self.keep_records:
            self.records.append(record)
        self.last_write_at = time.perf_counter()
        if line is None:
            return
        if self.target == 'console':
            # (an episode that ended otherwise than as its task says is named so: failed, diverged, abandoned)
            ended = f"episode {record['outcome']}" if record.get('outcome') else 'episode finished'
            print(line if self.record_format == 'upstream' else f'[internutopia] {ended}: {line}', flush=True)
            self.lines_written += 1
            return
        self._pending += (line + '\n').encode('utf-8')
        self._flush()

    def _payload(self, record: dict[str, Any]) -> Any:
        """What goes on the record's line: the record, or (upstream format) its metric dict, or
        ``None`` for an episode upstream would not report (abandoned, failed or handed out)."""
        if self.record_format == 'records':
            return record
        if record.get('outcome') in NOT_FINISHED:
            return None
        return record.get('metrics') or {}

    def _flush(self, warn: bool = True) -> bool:
        """Send the pending bytes; ``True`` when none are left. Only what the system reports as
        written leaves the pending buffer."""
        if not self._pending or self._fd is None:
            return not self._pending
        try:
            self._follow_the_path()
        except OSError as exc:
            return self._write_failed(exc, warn)
        sent = 0
        try:
            view = memoryview(self._pending)
            try:
                while sent < len(view):
                    count = _write_bytes(self._fd, view[sent:])
                    if count <= 0:  # pragma: no cover - a device that takes nothing without an error
                        raise OSError(errno.EIO, 'the file took no bytes')
                    sent += count
            finally:
                view.release()
        except OSError as exc:
            return self._write_failed(exc, warn)
        finally:
            self._sent(sent)
        return True

    def _sent(self, count: int) -> None:
        if count:
            self.lines_written += self._pending.count(b'\n', 0, count)
            del self._pending[:count]

    def _write_failed(self, exc: OSError, warn: bool) -> bool:
        if warn:  # (its count moves on with every record: kept out of the caller's warning registry)
            warn_per_episode(f'metrics_save_path {self.target!r}: cannot write {self.lines_pending} episode record(s) '
                             f'({exc}); they are kept and written with the next record', RuntimeWarning)
        return False

    def _follow_the_path(self) -> None:
        """If the file was deleted while the run writes it, make it again at the same path with
        every line written so far (read back through the still-open old file) and say so."""
        if not self._regular or self._fd is None or os.fstat(self._fd).st_nlink > 0:
            return
        old = self._fd
        size = os.fstat(old).st_size
        fd, regular = _open_for_run(self.target, truncate=False)
        try:
            offset = 0
            while offset < size:
                chunk = os.pread(old, min(1 << 20, size - offset), offset)
                if not chunk:
                    break
                view = memoryview(chunk)
                while len(view):
                    view = view[os.write(fd, view):]
                offset += len(chunk)
        except BaseException:
            os.close(fd)
            raise
        os.close(old)
        self._fd, self._regular = fd, regular
        message = (f'metrics_save_path {self.target!r} was deleted while the run wrote it; it was made again with '
                   f'the {self.lines_written} line(s) written so far')
        logger.warning(message)
        warnings.warn(message, RuntimeWarning, stacklevel=caller_stacklevel())

    def _aggregate(self, record: dict[str, Any]) -> None:
        self._reported += 1
        kind = record.get('outcome')
        if kind is not None:
            self._counts[kind] = self._counts.get(kind, 0) + 1
        if kind in NOT_FINISHED:
            return  # not finished: no metrics, or metrics of a cut-short episode
        self._episodes += 1
        sums = self._sums
        for name, value in (record.get('metrics') or {}).items():
            # (numpy's scalars too: a metric's np.bool_ or np.float32 is a number the record writes;
            # Python's own numbers are told by their type first: the ABC check costs several times more)
            kind = type(value)
            if kind is float or kind is int or kind is bool or isinstance(value, (numbers.Real, np.bool_)):
                if value != value:  # NaN (math.isnan's test, without its call)
                    continue
                total = sums.get(name)
                if total is None:
                    total = sums[name] = [0.0, 0]
                total[0] += float(value)
                total[1] += 1

    def print_summary(self) -> None:
        """Print ``[internutopia] run summary: {...}`` when the env closes (one process's runner, or
        a Ray env's driver): when results go somewhere, :attr:`summary_on_close` holds and an
        episode finished (a summary of nothing says nothing)."""
        summary = self.summary()
        if self.summary_on_close and self.target != 'none' and summary['episodes']:
            print(f'[internutopia] run summary: {json.dumps(summary)}', flush=True)

    def summary(self) -> dict[str, Any]:
        """Aggregates over the episodes reported so far.

        ``episodes``: finished episodes (abandoned, failed and handed-out ones not counted); ``records``: every
        episode reported, whatever its outcome; ``success`` and ``spl``: means
        of the metrics of those names (``None`` when no episode reported them); ``metrics_mean``:
        the mean of every numeric (or bool) metric, over the episodes that reported it;
        ``outcomes``: how many records had each ``outcome`` (``'abandoned'``, ``'diverged'``,
        ``'failed'``, ``'handed_out'``); ``lines_pending``: lines a failed write still holds back;
        ``wall_time_s``: from the writer's creation (the env's) to the last record;
        ``episodes_per_second``: ``episodes / wall_time_s``.
        """
        means = {name: total / count for name, (total, count) in self._sums.items()}
        wall = (self.last_write_at - self.started_at) if self.last_write_at is not None else 0.0
        return {
            'episodes': self._episodes,
            'records': self._reported,
            'success': means.get('success'),
            'spl': means.get('spl'),
            'metrics_mean': means,
            'outcomes': dict(self._counts),
            'lines_pending': self.lines_pending,
            'wall_time_s': wall,
            'episodes_per_second': self._episodes / wall if wall > 0 else 0.0,
        }

    def close(self) -> None:
        """Write what is still pending and close the file (idempotent)."""
        if self._fd is None:
            return
        if not self._flush(warn=False):
            warnings.warn(f'metrics_save_path {self.target!r}: {self.lines_pending} episode record(s) could not be '
                          'written; the env returned their metrics in info', RuntimeWarning, stacklevel=2)
        try:
            os.close(self._fd)
        except OSError:
            pass
        self._fd = None

    def __del__(self) -> None:
        # A writer dropped without close() (an env that was never closed) gives its file up, lock
        # and all, when it is collected, as a file object would.
        fd = getattr(self, '_fd', None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


def _open_for_run(path: str, truncate: bool = True) -> tuple[int, bool]:
    """``path`` created (with its folders) and emptied for a new run (``truncate``), as an
    append-only file descriptor and whether it is a regular file; or a ``ValueError`` saying why not.

    The file is locked while the writer holds it: a second env writing to the same path (in this
    process or another) would empty it under the first and overwrite its records, so it is refused.
    """
    where = f'metrics_save_path {path!r}'
    if os.path.isdir(path):
        raise ValueError(f"{where} is a directory; give a file path (e.g. {os.path.join(path, 'results.jsonl')!r}), "
                         "'console' or 'none'")
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        # not O_TRUNC: emptied only once it is ours; readable, so a deleted file can be read back
        flags = os.O_CREAT | os.O_APPEND | getattr(os, 'O_CLOEXEC', 0)
        try:
            fd = os.open(path, os.O_RDWR | flags, 0o666)
        except PermissionError:  # a file we may write but not read: no read-back after a deletion
            fd = os.open(path, os.O_WRONLY | flags, 0o666)
    except OSError as exc:
        raise ValueError(f"{where} cannot be written: {exc.strerror or exc}; give a writable file path, 'console' or 'none'") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        return fd, False  # a device or a pipe ('/dev/stdout', '/dev/full'): nothing to empty or lock
    if not _lock(fd):
        gc.collect()  # an env dropped without close() holds the file until it is collected
        if not _lock(fd):
            os.close(fd)
            raise ValueError(f'{where} is being written by another env that is still open (in this process or '
                             'another); close() that env first, or give each run its own path')
    if truncate:
        try:
            os.ftruncate(fd, 0)
        except OSError as exc:
            os.close(fd)
            raise ValueError(f"{where} cannot be written: {exc.strerror or exc}; give a writable file path, 'console' or 'none'") from None
    return fd, True


def _lock(fd: int) -> bool:
    """Take an exclusive lock on ``fd``'s file (released when it closes); ``False`` when another
    open file holds it. Where files cannot be locked (no ``fcntl``, a file system without locks) it
    reports ``True``: the check is a guard, not a requirement."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # pragma: no cover - a file system without flock
        return True
    return True


def _jsonable(value: Any) -> Any:
    if hasattr(value, 'tolist'):
        try:
            return value.tolist()
        except Exception:  # a metric's own conversion failed: its text stands in for it
            return repr(value)
    return repr(value)  # a metric of an unknown type still leaves a readable trace in the record
