"""Helpers of the tests that compare the compiled kernels with their numpy twins."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from internutopia.core.util import jit

T = TypeVar('T')


def on_path(compiled: bool, run: Callable[[], T]) -> T:
    """``run()`` with the compiled kernels, or with numpy only (envs made inside :func:`jit.numpy_only`)."""
    if compiled:
        return run()
    with jit.numpy_only():
        return run()
