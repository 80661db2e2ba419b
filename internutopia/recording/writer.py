"""``DatasetWriter``: the dataset's files written by a worker process, off the env's step path.

Encoding two 256x256 camera frames per slot and step costs about as much CPU as simulating and
rendering them, and PyAV holds Python's lock for much of it: on a thread it would stall the step
loop. So a separate process (started with ``spawn``: nothing of the simulation is copied into it)
owns a :class:`~internutopia.recording.files.DatasetFiles` and does every file operation; the
recorder sends it jobs through a bounded queue (frames are pickled as raw bytes, a copy). Past
``max_queue`` jobs a send waits, so memory stays bounded when encoding falls behind.

A job that fails is its episode's failure only: the worker deletes that episode's files, skips its
later jobs and goes on with the others (the dataset is as it was before the episode, see
:mod:`~internutopia.recording.files`). It reports the outcome of every episode's end, saved or
dropped, with the error that undid it if one did (:meth:`DatasetWriter.take_reports`), so the
recorder counts what is on disk.

The worker ignores Ctrl-C (the terminal sends it to the whole process group), from its start
(:func:`_start_without_sigint`): the recorder's
:meth:`DatasetWriter.close` lets it finish the saves already queued. If the recording process dies
without closing, the worker still saves what was queued, then exits. If the worker dies (killed,
out of memory, or it never started: a script that makes its env at import time without an
``if __name__ == '__main__':`` guard cannot start ``spawn`` processes), or cannot create the
dataset (a folder that is not its recording's, :func:`~internutopia.recording.files.claim_folder`,
or that holds a dataset already), the next send, flush or close raises a ``RuntimeError`` saying so instead of
waiting on a queue nobody reads.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import queue
import shutil
import signal
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from internutopia.recording.files import STAGING, DatasetFiles, import_pyarrow
from internutopia.recording.video import VideoOptions

__all__ = ['DatasetWriter']

#: Seconds between the worker's checks that its parent is still alive.
_PARENT_CHECK_S = 1.0
#: Seconds between the recorder's checks that the worker is still alive, while a send waits on a
#: full queue, a flush on the queued jobs or a close on the worker's exit.
_WORKER_CHECK_S = 0.5
#: Seconds a wait on the worker goes on while it finishes no job (one job is a frame, or an
#: episode's files: well under a second each): past them the worker is taken as hung (stopped,
#: deadlocked), killed, and the wait raises.
_STALL_S = 300.0


#: The jobs that end an episode: each is reported (:meth:`DatasetWriter.take_reports`).
_ENDS = ('save_episode', 'drop_episode')


def _serve(jobs: Any, reports: Any, done: Any, parent: int, args: tuple) -> None:
    """The worker process: run jobs on a ``DatasetFiles`` until told to stop or orphaned."""
    # Ignoring SIGINT discards one that came since the process started (it was born with SIGINT
    # blocked, :func:`_start_without_sigint`, so none could kill it before this line).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _SIGMASK:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        files = DatasetFiles(*args)
    except BaseException as exc:  # noqa: BLE001 - reported to the recorder
        # Nothing can be saved: this process ends, and the recorder's next send or close raises with it.
        reports.put((None, f'the dataset could not be created: {exc!r}'))
        return
    failed: dict[int, str] = {}  # episodes a job failed for: its error (their later jobs are skipped)
    while True:
        try:
            job = jobs.get(timeout=_PARENT_CHECK_S)
        except queue.Empty:
            if os.getppid() != parent:  # the recording process is gone and queued nothing more
                break
            continue
        if job is None:
            done.value += 1
            break
        name, job_args = job
        if name == 'set_features':  # (no episode's job: a failure to write meta/ is reported, the next save writes it)
            try:
                files.set_features(*job_args)
            except BaseException as exc:  # noqa: BLE001 - reported to the recorder
                reports.put((None, f'{name}: {exc!r}'))
            finally:
                done.value += 1
            continue
        token = job_args[0]
        try:
            if token in failed:
                if name in _ENDS:  # (its files are gone already)
                    reports.put((token, failed.pop(token)))
            else:
                getattr(files, name)(*job_args)
                if name in _ENDS:
                    reports.put((token, None))
        except BaseException as exc:  # noqa: BLE001 - that episode's failure only, reported
            error = f'{name}: {exc!r}'
            try:
                files.drop_episode(token)  # its files so far are deleted; the other episodes go on
            except BaseException:  # noqa: BLE001 - (the first error is the one reported)
                pass
            if name in _ENDS:
                reports.put((token, error))
            else:
                failed[token] = error
        finally:
            done.value += 1  # (only this process writes it; after the report: a flush waits for both)
    for error in failed.values():  # (episodes the recorder never ended: none, unless it lost track)
        reports.put((None, error))
    files.close()


#: Whether this platform has per-thread signal masks (POSIX; not Windows, whose Ctrl-C is no signal to a process group).
_SIGMASK = hasattr(signal, 'pthread_sigmask')


def _start_without_sigint(process: Any) -> None:
    """Start ``process`` (a ``spawn`` child) with SIGINT blocked in it from its first instruction.

    The child is in the caller's process group, so a terminal's Ctrl-C reaches it too; it ignores
    SIGINT once :func:`_serve` runs, but starting Python and unpickling its arguments takes about
    half a second, and a Ctrl-C then would kill it (``exit code -2``) and lose the whole recording.
    A signal mask is inherited through ``fork`` and kept by ``exec``, so the child is born with
    SIGINT blocked: a Ctrl-C stays pending until :func:`_serve`'s ``SIG_IGN`` discards it. Only this
    thread's mask is changed, and only while the process starts: no handler is touched (Ctrl-C's,
    or one holding it for a call), and a SIGINT for this process in the meantime is not lost: it is
    handled when the mask is put back (or at once by another thread). From any thread.
    """
    if not _SIGMASK:
        process.start()
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        process.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


class _Ended:
    """What a writer keeps of its worker process once it has ended and its handle was closed (which
    frees the handle's descriptor): the same answers as the ``Process`` of an ended worker."""

    def __init__(self, pid: int | None, exitcode: int | None) -> None:
        self.pid, self.exitcode = pid, exitcode

    def is_alive(self) -> bool:
        return False

    def join(self, timeout: float | None = None) -> None:
        pass

    def kill(self) -> None:
        pass


class DatasetWriter:
    """Writes a recording's episodes into ``root`` on a worker process (see the module doc).

    The recorder calls :meth:`open_episode`, :meth:`add_frames` each step, then
    :meth:`save_episode` or :meth:`drop_episode`, whose outcomes :meth:`take_reports` gives as they
    come; :meth:`flush` waits for the queued work and its reports and :meth:`close` stops the
    worker after it.
    """

    def __init__(self, root: str, features: dict[str, dict[str, Any]], cameras: list[str], fps: float,
                 video: VideoOptions | None = None, robot_type: str | None = None, max_queue: int = 64,
                 claim: str | None = None) -> None:
        import_pyarrow()
        self.root = os.path.abspath(root)
        context = multiprocessing.get_context('spawn')
        self._jobs = context.Queue(max_queue)
        self._reports = context.Queue()
        #: Jobs sent, and (shared with the worker) jobs it has finished: a flush waits for these to meet.
        self._sent = 0
        self._done = context.Value('q', 0, lock=False)
        #: Episode ends sent whose report has not come yet, and the reports come and not yet taken.
        self._due = 0
        self._received: list[tuple[int | None, str | None]] = []
        args = (self.root, features, cameras, fps, video or VideoOptions(), robot_type, claim)
        self._process: Any = context.Process(target=_serve, args=(self._jobs, self._reports, self._done, os.getpid(), args),
                                             name='internutopia-dataset-writer', daemon=True)
        _start_without_sigint(self._process)
        self._closed = False
        self._failure: str | None = None  # why the worker was lost (raised again by close)
        self._released = False  # the queues and process handle released (the worker has ended)
        atexit.register(self.close)

    @property
    def closed(self) -> bool:
        """Whether the writer is closed (or lost): it writes nothing more."""
        return self._closed

    def set_features(self, features: dict[str, dict[str, Any]]) -> None:
        """Replace the features table (before any episode is saved; :meth:`DatasetFiles.set_features`)."""
        self._put('set_features', features)

    def open_episode(self, token: int) -> None:
        """Start an episode's video files (``token``: the recorder's id of the episode)."""
        self._put('open_episode', token)

    def add_frames(self, token: int, images: list[np.ndarray]) -> None:
        """Send one frame per camera."""
        self._put('add_frames', token, images)

    def save_episode(self, token: int, columns: dict[str, np.ndarray], task: str, extra: dict[str, Any]) -> None:
        """Save an episode (see :meth:`DatasetFiles.save_episode`); reported when done."""
        self._put('save_episode', token, columns, task, extra)
        self._due += 1

    def drop_episode(self, token: int) -> None:
        """Forget an episode (abandoned or failed): its video files are deleted; reported when done."""
        self._put('drop_episode', token)
        self._due += 1

    def take_reports(self) -> list[tuple[int | None, str | None]]:
        """The reports that came since the last call, in order: ``(token, None)`` for an episode saved
        or dropped, ``(token, error)`` for one a job failed for (not saved; its files deleted),
        ``(None, error)`` for a failure of no episode's. Costs nothing while none is due."""
        if self._due:
            self._receive()
        if not self._received:
            return []
        reports, self._received = self._received, []
        return reports

    def flush(self) -> None:
        """Wait until the queued work is done and reported (:meth:`take_reports`)."""
        for _ in self._waiting():
            if self._closed:
                break
            if self._done.value >= self._sent:
                self._receive()  # (the worker reports before it counts a job done: a moment in its pipe)
                if not self._due:
                    break
            time.sleep(0.005)

    def close(self) -> None:
        """Finish the queued work, drop unfinished episodes and stop the worker, then take its last
        reports; raise if it died or hung. Whatever raises, the worker is not left running (unless
        this wait is itself interrupted: it then ends after its queued jobs) and a dead one's
        staging folder is removed."""
        if self._closed:
            if self._failure is not None:
                raise RuntimeError(self._failure)
            return
        self._closed = True
        atexit.unregister(self.close)
        try:
            if self._process.is_alive():
                self._send(None)
                for _ in self._waiting():
                    self._process.join(_WORKER_CHECK_S)
                    if not self._process.is_alive():
                        break
            self._check_alive()
        finally:
            self._ended()

    def _put(self, name: str, *args: Any) -> None:
        if self._closed:
            raise RuntimeError(f'the dataset writer of {self.root} is closed')
        self._send((name, args))  # (which checks first that the worker lives)

    def _send(self, job: Any) -> None:
        """Queue ``job``; past ``max_queue`` waiting jobs, wait for room while the worker lives."""
        for _ in self._waiting():
            try:
                self._jobs.put(job, timeout=_WORKER_CHECK_S)
            except queue.Full:
                continue
            self._sent += 1
            return

    def _waiting(self) -> Iterator[None]:
        """The rounds of a wait on the worker: each first checks that it is alive and that it has
        finished a job within the last ``_STALL_S`` seconds (else it is killed), raising if not."""
        last, since = self._done.value, time.monotonic()
        while True:
            self._check_alive()
            done = self._done.value
            if done != last:
                last, since = done, time.monotonic()
            elif time.monotonic() - since > _STALL_S:
                self._process.kill()
                self._process.join(10)
                self._lost(f'made no progress for {_STALL_S:g} s (stopped or hung) and was killed')
            yield

    def _check_alive(self) -> None:
        """Raise if the worker has died without being told to stop (its queued jobs are lost)."""
        code = self._process.exitcode
        if code is None or (code == 0 and self._closed):
            return
        if code == 0:  # (it could not create the dataset: its report says why)
            self._lost('stopped')
        self._lost(f'died (exit code {code})' + (' before it started: does the script make its env under '
                                                 "if __name__ == '__main__':?" if self._done.value == 0 and code == 1 else ''))

    def _lost(self, what: str) -> None:
        """The worker is gone: close this writer (nothing more can be saved) and raise, saying ``what``
        (and the worker's own error, if it reported one; its episodes' reports stay to be taken)."""
        # Nothing reads the queue any more: a job still in its pipe must not hold this process's
        # exit (Python joins a queue's sending thread at exit).
        self._jobs.cancel_join_thread()
        self._closed = True
        atexit.unregister(self.close)
        self._ended()
        errors = [error for token, error in self._received if token is None]
        self._received = [report for report in self._received if report[0] is not None]
        self._failure = (f'the dataset writer of {self.root} {what}' + ''.join(f' ({error})' for error in errors)
                         + '; the episodes not yet saved are lost')
        raise RuntimeError(self._failure)

    def _ended(self) -> None:
        """Once the worker has ended: take its last reports, remove the staging folder (the
        unsaved episodes' videos) that one which died leaves behind, and release the queues (their
        pipes and sending thread) and the process handle, so a closed writer holds no descriptor
        or thread however long it is kept."""
        if self._released or self._process.exitcode is None:
            return
        self._receive(everything=True)
        shutil.rmtree(os.path.join(self.root, STAGING), ignore_errors=True)
        self._released = True
        lost = self._failure is not None or self._process.exitcode != 0 or self._done.value < self._sent
        self._jobs.close()
        if lost:  # jobs may be left unread in its pipe: the sending thread must not be waited for
            self._jobs.cancel_join_thread()
        else:  # the worker took every job (the last one told it to stop): the thread has sent them all
            self._jobs.join_thread()
        self._reports.close()
        self._reports.join_thread()  # (this process never puts on it: no thread to wait for)
        # A queue's pipe is closed by its sending thread when it ends (as ``_jobs``' was); this one
        # never had that thread, and ``close()`` leaves it open: close both its ends.
        for end in (getattr(self._reports, '_reader', None), getattr(self._reports, '_writer', None)):
            if end is not None:
                end.close()
        pid, code = self._process.pid, self._process.exitcode
        self._process.close()
        self._process = _Ended(pid, code)

    def _receive(self, everything: bool = False) -> None:
        """Move the reports in the worker's pipe to ``_received``: those due, or ``everything`` there
        (once the worker has ended)."""
        while (self._due or everything) and not self._released:
            try:
                token, error = self._reports.get_nowait()
            except queue.Empty:
                return
            if token is not None:
                self._due -= 1
            self._received.append((token, error))
