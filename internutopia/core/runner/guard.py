"""One call at a time, and Ctrl-C only between calls: what keeps an env's books straight.

A step or a reset changes many things that must change together (a slot's status and its
episode's record, the queue and the slots that took its episodes). :class:`CallGuard` makes
each such call whole:

- **one thread at a time**: a second thread entering ``step`` or ``reset`` of the same env while
  a call runs gets a ``RuntimeError`` at once (instead of two steps interleaving their records);
- **Ctrl-C between calls**: a SIGINT that arrives during a call is held until the call returns,
  then raised as ``KeyboardInterrupt``; the call's work is complete and recorded, so the caller
  can go on stepping with nothing lost or doubled. Outside calls Ctrl-C acts at once, as always.

The SIGINT handler is installed by the first guard made in the main thread while Python's own
handler is in place, and again by a main-thread call that finds Python's own handler back (a
notebook kernel or a library may put it back; checking costs a dict read, no system call); it
hands every signal that arrives outside a guarded call to Python's handler. A handler of the
user's own (anything but Python's) is left alone: Ctrl-C is then theirs to handle.

Async safety: a call marks itself as holding Ctrl-C (``depth``) *before* it takes the lock and
lets go of it only *after* the lock is released, so a KeyboardInterrupt can only land where
nothing has changed yet (before the mark: the call never started) or where everything is done
(after: the call completed). Between two bytecodes of the entry or exit the signal is held and
raised once the exit has run; the lock and the running call's name are never left half-set.

>>> guard = CallGuard('env')
>>> with guard.enter('step'):
...     pass
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType

__all__ = ['CallGuard', 'held_interrupts']

try:  # the C function: signal.getsignal wraps it in an enum conversion that costs ~7 us a call
    from _signal import getsignal as _getsignal  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - another Python implementation
    _getsignal = signal.getsignal
_SIGINT = int(signal.SIGINT)
_DEFAULT_INT_HANDLER = signal.default_int_handler
_get_ident = threading.get_ident
#: The main thread's ident, read on every call (a forked child's main thread is the one that forked).
_main_ident = threading.main_thread().ident


def _forked() -> None:
    global _main_ident
    _main_ident = threading.main_thread().ident


if hasattr(os, 'register_at_fork'):  # (not on Windows, which does not fork)
    os.register_at_fork(after_in_child=_forked)


class _Deferral:
    """The process's SIGINT handler while any guard exists: held during guarded calls."""

    def __init__(self) -> None:
        self.depth = 0  # guarded calls running in the main thread
        self.pending = False
        self.installed = False

    def install(self) -> None:
        """Take over SIGINT from Python's own handler (main thread only; anyone else's is kept)."""
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return  # ours already, or the user's own handler (or none): leave Ctrl-C to it
        signal.signal(signal.SIGINT, self.handle)
        self.installed = True

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.depth:
            self.pending = True  # raised when the guarded call returns
            return
        self.pending = False  # (one held earlier is this one: raise it once)
        signal.default_int_handler(signum, frame)


_DEFERRAL = _Deferral()


class CallGuard:
    """Makes the calls of one env exclusive and whole (see the module docstring).

    ``with guard.enter('step'): ...`` runs one call; a plain object with ``__enter__`` and
    ``__exit__`` (not a generator), since it wraps every step.

    Args:
        owner: how errors name the object (``'this Env'``).
    """

    def __init__(self, owner: str = 'this Env') -> None:
        self.owner = owner
        self._lock = threading.Lock()
        self._what = ''
        self._running: str | None = None
        self._thread_ident: int | None = None  # of the thread inside a call (its name is read only for an error)
        self._main = False
        _DEFERRAL.install()

    def enter(self, what: str) -> CallGuard:
        """The guard, for a ``with`` block running one ``what`` call (``'step'``, ``'reset'``) of
        the owner: alone, and uninterrupted by Ctrl-C.

        Raises (on entering the block):
            RuntimeError: another thread is inside a call of the same owner.
        """
        self._what = what
        return self

    def __enter__(self) -> None:
        ident = _get_ident()  # (the thread object is looked up only for an error's message)
        main = ident == _main_ident
        if main:
            # Hold Ctrl-C first: from the next bytecode on, a SIGINT waits for __exit__.
            _DEFERRAL.depth += 1
            if _getsignal(_SIGINT) is _DEFAULT_INT_HANDLER:
                _DEFERRAL.install()  # Python's handler came back: hold Ctrl-C again
        if not self._lock.acquire(False):
            if main:
                self._let_go()  # (a Ctrl-C held meanwhile is raised here, instead of the error below)
            raise RuntimeError(f'{self.owner} is in {self._running}() in thread {self._thread_name()!r}; {self._what}() from '
                               f'thread {threading.current_thread().name!r} cannot run beside it. An env is not '
                               'thread-safe: call it from one thread, or give each thread its own env')
        self._running, self._thread_ident, self._main = self._what, ident, main

    def _thread_name(self) -> str | None:
        """The name of the thread inside a call (for the error of a second one)."""
        ident = self._thread_ident
        if ident is None:
            return None
        return next((thread.name for thread in threading.enumerate() if thread.ident == ident), f'<thread {ident}>')

    def __exit__(self, *exc: object) -> None:
        main = self._main
        self._running = self._thread_ident = None
        self._lock.release()
        if main:  # (_let_go, inlined: it runs on every step)
            deferral = _DEFERRAL
            deferral.depth -= 1
            if deferral.pending and not deferral.depth:
                deferral.pending = False
                raise KeyboardInterrupt

    @staticmethod
    def _let_go() -> None:
        """End one held stretch; raise the Ctrl-C that arrived during it once none is held."""
        deferral = _DEFERRAL
        deferral.depth -= 1
        if deferral.pending and not deferral.depth:
            deferral.pending = False
            raise KeyboardInterrupt


class held_interrupts:  # noqa: N801 - used as a function: ``with held_interrupts(): ...``
    """Hold Ctrl-C for a block of the main thread (no lock): a SIGINT during it is raised when it
    ends, so the block's changes happen together (``close`` uses it, and ``reset`` and an observed
    ``step`` around their guarded call and observers). Nested in it, a guarded call's held Ctrl-C
    waits for the block's end. Elsewhere it does nothing.

    >>> with held_interrupts():
    ...     pass
    """

    __slots__ = ('_main',)

    def __enter__(self) -> None:
        self._main = _get_ident() == _main_ident  # (as CallGuard tells it: every Gymnasium step enters this)
        if self._main:
            _DEFERRAL.depth += 1
            if _getsignal(_SIGINT) is _DEFAULT_INT_HANDLER:
                _DEFERRAL.install()

    def __exit__(self, *exc: object) -> None:
        if self._main:
            CallGuard._let_go()
