"""Optional compiled kernels for the math that runs every step, with numpy as the reference.

A step of 64 robots spends most of its Python time in numpy calls on 64-row arrays, where each
call costs about a microsecond whatever its size. A loop compiled by numba does the same math
in one call. So the hot per-step helpers (base steering, the holonomic base) have a compiled
twin. It is used when numba imports, and the numpy version otherwise.

- **Same results.** ``tests/test_jit.py`` checks that both agree to rounding.
- **Turning it off.** Set ``INTERNUTOPIA_JIT=0`` before the first step to use numpy only; within
  one process, :func:`numpy_only` does the same for the envs made inside it (tests compare both).
- **First-ever use.** Compiling costs about a second per kernel (the IK's about ten). Kernels are
  compiled when a robot or controller binds (:meth:`Kernel.warm`), ahead of the first step, and a
  compile that takes longer than :data:`SLOW_COMPILE_S` logs a line (``internutopia`` logger,
  warning level) saying so while it runs. The machine code is cached next to the source, or in
  numba's user cache when that folder is read-only, so later processes load it in milliseconds.

>>> import numpy as np
>>> def twice(values, out):
...     for i in range(len(values)):
...         out[i] = 2.0 * values[i]
>>> kernel = Kernel(twice)
>>> out = np.zeros(3)
>>> kernel(np.arange(3.0), out) if kernel.available else twice(np.arange(3.0), out)
>>> out.tolist()
[0.0, 2.0, 4.0]
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import Any, overload

from internutopia.core.util.log import log

#: ``INTERNUTOPIA_JIT=0`` (or ``false``/``off``) keeps every step on numpy.
ENV_SWITCH = 'INTERNUTOPIA_JIT'


#: Seconds a kernel's first call (a compile, or a load from the cache) may take before a log line says so.
SLOW_COMPILE_S = 1.0


def enabled() -> bool:
    """Whether compiled kernels may be used (``INTERNUTOPIA_JIT`` is not off, no :func:`numpy_only`
    block is open, numba imports)."""
    if _NUMPY_ONLY or not _switched_on():
        return False
    return _numba() is not None


def _switched_on() -> bool:
    return os.environ.get(ENV_SWITCH, '1').strip().lower() not in ('0', 'false', 'off', 'no')


def _numba() -> Any:
    global _NUMBA
    if _NUMBA is _UNSET:
        try:
            import numba
        except Exception:  # not installed, or built for another numpy: numpy serves instead
            _NUMBA = None
        else:
            _NUMBA = numba
    return _NUMBA


_UNSET = object()
_COMPILE_LOCK = threading.Lock()
_NUMBA: Any = _UNSET
_NUMPY_ONLY = False
#: Every kernel defined so far (tests check that a step compiles nothing new).
KERNELS: list[Kernel] = []


def _cache_keyed_on(function: Callable[..., Any], files: list[str]) -> Any:
    """A numba disk cache for ``function`` whose entries are keyed on the contents of ``files``
    besides what numba keys them on (the function's own file, its bytecode, the types, the
    machine), or ``None`` where numba's cache classes are not as expected (then the kernel is
    compiled in each process, never stale)."""
    import hashlib

    digest = hashlib.sha256()
    for path in files:
        try:
            with open(path, 'rb') as source:
                digest.update(path.encode() + b'\0' + source.read())
        except OSError:
            return None  # (a source that cannot be read: nothing to key on)
    extra = digest.hexdigest()
    try:
        from numba.core.caching import FunctionCache

        class _Keyed(FunctionCache):
            def _index_key(self, sig: Any, codegen: Any) -> Any:
                return (*super()._index_key(sig, codegen), extra)

        return _Keyed(function)
    except Exception:  # (numba's internals moved, or no cache location for this source)
        return None


@contextlib.contextmanager
def numpy_only() -> Iterator[None]:
    """Within the block every :class:`Kernel` reports itself unavailable, so envs built (and
    stepped) inside it take the numpy path, as ``INTERNUTOPIA_JIT=0`` does for a whole process.
    Objects bound before the block keep the kernels they resolved then."""
    global _NUMPY_ONLY
    before = _NUMPY_ONLY
    _NUMPY_ONLY = True
    try:
        yield
    finally:
        _NUMPY_ONLY = before


def _cache_misses(dispatcher: Any) -> int:
    """How many versions ``dispatcher`` compiled rather than loaded (numba's compile statistics)."""
    stats = getattr(dispatcher, 'stats', None)
    return int(sum(stats.cache_misses.values())) if stats is not None else 0


class Kernel:
    """A scalar-loop function, compiled with numba on first use (``cache=True``).

    Callers check :attr:`available` and otherwise run their numpy version, so numba stays
    optional. Compilation is lazy: importing a module that defines kernels costs nothing.
    Functions without a source file (defined interactively) compile without the disk cache.

    ``uses``: other kernels ``function`` calls, by the name it calls them by. They are compiled
    into it (one pass, one call from Python). numba's disk cache checks only the source file of
    the function it compiles, so a kernel using kernels of other files keys its cache entries on
    their source too (:func:`_cache_keyed_on`): a change to any of them compiles it again rather
    than running their old code.
    """

    def __init__(self, function: Callable[..., Any], uses: dict[str, Kernel] | None = None) -> None:
        self.function = function
        self.uses = dict(uses or {})
        self._compiled: Callable[..., Any] | None = None
        self._available: bool | None = None
        KERNELS.append(self)

    def _function_to_compile(self) -> Callable[..., Any] | None:
        """``function`` with each kernel of ``uses`` in its globals as that kernel's compiled
        function (what numba calls inside it); ``None`` if one of them is unavailable."""
        if not self.uses:
            return self.function
        compiled = {name: used._compiled for name, used in self.uses.items() if used.available}
        if len(compiled) < len(self.uses):
            return None
        function = self.function
        made = types.FunctionType(function.__code__, {**function.__globals__, **compiled}, function.__name__,
                                  function.__defaults__, function.__closure__)
        made.__qualname__ = function.__qualname__
        return made

    def source_files(self) -> list[str]:
        """The source files of this kernel's function and of every kernel it uses, at any depth (sorted)."""
        files = {self.function.__code__.co_filename}
        for used in self.uses.values():
            files.update(used.source_files())
        return sorted(files)

    def _compile(self, function: Callable[..., Any]) -> Any:
        """numba's compiled ``function``, cached on disk where it can be (see the class docstring)."""
        numba = _numba()
        own = self.function.__code__.co_filename
        others = [path for path in self.source_files() if path != own]
        if not others:
            try:
                return numba.njit(cache=True, nogil=True)(function)
            except RuntimeError:  # no cache location for this source (e.g. defined interactively)
                return numba.njit(nogil=True)(function)
        compiled = numba.njit(nogil=True)(function)
        cache = _cache_keyed_on(function, others)
        if cache is not None:
            compiled._cache = cache  # (what Dispatcher.enable_caching sets, with the extra key)
        return compiled

    @property
    def signatures(self) -> list:
        """The argument types compiled (or loaded from the cache) so far in this process."""
        compiled: Any = self._compiled  # a numba dispatcher
        return list(compiled.signatures) if compiled is not None else []

    @property
    def available(self) -> bool:
        """True when the compiled kernel can run here (decided once per process, thread-safe:
        render threads may ask at the same time; false inside :func:`numpy_only`)."""
        if _NUMPY_ONLY:
            return False
        if self._available is None:
            # (the kernels it uses first, outside the lock: each takes it)
            function = self._function_to_compile() if _switched_on() and _numba() is not None else None
            with _COMPILE_LOCK:
                if self._available is None:
                    compiled = self._compile(function) if function is not None else None
                    self._compiled = compiled
                    self._available = compiled is not None  # set last: other threads read it unlocked
        return self._available

    def warm(self, *args: Any) -> None:
        """Compile (or load from the cache) the version for these argument types now, if numba is
        available, so the cost falls in start-up rather than in the first step. Pass empty
        arrays with the layouts the step will use."""
        if not self.available:
            return
        compiled = self._compiled
        assert compiled is not None  # available: compiled
        # A first call per argument types compiles (seconds) or loads the cache (milliseconds): a
        # compile says so while it runs, so a first start never pauses silently.
        name = self.function.__name__
        started = time.perf_counter()
        notice = threading.Timer(SLOW_COMPILE_S, log.warning, (
            'preparing kernel %s (compiled on a first run, then loaded from the cache) ...', name))
        notice.daemon = True
        notice.start()
        misses = _cache_misses(compiled)
        try:
            compiled(*args)
        finally:
            notice.cancel()
        elapsed = time.perf_counter() - started
        if elapsed > SLOW_COMPILE_S or _cache_misses(compiled) > misses:
            compiled_now = _cache_misses(compiled) > misses
            log.warning('%s kernel %s in %.1f s', 'compiled (and cached for later runs)' if compiled_now else 'loaded', name, elapsed)

    @overload
    def compiled_or(self, fallback: Callable[..., Any]) -> Callable[..., Any]: ...
    @overload
    def compiled_or(self, fallback: None) -> Callable[..., Any] | None: ...
    def compiled_or(self, fallback: Callable[..., Any] | None) -> Callable[..., Any] | None:
        """The compiled function when :attr:`available`, else ``fallback``: callers on the step's hot
        path resolve it once (when they bind) and call it directly, without this object's call and
        check per step."""
        return self._compiled if self.available else fallback

    def __call__(self, *args: Any) -> Any:
        compiled = self._compiled
        if compiled is None:
            if not self.available:
                raise RuntimeError(f'kernel {self.function.__name__} needs numba, which is unavailable or turned off '
                                   f'({ENV_SWITCH}); check Kernel.available and use the numpy version')
            compiled = self._compiled
            assert compiled is not None  # available: compiled
        return compiled(*args)
