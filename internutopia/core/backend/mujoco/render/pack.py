"""Per-pack rendering state (the clock that says when cameras refresh is :mod:`internutopia.core.backend.clock`).

Every pack of the world (the slots sharing one structure, one compiled one-slot model) gets a
:class:`PackRender` on first use: its render models (private copies of the model, see
:mod:`.scene`), one :class:`~.cameras.CameraRenderer` per camera image size and multisampling, and
the overview's contexts. It lives as long as the pack, or until :func:`release`.
"""

from __future__ import annotations

import os
import weakref
from typing import Any

from internutopia.core.backend.clock import RenderClock
from internutopia.core.backend.mujoco.render.cameras import CameraRenderer
from internutopia.core.backend.mujoco.render.context import RenderContext
from internutopia.core.backend.mujoco.render.scene import Purpose, RenderModel
from internutopia.core.backend.mujoco.render.sections import free_outside_sections
from internutopia.core.util.inherited import keep_forever


class PackRender:
    """Rendering state of one pack of the world (see the module docstring)."""

    def __init__(self, pack: Any) -> None:
        self._pack = weakref.ref(pack)
        self._models: dict[tuple, RenderModel] = {}
        self._cameras: dict[tuple[int, int, int, bool], CameraRenderer] = {}
        self._overview: dict[tuple[int, int, bool, float], RenderContext] = {}
        self._pid = os.getpid()

    def _current(self) -> Any:
        pack = self._pack()
        if pack is None:
            raise RuntimeError('nothing to render: this pack of the world is gone')
        return pack

    def render_model(self, purpose: Purpose, lod: bool, cell_half: float = 0.0) -> RenderModel:
        """The pack's render model for ``purpose`` (made on first use)."""
        key = (purpose, bool(lod), float(cell_half) if purpose == 'overview' else 0.0)
        model = self._models.get(key)
        if model is None:
            model = self._models[key] = RenderModel(self._current().drawn_model, purpose, lod=lod, cell_half=key[2])
        return model

    def cameras(self, width: int, height: int, samples: int = 0, lod: bool = True, threads: int = 1) -> CameraRenderer:
        """The renderer of the pack's robot camera frames of ``width`` x ``height`` pixels."""
        key = (int(width), int(height), int(samples), bool(lod))
        renderer = self._cameras.get(key)
        if renderer is None or renderer.threads != threads:
            if renderer is not None:
                renderer.free()
            renderer = self._cameras[key] = CameraRenderer(self._current(), self.render_model('camera', lod), key[0],
                                                           key[1], key[2], threads)
        return renderer

    def overview_context(self, width: int, height: int, lod: bool, cell_half: float) -> RenderContext:
        """The overview's context for ``width`` x ``height`` images (the model's multisampling)."""
        key = (int(width), int(height), bool(lod), float(cell_half))
        context = self._overview.get(key)
        if context is None:
            render_model = self.render_model('overview', lod, cell_half)
            context = self._overview[key] = RenderContext(render_model, key[0], key[1],
                                                          int(render_model.source.vis.quality.offsamples))
        return context

    @property
    def camera_renderers(self) -> dict[tuple[int, int, int, bool], CameraRenderer]:
        """The live camera renderers, by ``(width, height, samples, lod)``."""
        return dict(self._cameras)

    @property
    def contexts(self) -> list[RenderContext]:
        """Every live render context of the pack (camera workers and overviews)."""
        return [c for renderer in self._cameras.values() for c in renderer.contexts] + list(self._overview.values())

    def free(self) -> None:
        """Release every GL context (later renders make new ones)."""
        cameras, self._cameras = self._cameras, {}
        overview, self._overview = self._overview, {}
        self._models = {}
        if self._pid != os.getpid():  # (inherited through fork: its GL state is the parent's, see .fork)
            keep_forever((cameras, overview))
            return
        for renderer in cameras.values():
            renderer.free()
        for context in overview.values():
            context.free()


_STATES: dict[int, PackRender] = {}


def pack_render(pack: Any) -> PackRender:
    """The rendering state of ``pack`` (a :class:`~internutopia.core.backend.mujoco.world.Pack`),
    made on first use and dropped with the pack."""
    key = id(pack)
    state = _STATES.get(key)
    if state is None or state._pack() is not pack:
        state = _STATES[key] = PackRender(pack)
        weakref.finalize(pack, _drop_state, key, state).atexit = False  # EGL is gone by then
    return state


def _drop_state(key: int, state: PackRender) -> None:
    if _STATES.get(key) is state:
        del _STATES[key]
    free_outside_sections(state.free)  # (the GC may run this inside another pack's render: see .sections)


def _after_fork_in_child() -> None:
    """A forked child renders its packs with contexts of its own (see :mod:`.fork`): the inherited
    rendering states are kept untouched, and the next render of each pack makes a new one."""
    inherited = list(_STATES.values())
    _STATES.clear()
    for state in inherited:
        state.free()  # (drops its contexts into fork.keep_forever, touching no GL)


if hasattr(os, 'register_at_fork'):  # (not on Windows, which does not fork)
    os.register_at_fork(after_in_child=_after_fork_in_child)


def world_packs(world: Any) -> list[Any]:
    """The packs of ``world`` that hold slots."""
    return [pack for pack in world.packs.values() if len(pack.slots)]


def has_render_state(world: Any) -> bool:
    """True when a GL context exists for any pack of ``world`` (nothing was rendered otherwise)."""
    return any(id(pack) in _STATES and _STATES[id(pack)].contexts for pack in world.packs.values())


def render_contexts(world: Any) -> list[RenderContext]:
    """Every live render context of ``world``, over all its packs (for tests and benchmarks)."""
    return [context for pack in world.packs.values() if id(pack) in _STATES for context in _STATES[id(pack)].contexts]


def camera_renderers(world: Any) -> list[CameraRenderer]:
    """Every live camera renderer of ``world``, over all its packs (for tests and benchmarks)."""
    return [renderer for pack in world.packs.values() if id(pack) in _STATES
            for renderer in _STATES[id(pack)].camera_renderers.values()]


def release(world: Any) -> None:
    """Free the GL contexts of every pack of ``world`` (``Env.close`` calls this)."""
    for pack in list(world.packs.values()):
        state = _STATES.pop(id(pack), None)
        if state is not None:
            state.free()


__all__ = ['PackRender', 'RenderClock', 'camera_renderers', 'has_render_state', 'pack_render', 'release',
           'render_contexts', 'world_packs']
