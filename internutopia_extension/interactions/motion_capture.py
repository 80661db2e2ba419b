"""Sources of motion-capture hand frames for the mocap-teleoperated Franka, all usable headless.

Each source has InternUtopia's ``MocapInteraction`` API: ``step()`` returns the next frame (a dict
of hand keypoints, :mod:`internutopia_extension.controllers.mocap_frames`), which a script sends
as the teleop controller's action ``{'franka_mocap_teleop_controller': [frame]}``;
``server_start()``/``server_stop()`` start and stop the stream.

* :class:`MocapInteraction` (InternUtopia's class and arguments): a client of a mocap server's
  HTTP API (``GET /start``, ``/results``, ``/stop``) at ``mocap_url``: InternUtopia's webcam hand
  tracker, or :class:`MocapServer` below.
* :class:`MocapServer`: that HTTP API served from this process (the standard library's
  ``http.server``, on ``127.0.0.1`` by default), fed by frames ``POST``-ed to ``/results`` (JSON;
  a bad frame is refused with status 400 and the error naming the key) or by a Python iterator.
  ``python -m internutopia_extension.interactions.motion_capture --port 5001`` serves a scripted
  hand (:func:`scripted_frames`) where InternUtopia's demo looks for its tracker.
* :class:`IteratorMocap`: frames from any Python iterable (a recording, a generator).
* :class:`HandleMocap`: frames from a pose handle, e.g. one dragged in the web viewer's page
  (``internutopia.viewer.PoseHandle``).

>>> frames = [frame_for_target((0.0, 0.0, 0.0)), frame_for_target((0.05, 0.0, 0.0))]
>>> source = IteratorMocap(frames)
>>> source.step() is frames[0], source.step() is frames[1], source.step() is frames[1], source.exhausted
(True, True, True, True)
"""

from __future__ import annotations

import argparse
import json
import math
import socket
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

import numpy as np

from internutopia_extension.controllers.mocap_frames import frame_for_target, hand_keypoints, pack_frame

__all__ = ['MAX_FRAME_BYTES', 'HandleMocap', 'IteratorMocap', 'MocapInteraction', 'MocapServer', 'PoseSource',
           'frame_for_target', 'hand_keypoints', 'scripted_frames']

#: Largest request body :class:`MocapServer` reads (a frame of two hands is about 3 KB as JSON).
MAX_FRAME_BYTES = 64 * 1024
#: Deepest nesting of lists and objects a frame's JSON may have (a frame is an object of lists of
#: keypoints, three levels): deeper bodies get one answer on every Python, where the JSON parser's
#: own recursion limit differs between versions (Python 3.13 parses 5,000 levels, 3.11 does not).
MAX_FRAME_DEPTH = 8
#: The reply to ``/results`` before any frame has arrived (InternUtopia's server sends the same).
NO_RESULTS = {'status': 'error', 'message': 'No results available.'}


class MocapInteraction:
    """A client of a mocap server at ``mocap_url`` (InternUtopia's class: same arguments and methods).

    Connecting starts the server's stream (``GET /start``; already running is fine). InternUtopia's
    client also sleeps a second here for the tracker to warm up; this one does not: ``step()``
    returns the server's "no results yet" reply until a frame arrives, which the teleop controller
    takes as no hand seen. ``timeout`` is seconds per request; an unreachable server is a
    ``ConnectionError`` naming the URL.
    """

    def __init__(self, mocap_url: str, timeout: float = 5.0) -> None:
        self.base_url = mocap_url.rstrip('/')
        self.timeout = timeout
        self.is_runing = False  # (InternUtopia's spelling)
        self.server_start()

    def _get(self, path: str) -> tuple[int, Any]:
        url = f'{self.base_url}/{path}'
        try:
            with urllib.request.urlopen(url, timeout=self.timeout) as reply:  # noqa: S310 - the user's server
                body = reply.read()
            try:
                return reply.status, json.loads(body or b'null')
            except ValueError:
                raise RuntimeError(f'mocap server at {self.base_url} answered {url} with something that is not JSON: '
                                   f'{body[:200]!r}') from None
        except urllib.error.HTTPError as error:
            body = error.read()
            try:
                return error.code, json.loads(body or b'null')
            except ValueError:
                return error.code, body.decode(errors='replace')
        except (urllib.error.URLError, OSError) as error:
            raise ConnectionError(f'mocap server at {self.base_url} is not reachable ({url}): {error}') from None

    def server_start(self) -> None:
        """Start the server's stream (``GET /start``)."""
        if self.is_runing:
            return
        status, body = self._get('start')
        if status not in (200, 400):  # 400: already running
            raise RuntimeError(f'server start failed: {body}')
        self.is_runing = True

    def step(self) -> dict[str, Any]:
        """The server's latest frame (``GET /results``)."""
        status, body = self._get('results')
        if status != 200:
            raise RuntimeError(f'mocap server get result failed: {body}')
        return body

    def server_stop(self) -> None:
        """Stop the server's stream (``GET /stop``)."""
        if not self.is_runing:
            return
        status, body = self._get('stop')
        if status not in (200, 400):  # 400: not running
            raise RuntimeError(f'server stop failed: {body}')
        self.is_runing = False


class IteratorMocap:
    """Frames from a Python iterable, with :class:`MocapInteraction`'s API. When the iterable runs
    out, ``step()`` keeps returning its last frame (the hand stays where it was) and
    :attr:`exhausted` is true; an empty iterable gives the "no results" reply."""

    def __init__(self, frames: Iterable[dict[str, Any]]) -> None:
        self._frames: Iterator[dict[str, Any]] = iter(frames)
        self._last: dict[str, Any] = dict(NO_RESULTS)
        self.exhausted = False
        self.is_runing = True

    def server_start(self) -> None:
        self.is_runing = True

    def server_stop(self) -> None:
        self.is_runing = False

    def step(self) -> dict[str, Any]:
        if not self.exhausted:
            try:
                self._last = next(self._frames)
            except StopIteration:
                self.exhausted = True
        return self._last


class PoseSource(Protocol):
    """What :class:`HandleMocap` reads: a pose (env-local position, wxyz) and a gripper command."""

    @property
    def position(self) -> Any: ...

    @property
    def wxyz(self) -> Any: ...

    @property
    def gripper_closed(self) -> bool: ...


class HandleMocap:
    """Frames that put the end-effector target where a pose handle is (``handle.position``, metres,
    counted from where the handle was at the first ``step()``, which is the target's start), with
    the gripper oriented as ``handle.wxyz`` and closed while ``handle.gripper_closed``. ``scale``
    is the teleop controller's (``teleop_cfg.scale``); ``base_orientation`` (wxyz) is the arm's
    base orientation in the frame of the handle (the robot config's ``orientation``)."""

    def __init__(self, handle: PoseSource, scale: Iterable[float], base_orientation: Iterable[float] = (1.0, 0.0, 0.0, 0.0)) -> None:
        from internutopia_extension.controllers.kinematics import quat_to_mat

        self.handle = handle
        self.scale = tuple(float(s) for s in scale)
        self._to_base = quat_to_mat(np.asarray(tuple(base_orientation), dtype=float)).T
        self._start: np.ndarray | None = None
        self.is_runing = True

    def server_start(self) -> None:
        self.is_runing = True

    def server_stop(self) -> None:
        self.is_runing = False

    def step(self) -> dict[str, Any]:
        from internutopia_extension.controllers.kinematics import quat_to_mat

        position = np.asarray(self.handle.position, dtype=float)
        if self._start is None:
            self._start = position.copy()
        rotation = self._to_base @ quat_to_mat(np.asarray(self.handle.wxyz, dtype=float))
        return frame_for_target(self._to_base @ (position - self._start), rotation, bool(self.handle.gripper_closed), self.scale)


class MocapServer:
    """InternUtopia's mocap-server HTTP API, served by this process in a background thread.

    ``GET /start`` and ``/stop`` start and stop the stream (status 400 when it already is so, as
    InternUtopia's server answers); ``GET /results`` returns the latest frame (the "no results"
    reply before the first). Frames come from ``frames`` (each ``/results`` takes the next; the
    last is repeated when it runs out) or are ``POST``-ed to ``/results`` as JSON: the server checks
    each (:func:`~internutopia_extension.controllers.mocap_frames.pack_frame`) and answers 400
    with the error, naming the bad key; a body over :data:`MAX_FRAME_BYTES` is refused with 413
    (a frame of ``frames`` or :meth:`put` may hold numpy arrays; one JSON cannot carry, or an
    iterator that raises, is answered 500 with the error, and the server keeps serving).
    It listens on ``host`` (``127.0.0.1``: this machine only) and ``port`` (0: a free one;
    :attr:`url` says where). Use it as a context manager, or call :meth:`close`.

    >>> import json, urllib.request
    >>> with MocapServer(port=0) as server:
    ...     body = json.dumps(frame_for_target((0.1, 0.0, 0.0))).encode()
    ...     _ = urllib.request.urlopen(urllib.request.Request(server.url + '/results', data=body))
    ...     client = MocapInteraction(server.url)
    ...     sorted(client.step())
    ['rh_bones_kps', 'rh_bones_kps_cam', 'rh_global_orient']
    """

    def __init__(self, host: str = '127.0.0.1', port: int = 5001, frames: Iterable[dict[str, Any]] | None = None) -> None:
        self._lock = threading.Lock()
        self._latest: dict[str, Any] | None = None
        self._source = IteratorMocap(frames) if frames is not None else None
        self.running = False
        self.frames_received = 0  # frames POST-ed
        self.frames_served = 0  # answers to GET /results
        #: Connections being served (a handler thread each), shut at :meth:`close`.
        self._connections: dict[threading.Thread, Any] = {}
        try:
            self._httpd = ThreadingHTTPServer((host, port), _handler(self))
        except OSError as error:
            raise OSError(error.errno, f'mocap server: cannot listen on {host}:{port} ({error.strerror}); '
                                       'another server there? (port=0 takes a free one)') from None
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name='mocap-server', daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f'http://{host!s}:{port}'

    def put(self, frame: dict[str, Any]) -> None:
        """Make ``frame`` the latest (checked first: a bad frame raises ``ValueError`` and changes nothing)."""
        pack_frame(frame)
        with self._lock:
            self._latest = frame
            self.frames_received += 1

    def latest(self) -> dict[str, Any]:
        """What ``GET /results`` answers now."""
        with self._lock:
            self.frames_served += 1
            if self._source is not None:
                return self._source.step()
            return self._latest if self._latest is not None else dict(NO_RESULTS)

    def close(self) -> None:
        """Stop serving, end the connections still open (a stalled client's too) and release the port."""
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
        with self._lock:
            connections = list(self._connections.items())
        for thread, connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)  # (the handler's blocked read returns at once)
            except OSError:
                pass  # already closed
            thread.join(timeout=5)

    def __enter__(self) -> MocapServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _handler(server: MocapServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = 10  # seconds a connection may stall before it is dropped

        def setup(self) -> None:
            super().setup()
            with server._lock:
                server._connections[threading.current_thread()] = self.connection

        def finish(self) -> None:
            with server._lock:
                server._connections.pop(threading.current_thread(), None)
            try:
                super().finish()
            except OSError:
                pass  # the client went away

        def _reply(self, status: int, body: Any) -> None:
            try:
                data = json.dumps(body, default=_jsonable).encode()
            except (TypeError, ValueError) as error:  # a frame of the Python source that JSON cannot carry
                status, data = 500, json.dumps({'status': 'error', 'message': f'frame is not JSON: {error}'}).encode()
            try:
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                self.close_connection = True  # the client went away

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            path = self.path.split('?')[0].rstrip('/')
            if path == '/start':
                if server.running:
                    self._reply(400, {'status': 'error', 'message': 'Already running.'})
                else:
                    server.running = True
                    self._reply(200, {'status': 'started', 'message': 'Streaming started.'})
            elif path == '/stop':
                if not server.running:
                    self._reply(400, {'status': 'error', 'message': 'Not running.'})
                else:
                    server.running = False
                    self._reply(200, {'status': 'stopped', 'message': 'Streaming stopped.'})
            elif path == '/results':
                try:
                    latest = server.latest()
                except Exception as error:  # noqa: BLE001 - the user's frame iterator failed: say so, keep serving
                    self._reply(500, {'status': 'error', 'message': f'frame source failed: {type(error).__name__}: {error}'})
                    return
                self._reply(200, latest)
            else:
                self._reply(404, {'status': 'error', 'message': f'no such path {path!r}; paths: /start, /results, /stop'})

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            if self.path.split('?')[0].rstrip('/') != '/results':
                self._reply(404, {'status': 'error', 'message': 'frames are POST-ed to /results'})
                return
            try:
                length = int(self.headers.get('Content-Length', ''))
            except ValueError:
                self._reply(411, {'status': 'error', 'message': 'a frame needs a Content-Length'})
                return
            if length < 0:
                self._reply(400, {'status': 'error', 'message': f'Content-Length must be >= 0; got {length}'})
                return
            if not 0 < length <= MAX_FRAME_BYTES:
                self._reply(413, {'status': 'error', 'message': f'a frame is 1..{MAX_FRAME_BYTES} bytes of JSON; got {length}'})
                return
            body = self.rfile.read(length)
            if len(body) < length:  # the client went away (or the server is closing) mid-body
                self.close_connection = True
                return
            try:
                frame = json.loads(body)
                if _nested_deeper_than(frame, MAX_FRAME_DEPTH):
                    raise RecursionError
                server.put(frame)
            except RecursionError:
                self._reply(400, {'status': 'error', 'message': 'frame JSON is nested too deeply'})
                return
            except ValueError as error:  # (JSON errors are ValueErrors too)
                self._reply(400, {'status': 'error', 'message': str(error)})
                return
            self._reply(200, {'status': 'ok', 'message': 'frame received'})

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
            pass  # (one line per request would flood a teleoperation session's terminal)

    return Handler


def _nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` (parsed JSON) nests lists and objects more than ``limit`` levels deep;
    a loop, not recursion, so any depth the parser gave is walked.

    >>> _nested_deeper_than({'a': [[1.0, 2.0]]}, 3), _nested_deeper_than([[[[]]]], 3), _nested_deeper_than(1.0, 0)
    (False, True, False)
    """
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _jsonable(value: Any) -> Any:
    """What JSON carries of a frame's numpy values (a frame put or iterated from Python)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    raise TypeError(f'{type(value).__name__} is not JSON serializable')


def scripted_frames(steps: int | None = None, scale: Iterable[float] = (0.25, 0.75, 0.75), period: int = 480,
                    radius: float = 0.1) -> Iterator[dict[str, Any]]:
    """A scripted right hand: the end-effector target circles ``radius`` metres around its start
    in the horizontal plane once every ``period`` frames, the gripper pointing down, closing for
    the second half of each circle. ``steps`` frames (forever when ``None``). The left hand is
    not seen."""
    down = np.diag([1.0, -1.0, -1.0])  # the gripper's z (its approach axis) pointing down
    count = 0
    while steps is None or count < steps:
        phase = 2 * math.pi * (count % period) / period
        offset = (radius * (math.cos(phase) - 1.0), radius * math.sin(phase), 0.0)
        yield frame_for_target(offset, down, pinch=phase >= math.pi, scale=tuple(scale))
        count += 1


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog='python -m internutopia_extension.interactions.motion_capture',
        description="Serve InternUtopia's mocap-server API (/start, /results, /stop) on this machine: a scripted "
                    'hand, or the frames POST-ed to /results.')
    parser.add_argument('--host', default='127.0.0.1', help='address to listen on (default: this machine only)')
    parser.add_argument('--port', type=int, default=5001, help="port (InternUtopia's demo looks at 5001)")
    parser.add_argument('--posted', action='store_true', help='serve POST-ed frames instead of the scripted hand')
    parser.add_argument('--seconds', type=float, default=None, help='stop after this many seconds (default: Ctrl-C)')
    args = parser.parse_args(argv)
    try:
        server = MocapServer(args.host, args.port, frames=None if args.posted else scripted_frames())
    except OSError as error:  # the port taken, an address not of this machine: one line, not a traceback
        print(f'[internutopia] {error.strerror or error}', file=sys.stderr, flush=True)
        return 2
    print(f'[internutopia] mocap server at {server.url} ({"POST frames to /results" if args.posted else "scripted hand"})',
          flush=True)
    try:
        threading.Event().wait(args.seconds)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    print(f'[internutopia] mocap server stopped: {server.frames_served} frames served, {server.frames_received} received', flush=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(_main())
