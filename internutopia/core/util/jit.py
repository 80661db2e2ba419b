"""Optional compiled kernels for the math that runs every step, with numpy as the reference.

A step of 64 robots spends most of its Python time in numpy calls on 64-row arrays, where each
call costs about a microsecond whatever its size. A loop compiled by numba does the same math
in one call. So the hot per-step helpers (base steering, the holonomic base) have a compiled
twin. It is used when numba imports, and the numpy version otherwise.

- **Same results.** ``tests/test_jit.py`` checks that both agree to rounding.
- **Turning it off.** Set ``INTERNUTOPIA_JIT=0`` before the first step to use numpy only.
- **First-ever use.** Compiling costs about a second per kernel. The machine code is cached
  next to the source, or in numba's user cache when that folder is read-only, so later
  processes load it in milliseconds.

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

import os
import threading
from collections.abc import Callable
from typing import Any, overload

#: ``INTERNUTOPIA_JIT=0`` (or ``false``/``off``) keeps every step on numpy.
ENV_SWITCH = 'INTERNUTOPIA_JIT'


def enabled() -> bool:
    """Whether compiled kernels may be used (``INTERNUTOPIA_JIT`` is not off, numba imports)."""
    if os.environ.get(ENV_SWITCH, '1').strip().lower() in ('0', 'false', 'off', 'no'):
        return False
    return _numba() is not None


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


class Kernel:
    """A scalar-loop function, compiled with numba on first use (``cache=True``).

    Callers check :attr:`available` and otherwise run their numpy version, so numba stays
    optional. Compilation is lazy: importing a module that defines kernels costs nothing.
    Functions without a source file (defined interactively) compile without the disk cache.
    """

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self._compiled: Callable[..., Any] | None = None
        self._available: bool | None = None

    @property
    def available(self) -> bool:
        """True when the compiled kernel can run here (decided once per process, thread-safe:
        render threads may ask at the same time)."""
        if self._available is None:
            with _COMPILE_LOCK:
                if self._available is None:
                    compiled = None
                    if enabled():
                        try:
                            compiled = _numba().njit(cache=True, nogil=True)(self.function)
                        except RuntimeError:  # no cache location for this source (e.g. defined interactively)
                            compiled = _numba().njit(nogil=True)(self.function)
                    self._compiled = compiled
                    self._available = compiled is not None  # set last: other threads read it unlocked
        return self._available

    def warm(self, *args: Any) -> None:
        """Compile (or load from the cache) the version for these argument types now, if numba is
        available, so the cost falls in start-up rather than in the first step. Pass empty
        arrays with the layouts the step will use."""
        if self.available:
            assert self._compiled is not None  # available: compiled
            self._compiled(*args)

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
