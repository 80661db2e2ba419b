"""Key presses in the web viewer's page, read by a script (keyboard teleoperation in the browser).

:class:`ViewerKeys` adds a **keys** field to the page's panel: click it, then press keys (hold one
down and the browser repeats it). Each key that arrives is queued with its time; a script takes
them with :meth:`ViewerKeys.read`, e.g. through
``internutopia_extension.interactions.keyboard.KeyboardInteraction(viewer=viewer)``, which turns
``i k j l u o`` into InternUtopia's keyboard commands::

    viewer = attach_viewer(env, port=8080)
    keyboard = KeyboardInteraction(viewer=viewer)
    command = keyboard.get_input()        # (6,): i, k, j, l, u, o held or not

(``viser``, which draws the page, reports widget changes, not raw key events, so the keys come
through a text field; the field is emptied now and then so it never grows long.)
"""

from __future__ import annotations

import queue
import time
from typing import Any

__all__ = ['ViewerKeys']

#: Characters the field may hold before it is emptied (the browser keeps adding held keys).
_MAX_FIELD = 32


class ViewerKeys:
    """Keys typed into a field of ``viewer``'s panel; see the module doc.

    Args:
        viewer: the :class:`~internutopia.viewer.viewer.Viewer` of the env.
        label: the field's label in the panel.
    """

    def __init__(self, viewer: Any, label: str = 'keys') -> None:
        self.field = viewer.server.gui.add_text(label, initial_value='', hint='click here, then press keys (i k j l u o)')
        self._typed: queue.SimpleQueue[tuple[float, str]] = queue.SimpleQueue()
        self._previous = ''
        self.field.on_update(self._changed)

    def _changed(self, event: Any) -> None:
        if event.client is None:  # our own emptying of the field
            self._previous = self.field.value
            return
        value = str(self.field.value)
        # What the page added since the last update (a held key adds one character per repeat);
        # an edit that is not an addition counts its last character.
        added = value[len(self._previous):] if value.startswith(self._previous) else value[-1:]
        now = time.monotonic()
        for char in added:
            self._typed.put((now, char))
        self._previous = value
        if len(value) >= _MAX_FIELD:
            self.field.value = ''

    def read(self) -> list[tuple[float, str]]:
        """The keys that arrived since the last call, oldest first, as ``(time.monotonic(), char)``."""
        out = []
        while True:
            try:
                out.append(self._typed.get_nowait())
            except queue.Empty:
                return out

    def remove(self) -> None:
        """Take the field off the page."""
        self.field.remove()
