"""The OpenGL side: which GL context class renders, and a default for headless Linux.

Headless Linux: with no ``DISPLAY``/``WAYLAND_DISPLAY``, ``MUJOCO_GL`` defaults to ``egl`` (Mesa's
EGL runs on the CPU; packages ``libegl1 libgl1-mesa-dri libegl-mesa0``). The GL context class is
picked from ``MUJOCO_GL`` *as it is when the first image is rendered*, so the default applies even
when ``mujoco`` was imported before this module.
"""

from __future__ import annotations

import os
import sys
from typing import Any


def _default_gl_backend() -> None:
    if sys.platform.startswith('linux') and not (os.environ.get('DISPLAY') or os.environ.get('WAYLAND_DISPLAY')) \
            and not os.environ.get('MUJOCO_GL', '').strip():
        os.environ['MUJOCO_GL'] = 'egl'


_default_gl_backend()


def gl_context_class() -> type:
    """The GL context class for ``MUJOCO_GL`` as currently set (``egl``/``osmesa``/``glfw``)."""
    backend = os.environ.get('MUJOCO_GL', '').lower().strip()
    if sys.platform.startswith('linux') and backend == 'egl':
        from mujoco.egl import GLContext
        return GLContext
    if sys.platform.startswith('linux') and backend == 'osmesa':
        from mujoco.osmesa import GLContext
        return GLContext
    from mujoco.rendering.classic import gl_context

    return gl_context.GLContext


def new_gl_context(width: int, height: int) -> Any:
    """A new GL context, current on the calling thread."""
    context = gl_context_class()(int(width), int(height))
    context.make_current()
    return context


__all__ = ['gl_context_class', 'new_gl_context']
