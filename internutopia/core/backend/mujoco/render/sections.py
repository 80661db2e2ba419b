"""Render sections: GL work that a finalizer's free must not interrupt.

A render makes its context current, then draws and reads. Python's cyclic garbage collector runs
finalizers wherever it happens to trigger, inside such a render too: an env dropped without
``close()`` and kept in a reference cycle frees its packs' rendering state there, and freeing
makes each dying context current in turn and leaves none current. The interrupted render then
draws into no context: an offscreen framebuffer "could not be made (GL status 0x0)", or the
frame's pixels are wrong. So a rendering state dropped inside a :func:`render_section` (of the
same thread) is freed when the section ends, before the next render makes its context current.

>>> freed = []
>>> with render_section():
...     free_outside_sections(lambda: freed.append('dropped state'))
...     freed
[]
>>> freed
['dropped state']
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught, render_section():
...     warnings.simplefilter('always')
...     free_outside_sections(lambda: 1 / 0)
>>> str(caught[0].message)
"freeing the rendering state of a dropped env failed: ZeroDivisionError('division by zero')"
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Iterator

_thread = threading.local()  # per thread: how deep in render sections, and the frees waiting for their end


@contextlib.contextmanager
def render_section() -> Iterator[None]:
    """GL work (a context made current, then drawn and read) during which frees wait (nestable)."""
    depth = getattr(_thread, 'depth', 0)
    _thread.depth = depth + 1
    try:
        yield
    finally:
        _thread.depth = depth
        if depth == 0:
            waiting, _thread.waiting = getattr(_thread, 'waiting', []), []
            for free in waiting:
                _free_reported(free)


def _free_reported(free: Callable[[], None]) -> None:
    """``free()``; an error is reported as a warning, as a finalizer's would be, never raised into
    the render it waited for."""
    try:
        free()
    except Exception as exc:  # noqa: BLE001 - a dropped state's cleanup must not fail a live env's render
        warnings.warn(f'freeing the rendering state of a dropped env failed: {exc!r}', RuntimeWarning, stacklevel=2)


def free_outside_sections(free: Callable[[], None]) -> None:
    """Call ``free`` now, or at the end of the render section this thread is inside."""
    if getattr(_thread, 'depth', 0):
        if not hasattr(_thread, 'waiting'):
            _thread.waiting = []
        _thread.waiting.append(free)
    else:
        free()


__all__ = ['free_outside_sections', 'render_section']
