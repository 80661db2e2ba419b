"""``internutopia view`` and the web viewer's server start-up: a bad ``--port``, ``--host`` or
``--speed``, a taken port, or a server thread that fails, is a clear error at once, never a hang, and
nothing is left running (no server, no thread)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

pytest.importorskip('viser', reason="the viewer comes with the 'viewer' extra")

from internutopia import cli  # noqa: E402
from internutopia.cli.command_line import _parser  # noqa: E402
from internutopia.viewer import Viewer, ViewerStartError, check_address  # noqa: E402
from internutopia.viewer import server as server_module  # noqa: E402
from internutopia.viewer import viewer as viewer_module  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, 'configs', 'h1_example.yaml')
#: TEST-NET-1 (RFC 5737): documentation only, never an address of this machine.
NOT_HERE = '192.0.2.1'
#: The most a failed start may take (s); a hang is cut off by the subprocess timeouts.
FAST_S = 10.0


def fake_env(env_num: int = 2) -> SimpleNamespace:
    """What :class:`Viewer` reads of an env when it starts (no MuJoCo needed)."""
    return SimpleNamespace(env_num=env_num, config=SimpleNamespace(env_offset_size=2.0))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def hold(port: int, host: str = '127.0.0.1') -> socket.socket | None:
    """A socket listening on ``host:port`` (None when something else holds it already)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        return None
    sock.listen()
    return sock


#: Threads a test may leave: where viser's server thread died without saying so, viser's start
#: waits for it forever; the helper thread that ran it stays, idle (a daemon: it never keeps the
#: process alive). Only the tests of that fault add to it.
MAY_STAY: set[str] = set()


@pytest.fixture(autouse=True)
def nothing_left_running() -> Iterator[None]:
    """Every thread a test starts (viser's server and worker threads, the start-up helper) has ended after it."""
    before = set(threading.enumerate())
    MAY_STAY.clear()
    yield
    deadline = time.monotonic() + 5.0
    while (left := [t for t in threading.enumerate() if t not in before and t.is_alive() and t.name not in MAY_STAY]) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f'threads left running: {[t.name for t in left]}'


def run_cli(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """``internutopia view CONFIG ARGS`` in a fresh process, with a timeout (a hang fails the test)."""
    began = time.monotonic()
    done = subprocess.run([sys.executable, '-m', 'internutopia.cli', 'view', CONFIG, *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env={**os.environ, 'MUJOCO_GL': 'egl'})
    return done, time.monotonic() - began


# -- argument parsing ------------------------------------------------------------------------------
@pytest.mark.parametrize('option, value, message', [
    ('--port', '99999', 'expected a port 0-65535 (0: any free port), got 99999'),
    ('--port', '65536', 'expected a port 0-65535 (0: any free port), got 65536'),
    ('--port', '-1', 'expected a port 0-65535 (0: any free port), got -1'),
    ('--port', 'http', "expected a port 0-65535 (0: any free port), got 'http'"),
    ('--speed', '-2', 'expected a finite number >= 0 (0: as fast as it runs), got -2'),
    ('--speed', 'nan', 'expected a finite number >= 0 (0: as fast as it runs), got nan'),
    ('--speed', 'inf', 'expected a finite number >= 0 (0: as fast as it runs), got inf'),
    ('--speed', 'fast', "expected a finite number >= 0 (0: as fast as it runs), got 'fast'"),
])
def test_a_bad_port_or_speed_is_a_usage_error(capsys, option, value, message):
    with pytest.raises(SystemExit) as exit_:
        cli.main(['view', CONFIG, option, value])
    assert exit_.value.code == cli.EXIT_USAGE
    assert f'internutopia view: error: argument {option}: {message}' in capsys.readouterr().err


def test_the_edge_values_are_accepted():
    args = _parser().parse_args(['view', CONFIG, '--port', '0', '--speed', '0'])
    assert (args.port, args.speed) == (0, 0.0)
    args = _parser().parse_args(['view', CONFIG, '--port', '65535', '--speed', '2.5'])
    assert (args.port, args.speed) == (65535, 2.5)
    assert _parser().parse_args(['view', CONFIG]).port == 8080


def test_the_reported_bad_port_ends_at_once():
    done, took = run_cli('--port', '99999')
    assert done.returncode == cli.EXIT_USAGE, done.stderr
    assert 'argument --port: expected a port 0-65535' in done.stderr and 'Traceback' not in done.stderr
    assert took < 60


# -- the address ---------------------------------------------------------------------------------------
@pytest.mark.parametrize('port', [-1, 65536, 99999])
def test_check_address_rejects_a_port_out_of_range(port):
    with pytest.raises(ViewerStartError, match=rf'port {port}: valid ports are 0-65535 \(0: any free port\)'):
        check_address('127.0.0.1', port)


def test_check_address_rejects_an_address_not_of_this_machine():
    with pytest.raises(ViewerStartError, match=rf'on {NOT_HERE}:8080: {NOT_HERE} is not an address of this machine'):
        check_address(NOT_HERE, 8080)


def test_check_address_rejects_an_unknown_host():
    with pytest.raises(ViewerStartError, match=r"no-such-host\.invalid:8080: the host 'no-such-host\.invalid' is not known"):
        check_address('no-such-host.invalid', 8080)


def test_check_address_moves_past_a_taken_port():
    port = free_port()
    holder = hold(port)
    assert holder is not None
    with holder:
        assert port < check_address('127.0.0.1', port) < port + server_module.PORT_TRIES
    assert check_address('127.0.0.1', 0) == 0  # the system picks one when the server starts


def test_the_last_port_taken_is_an_error_not_a_hang():
    """Port 65535 taken: viser moved on to 65536, its thread died of an OverflowError and the start hung."""
    holder = hold(65535)
    try:
        began = time.monotonic()
        with pytest.raises(ViewerStartError, match=r'on 127\.0\.0\.1:65535: port 65535 is in use'):
            Viewer(fake_env(), host='127.0.0.1', port=65535)
        assert time.monotonic() - began < FAST_S
    finally:
        if holder is not None:
            holder.close()


# -- the server ------------------------------------------------------------------------------------------
def test_a_second_viewer_on_a_taken_port_serves_on_the_next_one():
    first = Viewer(fake_env(), host='127.0.0.1', port=0)
    try:
        assert first.port > 0
        began = time.monotonic()
        second = Viewer(fake_env(), host='127.0.0.1', port=first.port)
        try:
            assert time.monotonic() - began < FAST_S
            assert second.port != first.port
            for viewer in (first, second):
                socket.create_connection(('127.0.0.1', viewer.port), timeout=2).close()
        finally:
            second.close()
    finally:
        first.close()
    with pytest.raises(OSError):
        socket.create_connection(('127.0.0.1', first.port), timeout=2).close()


def test_a_viewer_on_an_address_not_of_this_machine_fails_fast():
    began = time.monotonic()
    with pytest.raises(ViewerStartError, match=f'{NOT_HERE} is not an address of this machine'):
        Viewer(fake_env(), host=NOT_HERE, port=0)
    assert time.monotonic() - began < FAST_S


def _dies(self, ready_sem):
    raise OverflowError('bind(): port must be 0-65535.')  # as viser's thread did past port 65535


def _gives_up(self, ready_sem):
    return None  # as viser's thread does after 1000 ports it cannot bind


@pytest.mark.parametrize('worker', [_dies, _gives_up])
def test_a_server_thread_that_ends_without_serving_is_an_error(monkeypatch, worker):
    from viser import infra

    monkeypatch.setattr(infra.WebsockServer, '_background_worker', worker)
    monkeypatch.setattr(threading, 'excepthook', lambda args: None)  # the thread's traceback: expected here
    MAY_STAY.add('internutopia-viewer-start')
    began = time.monotonic()
    with pytest.raises(ViewerStartError, match=r'on 127\.0\.0\.1:0: the web server \(viser\) stopped while starting'):
        Viewer(fake_env(), host='127.0.0.1', port=0)
    assert time.monotonic() - began < FAST_S


def test_viser_past_the_last_port_is_an_error_without_the_address_check(monkeypatch):
    """Without :func:`check_address`, viser's own thread dies past port 65535: still an error, at once."""
    monkeypatch.setattr(viewer_module, 'check_address', lambda host, port: port)
    monkeypatch.setattr(threading, 'excepthook', lambda args: None)  # viser's OverflowError: expected here
    MAY_STAY.add('internutopia-viewer-start')
    holder = hold(65535)
    try:
        began = time.monotonic()
        with pytest.raises(ViewerStartError, match=r'on 127\.0\.0\.1:65535: the web server \(viser\) stopped while starting'):
            Viewer(fake_env(), host='127.0.0.1', port=65535)
        assert time.monotonic() - began < FAST_S
    finally:
        if holder is not None:
            holder.close()


def test_a_server_that_never_starts_is_an_error_after_the_timeout(monkeypatch):
    from viser import infra

    release = threading.Event()
    monkeypatch.setattr(infra.WebsockServer, '_background_worker', lambda self, ready_sem: release.wait(30))
    monkeypatch.setattr(server_module, 'START_TIMEOUT_S', 0.5)
    MAY_STAY.add('internutopia-viewer-start')
    began = time.monotonic()
    try:
        with pytest.raises(ViewerStartError, match=r'the web server \(viser\) did not start within 0\.5 s'):
            Viewer(fake_env(), host='127.0.0.1', port=0)
        assert time.monotonic() - began < FAST_S
    finally:
        release.set()  # ends the stalled stand-in for viser's thread


def test_a_start_stuck_before_visers_server_thread_is_an_error_after_twice_the_timeout(monkeypatch):
    """A viser whose server thread is not where the watch looks for it (a private attribute that
    a later viser may move) and whose start never returns: an error, not a wait forever."""
    from viser import infra

    release = threading.Event()
    monkeypatch.setattr(infra.WebsockServer, 'start', lambda self: release.wait(30))
    monkeypatch.setattr(threading, 'excepthook', lambda args: None)  # (viser's start, released, finds no loop)
    monkeypatch.setattr(server_module, 'START_TIMEOUT_S', 0.5)
    MAY_STAY.add('internutopia-viewer-start')
    began = time.monotonic()
    try:
        with pytest.raises(ViewerStartError, match=r'the web server \(viser\) did not start within 1 s'):
            Viewer(fake_env(), host='127.0.0.1', port=0)
        assert time.monotonic() - began < FAST_S
    finally:
        release.set()  # ends the stalled stand-in for viser's start


# -- the command -------------------------------------------------------------------------------------------
def test_the_reported_bad_host_ends_at_once():
    done, took = run_cli('--host', NOT_HERE)
    assert done.returncode == cli.EXIT_ERROR, done.stderr
    assert done.stderr.strip() == (f'internutopia view: cannot serve the viewer on {NOT_HERE}:8080: {NOT_HERE} is not '
                                   'an address of this machine (use 0.0.0.0 for every interface, or 127.0.0.1 for '
                                   'this machine only)')
    assert took < 60


def test_the_command_on_a_taken_last_port_ends_at_once():
    holder = hold(65535, '0.0.0.0')
    try:
        done, took = run_cli('--port', '65535')
    finally:
        if holder is not None:
            holder.close()
    assert done.returncode == cli.EXIT_ERROR, done.stderr
    assert 'internutopia view: cannot serve the viewer on 0.0.0.0:65535: port 65535 is in use' in done.stderr
    assert took < 60


def test_the_command_on_a_taken_port_says_where_it_serves(capsys):
    holder = hold(free_port())
    assert holder is not None
    with holder:
        port = holder.getsockname()[1]
        assert cli.main(['view', CONFIG, '--host', '127.0.0.1', '--port', str(port), '--speed', '0', '--steps', '2',
                         '--set', 'env_num=1']) == cli.EXIT_OK
    err = capsys.readouterr().err
    assert f'[internutopia] port {port} is in use; serving on port ' in err
    assert '[internutopia] viewing ' in err and f'http://localhost:{port}' not in err
