"""The OpenGL side: which GL context class renders, a default for headless Linux, and a second
EGL display for Mesa's CPU rasterizer.

Headless Linux: with no ``DISPLAY``/``WAYLAND_DISPLAY``, ``MUJOCO_GL`` defaults to ``egl`` (Mesa's
EGL runs on the CPU; packages ``libegl1 libgl1-mesa-dri libegl-mesa0``) where an EGL library
loads. Where none does (a minimal GPU-server image, say), ``MUJOCO_GL`` is left unset: ``import
mujoco`` with ``MUJOCO_GL=egl`` and no EGL fails outright, and physics needs no GL at all; only
rendering then raises, saying what to install. The GL context class is picked from ``MUJOCO_GL``
*as it is when the first image is rendered*, so the default applies even when ``mujoco`` was
imported before this module.

**Screens.** Mesa's CPU rasterizer (llvmpipe) has one rasterizer per EGL display, and the GL
contexts of one display queue their frames on it one scene at a time: two render threads, each
with a context of its own on MuJoCo's display, kept about 1.7 of 2 cores busy and drew no more
frames than one thread (``docs/rendering.md``). Render workers therefore ask for a *screen*
(:func:`new_gl_context`): screen 0 is MuJoCo's display, screen 1 a display of Mesa's surfaceless
platform, which has a rasterizer of its own. The second display is used only where it renders with
the same renderer as MuJoCo's (Mesa on both: never a CPU display beside a GPU one); otherwise every
screen is MuJoCo's display.

**Rasterizing on the drawing threads.** Mesa's rasterizer starts threads of its own per display
(``LP_NUM_THREADS``, one per core by default). When exactly two render workers draw, each on a
display of its own, the two drawing threads already keep two cores busy, and the rasterizer's own
threads (two per display on two cores) only take turns with them: :func:`prepare_screens` then
makes the displays with ``LP_NUM_THREADS=0``, so each frame is rasterized on the thread that drew
it (H1 x16 third-person frames on 2 cores: 572-587 → 609-615 frames/s for RGB-D, 614-615 →
658-661 for RGB, the same pixels; ``docs/rendering.md``). It does so only for displays not made
yet, and never where the user set ``LP_NUM_THREADS``. With more workers than displays, two workers
share a display, and one rasterizing on its own thread would make the other wait: the displays
keep Mesa's threads.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import sys
import threading
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

from internutopia.core.backend.mujoco.render.fork import SURFACELESS, fresh_display, prepare_mujoco_display

_GL_RENDERER = 0x1F01
#: Mesa's llvmpipe reads its rasterizer thread count from this variable when a display is made.
RASTERIZER_THREADS_VARIABLE = 'LP_NUM_THREADS'


#: The library PyOpenGL's EGL platform (and so MuJoCo's ``egl`` backend) loads.
EGL_LIBRARY = 'libEGL.so.1'
_NO_GL_HINT = ('headless rendering needs EGL (Debian/Ubuntu: apt install libegl1 libgl1-mesa-dri libegl-mesa0; '
               'with an NVIDIA driver, libegl1 and libglvnd0) or OSMesa (MUJOCO_GL=osmesa)')


def egl_loads() -> bool:
    """Whether an EGL library loads in this process (it stays loaded: rendering would load it anyway)."""
    try:
        ctypes.CDLL(EGL_LIBRARY)
    except OSError:
        return False
    return True


def _display_set(environ: Mapping[str, str]) -> bool:
    return bool(environ.get('DISPLAY') or environ.get('WAYLAND_DISPLAY'))


def default_to_egl(environ: MutableMapping[str, str] | None = None, headless_only: bool = True) -> bool:
    """Set ``MUJOCO_GL=egl`` in ``environ`` (default ``os.environ``) when it is unset or empty, on
    Linux, where an EGL library loads (with ``headless_only``, only when no display is set either:
    the library's own default; the benchmarks render through EGL on any Linux). Whether it set it.
    A ``MUJOCO_GL`` already chosen is never changed.

    >>> env = {'MUJOCO_GL': 'osmesa'}
    >>> default_to_egl(env), env['MUJOCO_GL']
    (False, 'osmesa')
    """
    if environ is None:
        environ = os.environ
    if not sys.platform.startswith('linux') or environ.get('MUJOCO_GL', '').strip():
        return False
    if headless_only and _display_set(environ):
        return False
    if not egl_loads():
        return False
    environ['MUJOCO_GL'] = 'egl'
    return True


default_to_egl()


def _backend() -> str:
    """``MUJOCO_GL`` as currently set, normalized."""
    return os.environ.get('MUJOCO_GL', '').lower().strip()


def gl_context_class() -> type:
    """The GL context class for ``MUJOCO_GL`` as currently set (``egl``/``osmesa``/``glfw``).

    Raises:
        RuntimeError: on headless Linux with no ``MUJOCO_GL`` and no EGL library (nothing could
            render there), naming what to install.
    """
    headless_linux = sys.platform.startswith('linux') and not _display_set(os.environ)
    if not _backend() and headless_linux and not default_to_egl():
        raise RuntimeError(f'cannot render: no display, MUJOCO_GL is not set and {EGL_LIBRARY} does not load; {_NO_GL_HINT}')
    backend = _backend()
    if sys.platform.startswith('linux') and backend == 'egl':
        from mujoco.egl import GLContext
        prepare_mujoco_display(avoid=_Screens.variants())  # (a forked child: a display of its own)
        return GLContext
    if sys.platform.startswith('linux') and backend == 'osmesa':
        from mujoco.osmesa import GLContext
        return GLContext
    from mujoco.rendering.classic import gl_context

    return gl_context.GLContext


def current_renderer() -> str:
    """``GL_RENDERER`` of the context current on this thread (e.g. ``'llvmpipe (LLVM 15.0.6, 256 bits)'``)."""
    from OpenGL import GL

    name = GL.glGetString(_GL_RENDERER)
    return name.decode() if isinstance(name, bytes) else str(name)


class EglContext:
    """A GL context on the EGL display ``display`` (an initialized ``EGLDisplay``), with the
    interface of MuJoCo's ``mujoco.egl.GLContext``."""

    def __init__(self, display: Any) -> None:
        from mujoco.egl import EGL_ATTRIBUTES
        from mujoco.egl import egl_ext as EGL  # noqa: N812 - the library's name

        self.display = display
        self._pid = os.getpid()  # (a context inherited through fork is never touched: see .fork)
        configs = (EGL.EGLConfig * 1)()
        found = ctypes.c_long()
        EGL.eglReleaseThread()
        EGL.eglChooseConfig(display, EGL_ATTRIBUTES, configs, 1, found)
        if found.value < 1:
            raise RuntimeError('EGL found no framebuffer configuration on the second display')
        EGL.eglBindAPI(EGL.EGL_OPENGL_API)
        self._context = EGL.eglCreateContext(display, configs[0], EGL.EGL_NO_CONTEXT, None)
        if not self._context:
            raise RuntimeError('EGL could not make a context on the second display')

    def make_current(self) -> None:
        from mujoco.egl import egl_ext as EGL  # noqa: N812 - the library's name

        if not self._context or not _Screens.alive:
            raise RuntimeError('this GL context was freed')
        if self._pid != os.getpid():
            raise RuntimeError(f'this GL context was made in process {self._pid}, which this one was forked from: '
                               'its EGL display does not work here (make a new context)')
        if not EGL.eglMakeCurrent(self.display, EGL.EGL_NO_SURFACE, EGL.EGL_NO_SURFACE, self._context):
            raise RuntimeError('Failed to make the EGL context current.')

    def release(self) -> None:
        """Make no context current on this thread."""
        from mujoco.egl import egl_ext as EGL  # noqa: N812 - the library's name

        if _Screens.alive and self._pid == os.getpid():
            EGL.eglMakeCurrent(self.display, EGL.EGL_NO_SURFACE, EGL.EGL_NO_SURFACE, EGL.EGL_NO_CONTEXT)

    def free(self) -> None:
        """Destroy the context (idempotent)."""
        from mujoco.egl import egl_ext as EGL  # noqa: N812 - the library's name

        context, self._context = self._context, None
        if not context or not _Screens.alive or self._pid != os.getpid():
            return
        current = EGL.eglGetCurrentContext()
        if current and current.address == context.address:
            self.release()
        EGL.eglDestroyContext(self.display, context)

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:  # noqa: BLE001 - at interpreter exit EGL may be gone already; nothing left to free
            pass


@contextlib.contextmanager
def _rasterizer_threads(inline: bool) -> Iterator[bool]:
    """With ``inline`` (and no ``LP_NUM_THREADS`` of the user's), displays made inside rasterize on
    the threads that draw (``LP_NUM_THREADS=0``); yields whether they do. The variable is put back
    on leaving: only the displays made inside see it."""
    if not inline or RASTERIZER_THREADS_VARIABLE in os.environ:
        yield False
        return
    os.environ[RASTERIZER_THREADS_VARIABLE] = '0'
    try:
        yield True
    finally:
        os.environ.pop(RASTERIZER_THREADS_VARIABLE, None)


class _Screens:
    """Mesa's surfaceless display, made and checked on first use (see the module docstring)."""

    lock = threading.Lock()
    checked = False
    display: Any = None
    #: GL_RENDERER of MuJoCo's display (read from a context made for it and freed, on first use).
    default_renderer: str | None = None
    #: False once the second display is terminated at exit (its contexts then free nothing).
    alive = True
    #: Whether each display was made to rasterize on its drawing threads (``{'mujoco': ..., 'second': ...}``).
    inline: dict[str, bool] = {'mujoco': False, 'second': False}
    #: Which display the second one is (see :mod:`.fork`), while there is one.
    variant: tuple[str, bool] | None = None

    @classmethod
    def variants(cls) -> tuple[tuple[str, bool], ...]:
        """The displays this class holds (for :func:`.fork.prepare_mujoco_display` to pick another)."""
        return (cls.variant,) if cls.variant is not None and cls.display is not None else ()

    @classmethod
    def after_fork_in_child(cls) -> None:
        """Forget the parent's second display (see :mod:`.fork`): a forked child makes its own."""
        cls.lock = threading.Lock()
        cls.checked, cls.display, cls.variant, cls.default_renderer = False, None, None, None
        cls.inline = {'mujoco': False, 'second': False}

    @classmethod
    def second_display(cls, width: int, height: int, inline: bool = False) -> Any:
        """The second display, or ``None`` where there is none like MuJoCo's; made on the first
        call, rasterizing on its drawing threads if ``inline`` (then MuJoCo's display too, if
        this call makes it)."""
        with cls.lock:
            if not cls.checked:
                cls.checked = True
                cls.display = cls._make(width, height, inline)
            return cls.display

    @classmethod
    def _make(cls, width: int, height: int, inline: bool) -> Any:
        if _backend() != 'egl' or not sys.platform.startswith('linux'):
            return None
        display = None
        try:
            import mujoco.egl as mujoco_egl
            from mujoco.egl import egl_ext as EGL  # noqa: N812 - the library's name

            # Both displays rasterize on their drawing threads or neither: one worker rasterizing
            # on its thread beside one with Mesa's threads was slower than both threaded (511-528
            # against 555-572 frames/s). So not where MuJoCo's display exists already (made by
            # another renderer of this process). The second display is made first: MuJoCo's may
            # rasterize on its drawing threads only beside it (two workers rasterizing on one
            # display would wait for each other).
            inline = inline and mujoco_egl.EGL_DISPLAY is None
            second_renderer = None
            with _rasterizer_threads(inline) as second_inline:
                made = fresh_display((SURFACELESS,))  # (in a forked child, one its parents never used)
                if made is not None:
                    display, cls.variant = made
                    second = EglContext(display)
                    try:
                        second.make_current()
                        second_renderer = current_renderer()
                    finally:
                        second.free()
            with _rasterizer_threads(inline and second_renderer is not None) as made_inline:
                probe = gl_context_class()(int(width), int(height))  # MuJoCo's display (initialized by its first context)
            try:
                probe.make_current()
                cls.default_renderer = current_renderer()
            finally:
                probe.free()
            mesa = b'Mesa' in (EGL.eglQueryString(mujoco_egl.EGL_DISPLAY, EGL.EGL_VENDOR) or b'')
        except Exception:  # noqa: BLE001 - no second display: every screen is MuJoCo's
            return None
        if second_renderer is None or not mesa or second_renderer != cls.default_renderer:
            if display and second_renderer is not None:
                EGL.eglTerminate(display)
            cls.variant = None
            return None
        cls.inline = {'mujoco': made_inline, 'second': second_inline}
        atexit.register(_Screens.terminate)
        return display

    @classmethod
    def terminate(cls) -> None:
        from mujoco.egl import egl_ext as EGL  # noqa: N812 - the library's name

        with cls.lock:
            if cls.display is not None and cls.alive:
                cls.alive = False
                EGL.eglTerminate(cls.display)


if hasattr(os, 'register_at_fork'):  # (not on Windows, which does not fork)
    os.register_at_fork(after_in_child=_Screens.after_fork_in_child)


def prepare_screens(width: int, height: int, workers: int) -> dict[str, bool]:
    """Make the displays ``workers`` render workers will draw on, before they start (call it on the
    thread that starts them, with no other thread drawing): with exactly two workers, one per
    display, the displays this call makes rasterize on the drawing threads (see the module
    docstring). Returns which displays rasterize on their drawing threads."""
    if workers >= 2:
        _Screens.second_display(width, height, inline=workers == 2)
    return rasterizing_inline()


def rasterizing_inline() -> dict[str, bool]:
    """Which displays this process made to rasterize on their drawing threads:
    ``{'mujoco': ..., 'second': ...}`` (MuJoCo's display and the second one; see the module docstring)."""
    return dict(_Screens.inline)


def new_gl_context(width: int, height: int, screen: int = 0) -> Any:
    """A new GL context, current on the calling thread, on ``screen`` (see the module docstring):
    even screens are MuJoCo's display, odd ones the second display where there is one."""
    if screen % 2:
        display = _Screens.second_display(width, height)
        if display is not None:
            context = EglContext(display)
            context.make_current()
            return context
    context = gl_context_class()(int(width), int(height))
    context.make_current()
    if type(context).__module__ == 'mujoco.glfw':
        _check_glfw_context(context)
    return context


def _check_glfw_context(context: Any) -> None:
    """Raise where GLFW made no window, so no GL context is current: MuJoCo would build its render
    context on none and never return (GLFW itself only warns)."""
    import glfw

    if glfw.get_current_context():
        return
    context.free()
    display = os.environ.get('DISPLAY') or os.environ.get('WAYLAND_DISPLAY')
    why = f'none on display {display!r}' if display else 'no display is set: DISPLAY and WAYLAND_DISPLAY are empty'
    raise RuntimeError(f'cannot render: MUJOCO_GL={_backend()!r} draws through a GLFW window and GLFW could not '
                       f'open one ({why}); on a machine without a display leave MUJOCO_GL unset (EGL is then the '
                       f'default) or set MUJOCO_GL=egl or osmesa; {_NO_GL_HINT}')


def release_current(context: Any) -> None:
    """Make no context current on this thread, ``context`` being the one that is (so another
    thread may take it)."""
    if isinstance(context, EglContext):
        context.release()
        return
    try:
        from mujoco.egl import EGL_DISPLAY
        from mujoco.egl import egl_ext as EGL  # noqa: N812 - the library's name

        if EGL_DISPLAY is not None:
            EGL.eglMakeCurrent(EGL_DISPLAY, EGL.EGL_NO_SURFACE, EGL.EGL_NO_SURFACE, EGL.EGL_NO_CONTEXT)
    except ImportError:  # not EGL: the other backends allow a context on one thread at a time anyway
        pass


__all__ = ['EGL_LIBRARY', 'RASTERIZER_THREADS_VARIABLE', 'EglContext', 'current_renderer', 'default_to_egl', 'egl_loads',
           'gl_context_class', 'new_gl_context', 'prepare_screens', 'rasterizing_inline', 'release_current']
