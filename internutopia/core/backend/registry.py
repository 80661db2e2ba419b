"""The backend registry: :class:`Backend` records by name, loaded on first use.

>>> get_backend('mujoco').name
'mujoco'
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from internutopia.core.backend.interface import World
from internutopia.core.config import SimConfig, register_backend_name


@dataclass(frozen=True)
class Backend:
    """A physics backend: how to build its world and draw it.

    Attributes:
        name: the ``SimConfig.backend`` value that picks it.
        create_world: ``(sim, env_num, env_offset_size) -> World``.
        render_overview: ``(world, width, height) -> uint8 (height, width, 3)``: every slot, from above.
        release: ``(world) -> None``: free what rendering holds for ``world`` (called on close).
        passive_viewer: ``(world) -> viewer`` with ``sync()`` and ``close()``, or ``None`` if the
            backend has no window.
        render_envs: ``(world, slots, width, height) -> [uint8 (height, width, 3)]``: each slot
            alone, one image per slot (a Gymnasium vector env's ``render()``); ``None`` if the
            backend cannot.
    """

    name: str
    create_world: Callable[[SimConfig, int, float], World]
    render_overview: Callable[[Any, int, int], np.ndarray]
    release: Callable[[Any], None]
    passive_viewer: Callable[[Any], Any] | None = None
    render_envs: Callable[[Any, Sequence[int], int, int], list[np.ndarray]] | None = None


_loaders: dict[str, Callable[[], Backend]] = {}
_backends: dict[str, Backend] = {}
_lock = threading.Lock()


def register_backend(name: str, loader: Callable[[], Backend]) -> None:
    """Make ``SimConfig(backend=name)`` pick the backend ``loader()`` returns (called on first use)."""
    with _lock:
        _loaders[name] = loader
        _backends.pop(name, None)
    register_backend_name(name)


def backend_names() -> list[str]:
    """Names of the registered backends, sorted."""
    return sorted(_loaders)


def get_backend(name: str) -> Backend:
    """The backend registered as ``name``; ``ValueError`` naming the registered ones otherwise."""
    backend = _backends.get(name)
    if backend is not None:
        return backend
    with _lock:
        loader = _loaders.get(name)
        if loader is None:
            raise ValueError(f'unknown physics backend {name!r}; registered backends: {sorted(_loaders)}')
        backend = _backends[name] = loader()
    return backend


def _mujoco() -> Backend:
    # Imported on first use: the MuJoCo modules (and their GL set-up) load only when a world is built.
    from internutopia.core.backend.mujoco import render
    from internutopia.core.backend.mujoco.world import MujocoWorld

    def passive_viewer(world: Any) -> Any:
        import mujoco.viewer  # noqa: F401  (fails here, not mid-run, where there is no GUI stack)

        return render.PassiveViewer(world)

    return Backend('mujoco', MujocoWorld, render.render_overview, render.release, passive_viewer, render.render_envs)


def _warp() -> Backend:
    # MuJoCo Warp (the ``warp`` extra) is imported when the first world is built: the name is
    # known everywhere, and a machine without the extra gets an error naming it then.
    from internutopia.core.backend.warp.engine import load_engine

    load_engine()  # a clear error naming the extra where it is missing
    from internutopia.core.backend.mujoco import render
    from internutopia.core.backend.warp.world import WarpWorld

    return Backend('warp', WarpWorld, render.render_overview, render.release, None, render.render_envs)


register_backend('mujoco', _mujoco)
register_backend('warp', _warp)


__all__ = ['Backend', 'backend_names', 'get_backend', 'register_backend']
