"""EGL after ``os.fork``: a child process renders on EGL displays of its own.

A process forked from one that had rendered (``multiprocessing`` with the ``fork`` start method,
Stable-Baselines3's ``SubprocVecEnv`` on Linux, ``os.fork``) inherits Mesa's EGL displays, but not
the threads behind them (the rasterizer's, Mesa's queues). Everything in the child that waits for
those threads waits forever: the first frame a new env's camera draws (``mjr_makeContext``), and at
exit MuJoCo's own ``eglTerminate`` of its display, so the child hung even when it never rendered.

Mesa keeps one display per platform, native display and attribute list, so the child cannot get
the inherited display made again; but a display asked for with an *empty* attribute list
(``[EGL_NONE]``) is a display of its own, distinct from the one asked for with none (``NULL``).
This module records which displays a process initialized; in a forked child those count as
spoiled and are never touched again (MuJoCo's ``mujoco.egl.EGL_DISPLAY`` is cleared, so its exit
handler skips it), and the child's contexts are made on the first display not spoiled: the
device platform with an empty attribute list, then Mesa's surfaceless platform (``NULL``, then
empty). Four displays in all, two of them per process that renders on two threads or more
(:mod:`.gl`'s second display): past them, rendering raises a ``RuntimeError`` saying so.

GL objects a child inherited (a parent's env's render contexts) belong to the spoiled displays:
they are kept, untouched, until the child ends (:func:`~internutopia.core.util.inherited.keep_forever`;
freeing one would wait on the missing threads too), and the renders of an inherited env make new contexts.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from typing import Any

#: ``eglGetPlatformDisplayEXT``'s platform of Mesa's surfaceless displays (``EGL_MESA_platform_surfaceless``).
PLATFORM_SURFACELESS = 0x31DD
#: The displays a process may use, in the order a forked child tries them: ``(platform, empty)``,
#: ``empty`` telling an empty attribute list from none. ``('device', False)`` is MuJoCo's own.
DEVICE, SURFACELESS = 'device', 'surfaceless'
VARIANTS: tuple[tuple[str, bool], ...] = ((DEVICE, False), (SURFACELESS, False), (DEVICE, True), (SURFACELESS, True))
_CHILD_ORDER: tuple[tuple[str, bool], ...] = ((DEVICE, True), (SURFACELESS, False), (SURFACELESS, True))

FORKED_HINT = ("start the processes that render with the 'spawn' or 'forkserver' start method "
               "(multiprocessing.get_context('forkserver'); SubprocVecEnv(..., start_method='forkserver'))")


class _Displays:
    lock = threading.Lock()
    #: Displays a process this one was forked from had initialized (never used here).
    spoiled: set[tuple[str, bool]] = set()
    #: Displays this process initialized through :func:`fresh_display`.
    here: set[tuple[str, bool]] = set()
    #: Which display ``mujoco.egl.EGL_DISPLAY`` is (MuJoCo's own, unless this module set it).
    mujoco_variant: tuple[str, bool] = (DEVICE, False)


def fresh_display(platforms: tuple[str, ...] = (DEVICE, SURFACELESS), avoid: tuple[tuple[str, bool], ...] = ()) -> tuple[Any, tuple[str, bool]] | None:
    """An initialized EGL display of one of ``platforms`` that no process this one was forked from
    initialized, and not one of ``avoid``: ``(display, variant)``, or ``None`` when none is left.
    In a process that was never forked from a renderer, the displays without attributes come first."""
    from mujoco.egl import egl_ext as EGL  # noqa: N812 - the library's name

    order = _CHILD_ORDER if _Displays.spoiled else VARIANTS
    with _Displays.lock:
        for variant in order:
            platform, empty = variant
            if platform not in platforms or variant in _Displays.spoiled or variant in avoid:
                continue
            attributes = (EGL.EGLint * 1)(EGL.EGL_NONE) if empty else None
            display = None
            try:
                if platform == SURFACELESS:
                    display = EGL.eglGetPlatformDisplayEXT(PLATFORM_SURFACELESS, None, attributes)
                else:
                    device = _device()
                    if device is not None:
                        display = EGL.eglGetPlatformDisplayEXT(EGL.EGL_PLATFORM_DEVICE_EXT, device, attributes)
                if display and EGL.eglInitialize(display, None, None):
                    _Displays.here.add(variant)
                    return display, variant
            except Exception:  # noqa: BLE001 - this platform is not there: try the next
                continue
    return None


def _device() -> Any:
    """The EGL device MuJoCo renders on (``MUJOCO_EGL_DEVICE_ID``, else the first)."""
    from mujoco.egl import egl_ext as EGL  # noqa: N812 - the library's name

    devices = EGL.eglQueryDevicesEXT()
    index = int(os.environ.get('MUJOCO_EGL_DEVICE_ID', 0) or 0)
    return devices[index] if 0 <= index < len(devices) else None


def prepare_mujoco_display(avoid: tuple[tuple[str, bool], ...] = ()) -> None:
    """In a process forked from one that had rendered, give MuJoCo's EGL backend a display of this
    process's own before it makes a context (MuJoCo would take the inherited one). Nothing elsewhere.

    Raises:
        RuntimeError: every display this process could use was initialized by a process it was
            forked from.
    """
    egl = sys.modules.get('mujoco.egl')
    if not _Displays.spoiled or egl is None or getattr(egl, 'EGL_DISPLAY', None) is not None:
        return
    made = fresh_display(avoid=avoid) or fresh_display()  # (sharing the second display, if that is all there is)
    if made is None:
        raise RuntimeError(f'cannot render in process {os.getpid()}: it was forked (os.fork) from processes that had '
                           f'rendered, and every EGL display it could use is theirs, unusable here; {FORKED_HINT}')
    display, _Displays.mujoco_variant = made
    setattr(egl, 'EGL_DISPLAY', display)  # noqa: B010 - (the module's global that MuJoCo's contexts use)
    # (MuJoCo's exit handler, inherited, terminates this display: it is this process's own)


def _libc_exit_functions() -> tuple[Any, Any] | None:
    """glibc's ``on_exit`` and ``_exit``, looked up now (a forked child's hook should not load anything)."""
    try:
        libc = ctypes.CDLL(None)
        on_exit, end = libc.on_exit, libc._exit
    except (OSError, AttributeError):  # (not glibc: musl has no on_exit)
        return None
    on_exit.argtypes, on_exit.restype = [ctypes.c_void_p, ctypes.c_void_p], ctypes.c_int
    return on_exit, ctypes.cast(end, ctypes.c_void_p)


_EXIT_FUNCTIONS = _libc_exit_functions() if sys.platform.startswith('linux') else None


def _skip_inherited_exit_handlers() -> None:
    """End this forked child, once Python has finished, before the C exit handlers its parent
    registered run: Mesa's joins the threads of the parent's shader-cache queues, which are not
    in this process (the child crashed there, ``SIGSEGV``, or hung). ``on_exit`` hands the exit
    status to ``_exit``; handlers registered after this one (in this child) still run first. A
    ``multiprocessing`` child ends with ``os._exit`` anyway, skipping them all."""
    if _EXIT_FUNCTIONS is not None:
        on_exit, end = _EXIT_FUNCTIONS
        on_exit(end, None)


def _after_fork_in_child() -> None:
    egl = sys.modules.get('mujoco.egl')
    if egl is not None and getattr(egl, 'EGL_DISPLAY', None) is not None:
        _Displays.spoiled.add(_Displays.mujoco_variant)
        setattr(egl, 'EGL_DISPLAY', None)  # noqa: B010 - (its exit handler and inherited contexts then leave it alone)
    if _Displays.here:
        _Displays.spoiled |= _Displays.here
    _Displays.here = set()
    if _Displays.spoiled:
        _skip_inherited_exit_handlers()
    _Displays.mujoco_variant = (DEVICE, False)
    _Displays.lock = threading.Lock()  # (a parent's thread may have held it at the fork)


if hasattr(os, 'register_at_fork'):  # (not on Windows, which does not fork)
    os.register_at_fork(after_in_child=_after_fork_in_child)


__all__ = ['DEVICE', 'FORKED_HINT', 'PLATFORM_SURFACELESS', 'SURFACELESS', 'VARIANTS', 'fresh_display',
           'prepare_mujoco_display']
