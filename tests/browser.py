"""A headless Chromium page driven over the DevTools protocol, for the tests of the browser views
(the web viewer's keys, the mocap handles): real key and mouse events, the page's own JavaScript."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import numpy as np


def chromium() -> str | None:
    """The Chromium executable, or ``None`` (the Debian package ``chromium``; ``.ci/run`` installs it)."""
    return shutil.which('chromium') or shutil.which('chromium-browser')


def wait_for(probe: Callable[[], Any], seconds: float, what: str, interval: float = 0.05) -> Any:
    """``probe()``'s first true value, polled every ``interval`` s; ``TimeoutError`` naming ``what``
    after ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = probe()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f'waited {seconds} s for {what}')


class Browser:
    """Headless Chromium on ``url`` (its profile in ``folder``), driven over the DevTools protocol."""

    def __init__(self, url: str, folder: str, width: int = 640, height: int = 480) -> None:
        command = [chromium(), '--headless', '--no-sandbox', '--use-gl=swiftshader', '--enable-unsafe-swiftshader',
                   '--hide-scrollbars', f'--user-data-dir={folder}', '--remote-debugging-port=0',
                   f'--window-size={width},{height}', url]
        # Its own process group, so that it is killed with its GPU and renderer processes.
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.calls = 0
        port_file = os.path.join(folder, 'DevToolsActivePort')
        page = wait_for(lambda: self._page(port_file), 60, 'a Chromium page')
        from websockets.sync.client import connect

        self.socket = connect(page['webSocketDebuggerUrl'], max_size=None, open_timeout=30)

    @staticmethod
    def _page(port_file: str) -> dict | None:
        try:
            with open(port_file, encoding='utf-8') as stream:
                port = stream.read().split()[0]
            with urllib.request.urlopen(f'http://127.0.0.1:{port}/json/list', timeout=5) as reply:
                return next((p for p in json.loads(reply.read()) if p['type'] == 'page'), None)
        except (OSError, IndexError, ValueError):
            return None

    def call(self, method: str, **params: Any) -> dict:
        """One DevTools command; its result."""
        self.calls += 1
        self.socket.send(json.dumps({'id': self.calls, 'method': method, 'params': params}))
        while True:  # (events may come in between)
            message = json.loads(self.socket.recv(timeout=60))
            if message.get('id') == self.calls:
                assert 'error' not in message, message
                return message['result']

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript ``expression`` in the page."""
        return self.call('Runtime.evaluate', expression=expression, returnByValue=True)['result'].get('value')

    def press(self, key: str) -> None:
        """A key pressed and released."""
        self.call('Input.dispatchKeyEvent', type='keyDown', key=key, text=key)
        self.call('Input.dispatchKeyEvent', type='keyUp', key=key)

    def mouse(self, kind: str, xy: Any, pressed: bool) -> None:
        """One mouse event (``mouseMoved``, ``mousePressed``, ``mouseReleased``) at page pixel ``xy``."""
        self.call('Input.dispatchMouseEvent', type=kind, x=float(xy[0]), y=float(xy[1]),
                  button='left' if pressed or kind != 'mouseMoved' else 'none',
                  buttons=1 if pressed else 0, clickCount=0 if kind == 'mouseMoved' else 1)

    def drag(self, start: Any, end: Any, steps: int = 8) -> None:
        """Press at ``start``, move to ``end`` in ``steps``, release: a user's drag."""
        start, end = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
        self.mouse('mouseMoved', start, False)
        time.sleep(0.2)
        self.mouse('mousePressed', start, True)
        for k in range(1, steps + 1):
            self.mouse('mouseMoved', start + (end - start) * k / steps, True)
            time.sleep(0.03)
        self.mouse('mouseReleased', end, False)

    def close(self) -> None:
        try:
            self.socket.close()
        finally:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
