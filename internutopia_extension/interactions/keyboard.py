"""``KeyboardInteraction``: InternUtopia's keyboard teleoperation, without Isaac Sim.

``get_input()`` returns InternUtopia's command: an array of 6 numbers, 1.0 for each of the keys
``i k j l u o`` that is held, else 0.0. A script turns it into a speed as InternUtopia's demos do::

    keyboard = KeyboardInteraction()
    command = keyboard.get_input()
    x_speed, y_speed, z_speed = command[0] - command[1], command[2] - command[3], command[4] - command[5]

The keys come from two places:

- **a terminal**: the script's standard input when it is a terminal (read without blocking and
  without waiting for Enter; the terminal's settings are restored at :meth:`KeyboardInteraction.close`
  and at exit), or any stream given as ``stream`` (a pipe, a pseudo-terminal). With no terminal
  (a headless job, CI) it gives zero commands.
- **the web viewer**: ``viewer=`` a :class:`~internutopia.viewer.viewer.Viewer`; its page gets a
  **keys** field, and keys pressed there count the same (:class:`~internutopia.viewer.key_input.ViewerKeys`).

Neither a terminal nor a browser reports a key's release, only its press and its repeats while it
is held; so a key counts as held for ``hold`` seconds after it last arrived (longer than the
pause before a held key starts repeating). As in InternUtopia, the last key pressed is the
command: one key at a time.

>>> import os
>>> read_end, write_end = os.pipe()
>>> keyboard = KeyboardInteraction(stream=read_end)
>>> _ = os.write(write_end, b'j')
>>> keyboard.get_input().tolist()
[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
>>> keyboard.close(); os.close(read_end); os.close(write_end)
"""

from __future__ import annotations

import atexit
import math
import os
import re
import select
import sys
import time
from typing import IO, Any

import numpy as np

from internutopia.core.util.interaction import BaseInteraction

#: The keys of InternUtopia's keyboard command, in its order: forward, backward, left, right, turn left, turn right.
KEYS = 'ikjluo'
#: Seconds a key counts as held after it last arrived (a held key repeats after about 0.5 s, then every ~30 ms).
DEFAULT_HOLD = 0.6
#: A terminal's escape sequence (arrows, F1-F12, Home, End: ``ESC [ ... X`` or ``ESC O X``): not typed keys.
_ESCAPE = re.compile(r'\x1b(?:\[[0-?]*[ -/]*[@-~]|O.?)?')


class TerminalKeys:
    """Keys from a terminal or stream, read without blocking.

    Args:
        stream: a file descriptor or file object; ``None``: standard input, used only when it is a terminal.
    """

    def __init__(self, stream: int | IO[Any] | None = None) -> None:
        self.fd: int | None = None
        self._saved: Any = None
        if stream is None:
            stdin = sys.stdin
            try:
                if stdin is None or not stdin.isatty():
                    return  # headless, piped or closed: no keyboard
                fd = stdin.fileno()
            except (AttributeError, OSError, ValueError):  # a replaced stdin without a descriptor
                return
        else:
            fd = stream if isinstance(stream, int) else stream.fileno()
        self.fd = fd
        if os.isatty(fd):
            import termios
            import tty

            # Keys arrive as they are pressed (no Enter), without being echoed.
            self._saved = termios.tcgetattr(fd)
            tty.setcbreak(fd)
            atexit.register(self.close)

    def read(self) -> list[tuple[float, str]]:
        """The keys that arrived since the last call, as ``(time.monotonic(), char)``."""
        if self.fd is None:
            return []
        chunks = []
        while select.select([self.fd], [], [], 0.0)[0]:
            try:
                chunk = os.read(self.fd, 1024)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:  # the terminal went away
                self.fd = None
                break
            if not chunk:  # end of the stream
                self.fd = None
                break
            chunks.append(chunk)
        now = time.monotonic()
        # (without the sequences, F1 = ESC O P would read as 'o', and Home = ESC O H too)
        return [(now, char) for char in _ESCAPE.sub('', b''.join(chunks).decode(errors='ignore'))]

    def close(self) -> None:
        """Give the terminal its settings back (idempotent)."""
        if self._saved is not None and self.fd is not None:
            import termios

            try:
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
            except (OSError, termios.error):
                pass
        self._saved = None


@BaseInteraction.register('Keyboard')
class KeyboardInteraction(BaseInteraction):
    """InternUtopia's keyboard interaction (keys ``i k j l u o``); see the module docstring.

    Args:
        viewer: a web viewer whose page's keys count too (``None``: none).
        stream: where terminal keys come from (default: standard input when it is a terminal).
        hold: seconds a key counts as held after it last arrived.
    """

    def __init__(self, viewer: Any = None, stream: int | IO[Any] | None = None, hold: float = DEFAULT_HOLD) -> None:
        super().__init__()
        if isinstance(hold, bool) or not isinstance(hold, (int, float, np.integer, np.floating)) or not 0 < hold < math.inf:
            raise ValueError(f'hold must be a finite number of seconds > 0; got {hold!r}')
        self._type = 'Keyboard'
        self.hold = float(hold)
        self.terminal = TerminalKeys(stream)
        self.viewer_keys = None
        if viewer is not None:
            # The viewer makes its own key field: an extension never imports the viewer (an
            # application layer above it), it only asks the object it was given.
            self.viewer_keys = viewer.key_input()
        self.command = np.zeros(len(KEYS))
        self._key: str | None = None
        self._last = -np.inf

    def get_input(self) -> np.ndarray:
        """``(6,)``: 1.0 for the held key among ``i k j l u o`` (InternUtopia's order), else 0.0."""
        arrived = self.terminal.read() + (self.viewer_keys.read() if self.viewer_keys is not None else [])
        for stamp, char in sorted(arrived):
            char = char.lower()
            if char in KEYS:
                self._key, self._last = char, stamp
        self.command = np.zeros(len(KEYS))
        if self._key is not None and time.monotonic() - self._last <= self.hold:
            self.command[KEYS.index(self._key)] = 1.0
        return self.command.copy()

    def close(self) -> None:
        """Give the terminal its settings back and take the viewer's field off its page."""
        self.terminal.close()
        if self.viewer_keys is not None:
            self.viewer_keys.remove()
            self.viewer_keys = None


__all__ = ['DEFAULT_HOLD', 'KEYS', 'KeyboardInteraction', 'TerminalKeys']
