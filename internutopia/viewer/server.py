"""Where the web viewer's server starts: its address checked first, its start watched.

:func:`check_address` test-binds ``host:port`` as the server would and returns the port it will
use (the next free one when it is taken), or raises :class:`ViewerStartError` naming the host, the
port and the cause (not an address of this machine, out of range, every port tried taken):
``internutopia view`` calls it before it builds the env. :func:`start_server` builds ``viser``'s
server on a helper thread and watches it: viser waits forever for a server thread that died or
gave up (a port past 65535, an address it could not bind), where this raises within about a
second, or after :data:`START_TIMEOUT_S` for a server that never says it serves.
"""

from __future__ import annotations

import atexit
import errno
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from viser import ViserServer

__all__ = ['MAX_PORT', 'PORT_TRIES', 'START_TIMEOUT_S', 'ViewerStartError', 'check_address', 'start_server']

#: The highest port; 0 asks the system for any free port.
MAX_PORT = 65535
#: How many ports are tried, from the one asked for, when it is taken (as ``viser`` does).
PORT_TRIES = 1000
#: Longest wait (s) for the web server's thread to say it is serving, once it has started.
START_TIMEOUT_S = 30.0


class ViewerStartError(OSError):
    """The viewer's web server cannot start: the host is not an address of this machine, the port
    is out of range or taken (with every port after it that is tried), or the server did not start."""


def _where(host: str, port: int) -> str:
    return f'[{host}]:{port}' if ':' in host else f'{host}:{port}'


def _resolve(host: str, port: int) -> list[tuple[int, int, int, tuple]]:
    """The addresses a server on ``host`` binds (as asyncio's ``create_server`` resolves them)."""
    try:
        infos = socket.getaddrinfo(host or None, port, socket.AF_UNSPEC, socket.SOCK_STREAM, 0, socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ViewerStartError(f'cannot serve the viewer on {_where(host, port)}: the host {host!r} is not known '
                               f'({exc.strerror})') from None
    return list(dict.fromkeys((family, kind, proto, address) for family, kind, proto, _, address in infos))


def _bind_error(addresses: list[tuple[int, int, int, tuple]], port: int) -> OSError | None:
    """Why a server could not bind every one of ``addresses`` on ``port`` (None: it could)."""
    for family, kind, proto, address in addresses:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does
            if family == socket.AF_INET6 and hasattr(socket, 'IPV6_V6ONLY'):
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind((address[0], port, *address[2:]))
            except OSError as exc:
                return exc
    return None


def check_address(host: str, port: int) -> int:
    """Check that the viewer can serve on ``host:port`` and return the port it will use: ``port``,
    or the next free one when it is taken (up to :data:`PORT_TRIES` ports); 0 stays 0 (the system
    picks a free port when the server starts).

    Raises:
        ViewerStartError: ``port`` is not 0-65535, ``host`` is not known or not an address of this
            machine, the port cannot be used (e.g. below 1024 without root), or it and every port
            tried after it are taken. The message names the host, the port and the cause.
    """
    if isinstance(port, bool) or not isinstance(port, (int, np.integer)) or not 0 <= port <= MAX_PORT:
        raise ViewerStartError(f'cannot serve the viewer on port {port!r}: valid ports are 0-{MAX_PORT} '
                               '(0: any free port)')
    port = int(port)  # (a numpy integer too)
    addresses = _resolve(host, port)
    last = min(port + PORT_TRIES - 1, MAX_PORT) if port else 0
    for candidate in range(port, last + 1):
        error = _bind_error(addresses, candidate)
        if error is None:
            return candidate
        if error.errno == errno.EADDRINUSE:
            continue
        where = _where(host, candidate)
        if error.errno == errno.EADDRNOTAVAIL:
            raise ViewerStartError(f'cannot serve the viewer on {where}: {host} is not an address of this machine '
                                   '(use 0.0.0.0 for every interface, or 127.0.0.1 for this machine only)')
        if error.errno == errno.EACCES and candidate < 1024:
            raise ViewerStartError(f'cannot serve the viewer on {where}: permission denied (ports below 1024 need '
                                   'root; use a port of 1024 or more)')
        raise ViewerStartError(f'cannot serve the viewer on {where}: {error.strerror or error}')
    taken = f'port {port} is in use' if last == port else f'ports {port}-{last} are all in use'
    raise ViewerStartError(f'cannot serve the viewer on {_where(host, port)}: {taken} (another viewer or server '
                           'is running there; pick another --port, or 0 for any free port)')


def start_server(viser: Any, host: str, port: int, timeout: float | None = None) -> ViserServer:
    """``viser.ViserServer(host, port)``, but raising :class:`ViewerStartError` when its server
    thread dies or gives up (viser would then wait for it forever) or is not serving ``timeout`` s
    (default :data:`START_TIMEOUT_S`) after it started. The server is built on a helper thread,
    watched from this one."""
    timeout = START_TIMEOUT_S if timeout is None else timeout
    server = viser.ViserServer.__new__(viser.ViserServer)
    outcome: dict[str, BaseException | None] = {}
    abandoned = threading.Event()  # (set once the caller gave up on this start)

    def construct() -> None:
        try:
            server.__init__(host=host, port=port, verbose=False)
        except BaseException as exc:  # handed to the caller's thread
            outcome['error'] = exc
            # (viser registers its stop at exit halfway through its start: a half-built server's fails there)
            atexit.unregister(server.stop)
        else:
            outcome['error'] = None
            if abandoned.is_set():  # it came up after the caller gave up: nobody will use or stop it
                _stop_quietly(server)

    builder = threading.Thread(target=construct, name='internutopia-viewer-start', daemon=True)
    builder.start()
    started = None  # when viser's server thread was first seen
    began = time.monotonic()
    where = _where(host, port)
    try:
        while True:
            builder.join(0.02)
            if not builder.is_alive():
                break
            # (viser's server thread is a private attribute: a viser that keeps it elsewhere is
            # watched by the start's own clock, twice the timeout, instead of never)
            loop = getattr(vars(server).get('_websock_server'), '_server_thread', None)
            if loop is None:
                if time.monotonic() - began > 2 * timeout:
                    raise ViewerStartError(f'cannot serve the viewer on {where}: the web server (viser) did not '
                                           f'start within {2 * timeout:g} s')
                continue  # viser is still setting up, before its server thread
            if started is None:
                started = time.monotonic()
            if not loop.is_alive():
                builder.join(0.5)  # it ended without serving, or the start is just returning
                if builder.is_alive():
                    raise ViewerStartError(f'cannot serve the viewer on {where}: the web server (viser) stopped '
                                           'while starting (its thread failed or found no port it could use)')
                break
            if time.monotonic() - started > timeout:
                raise ViewerStartError(f'cannot serve the viewer on {where}: the web server (viser) did not start '
                                       f'within {timeout:g} s')
    except BaseException:
        abandoned.set()
        _abandon(builder, server, outcome)
        raise
    error = outcome.get('error')
    if error is not None:
        if isinstance(error, OSError) and not isinstance(error, ViewerStartError):
            raise ViewerStartError(f'cannot serve the viewer on {where}: {error}') from error
        raise error
    return server


def _abandon(builder: threading.Thread, server: Any, outcome: dict[str, BaseException | None]) -> None:
    """After a failed or interrupted start: stop viser's server thread, and the server if it came
    up after all."""
    websock = vars(server).get('_websock_server')
    loop, stop = getattr(websock, '_background_event_loop', None), getattr(websock, '_stop_event', None)
    server_thread = getattr(websock, '_server_thread', None)
    if loop is not None and stop is not None and server_thread is not None:
        try:
            loop.call_soon_threadsafe(stop.set)
        except RuntimeError:  # the loop is closed: the thread has ended
            pass
        server_thread.join(2.0)
    # (a helper thread still blocked in viser's start, waiting for a server thread that is gone,
    # stays so: a daemon thread, idle, that never keeps the process alive)
    builder.join(2.0)
    if not builder.is_alive() and 'error' in outcome and outcome['error'] is None:
        _stop_quietly(server)


def _stop_quietly(server: Any) -> None:
    """Stop an abandoned server, and take it off viser's stops at exit (one that never came up
    fails there, with a traceback)."""
    atexit.unregister(server.stop)
    try:
        server.stop()
    except Exception:  # noqa: BLE001 - already failing; the original error is what matters
        pass
