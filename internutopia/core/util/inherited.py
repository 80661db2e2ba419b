"""Objects a forked child inherited and must never free: kept until the process ends.

A process forked from another inherits its memory but only the thread that forked. Native objects
whose release waits for their threads (a ``mujoco.batch.Batch``'s pool, Mesa's EGL rasterizer)
would wait forever, or abort, if the child freed them; the child keeps them instead
(:func:`keep_forever`). They cost nothing: their pages stay shared with the parent unless written.
"""

from __future__ import annotations

import ctypes
from typing import Any

#: What :func:`keep_forever` was given.
_KEPT: list[Any] = []
# One reference more than Python's own: the list (and what it holds) is not freed even while the
# interpreter shuts down, when it clears module globals and frees what they held.
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_KEPT))


def keep_forever(thing: Any) -> None:
    """Keep ``thing`` alive, its finalizers never run, until the process ends."""
    _KEPT.append(thing)


__all__ = ['keep_forever']
