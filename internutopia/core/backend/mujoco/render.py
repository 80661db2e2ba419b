"""Offscreen rendering of a :class:`~internutopia.core.backend.mujoco.world.MujocoWorld`.

Everything here shares **one OpenGL context and one** ``MjrContext`` **per compiled model** (a
:class:`RenderContext`): every robot camera of every slot, at any resolution, and the overview.
Its offscreen framebuffer is sized to the largest image asked for; a smaller image renders into a
corner of it, so no second context or re-upload of meshes is ever needed.

A robot camera is drawn in **one pass**: one ``mjr_render``, then RGB and depth read back together
(``mujoco.Renderer`` would render twice for RGB + depth). A slot's camera draws only that slot's
geoms (and world-level ones): other slots, which are physically absent for it, are never sent to
the rasterizer, so a frame costs the same with 1 or 64 slots.

Headless Linux: with no ``DISPLAY``/``WAYLAND_DISPLAY``, ``MUJOCO_GL`` defaults to ``egl`` (Mesa's
EGL runs on the CPU; packages ``libegl1 libgl1-mesa-dri libegl-mesa0``). The GL context class is
picked from ``MUJOCO_GL`` *as it is when the first image is rendered*, so the default applies even
when ``mujoco`` was imported before this module.
"""

from __future__ import annotations

import math
import os
import sys
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional


def _default_gl_backend() -> None:
    if sys.platform.startswith('linux') and not (os.environ.get('DISPLAY') or os.environ.get('WAYLAND_DISPLAY')) \
            and not os.environ.get('MUJOCO_GL', '').strip():
        os.environ['MUJOCO_GL'] = 'egl'


_default_gl_backend()

import mujoco  # noqa: E402  (after the MUJOCO_GL default)
import numpy as np  # noqa: E402

if TYPE_CHECKING:
    from internutopia.core.backend.mujoco.world import MujocoWorld

#: Geom group that camera renders use to hide other slots' geoms (hidden in every option here).
HIDDEN_GROUP = 5
#: Default vertical field of view (degrees) of the overview camera.
OVERVIEW_FOVY = 45.0


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


def _visual_option() -> mujoco.MjvOption:
    """What cameras and the overview draw: geoms of groups 0-2, no sites or other decor."""
    option = mujoco.MjvOption()
    option.geomgroup[:] = [1, 1, 1, 0, 0, 0]
    option.sitegroup[:] = 0
    option.geomgroup[HIDDEN_GROUP] = 0
    return option


def mat_to_quat(mat: np.ndarray) -> np.ndarray:
    """wxyz quaternions ``(..., 4)`` of rotation matrices given as ``(..., 9)`` or ``(..., 3, 3)``."""
    m = np.asarray(mat, dtype=float)
    lead = m.shape[:-1] if m.shape[-1] == 9 else m.shape[:-2]
    flat = m.reshape(-1, 9)
    out = np.empty((flat.shape[0], 4))
    for i in range(flat.shape[0]):
        mujoco.mju_mat2Quat(out[i], flat[i])
    return out.reshape(*lead, 4)


# ----------------------------------------------------------------------------------------------
# render context
class RenderContext:
    """GL context, ``MjrContext`` and scene for one compiled model; see the module docstring."""

    def __init__(self, world: 'MujocoWorld', width: int, height: int) -> None:
        model = world.model
        if model is None:
            raise RuntimeError('the world has no compiled model yet; call env.reset() before rendering')
        self.model = model
        self.world = world
        width = max(int(width), int(model.vis.global_.offwidth), 1)
        height = max(int(height), int(model.vis.global_.offheight), 1)
        model.vis.global_.offwidth = width
        model.vis.global_.offheight = height
        self.gl = gl_context_class()(width, height)
        self.gl.make_current()
        self.mjr = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_100.value)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self.mjr)
        self.mjr.readDepthMap = mujoco.mjtDepthMap.mjDEPTH_ZEROFAR
        self.size = (width, height)
        self.scene = mujoco.MjvScene(model, maxgeom=max(1000, 2 * model.ngeom + 100))
        self.option = _visual_option()
        self.base_groups = model.geom_group.copy()
        self.geom_slot = geom_slots(world)
        self._slot_groups: dict[int, np.ndarray] = {}
        self._rgb: dict[tuple[int, int], np.ndarray] = {}
        self._depth: dict[tuple[int, int], np.ndarray] = {}
        #: Number of ``mjr_render`` passes done (cameras and overview), for tests and benchmarks.
        self.passes = 0

    def ensure_size(self, width: int, height: int) -> None:
        """Grow the offscreen framebuffer when an image larger than it is asked for."""
        if width > self.size[0] or height > self.size[1]:
            width, height = max(width, self.size[0]), max(height, self.size[1])
            self.gl.make_current()
            self.model.vis.global_.offwidth = width
            self.model.vis.global_.offheight = height
            mujoco.mjr_resizeOffscreen(width, height, self.mjr)
            mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self.mjr)
            self.size = (width, height)

    def _groups_for_slot(self, slot: int) -> np.ndarray:
        groups = self._slot_groups.get(slot)
        if groups is None:
            groups = self.base_groups.copy()
            groups[(self.geom_slot != slot) & (self.geom_slot >= 0)] = HIDDEN_GROUP
            self._slot_groups[slot] = groups
        return groups

    def _buffers(self, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
        key = (width, height)
        if key not in self._rgb:
            self._rgb[key] = np.empty((height, width, 3), dtype=np.uint8)
            self._depth[key] = np.empty((height, width), dtype=np.float32)
        return self._rgb[key], self._depth[key]

    def render(self, data: mujoco.MjData, camera: mujoco.MjvCamera, width: int, height: int, *,
               slot: Optional[int] = None, depth: bool = False, clip: Optional[tuple[float, float]] = None,
               rgb_out: Optional[np.ndarray] = None, depth_out: Optional[np.ndarray] = None) -> None:
        """Draw ``camera`` once and read back RGB into ``rgb_out`` (``(H, W, 3)`` or ``(H, W, 4)``
        uint8, alpha left as is) and, when ``depth``, metric depth into ``depth_out`` (``(H, W)``).

        Args:
            slot: draw only this slot's geoms (and world-level ones); ``None`` draws everything.
            clip: ``(near, far)`` clipping distances in metres; the model's defaults when ``None``.
        """
        self.ensure_size(width, height)
        self.gl.make_current()
        model = self.model
        if slot is not None:
            model.geom_group[:] = self._groups_for_slot(slot)
        try:
            mujoco.mjv_updateScene(model, data, self.option, None, camera, mujoco.mjtCatBit.mjCAT_ALL.value, self.scene)
        finally:
            if slot is not None:
                model.geom_group[:] = self.base_groups
        if clip is not None:
            for glcam in self.scene.camera:
                scale = clip[0] / glcam.frustum_near
                glcam.frustum_top *= scale
                glcam.frustum_bottom *= scale
                glcam.frustum_center *= scale
                glcam.frustum_width *= scale
                glcam.frustum_near = clip[0]
                glcam.frustum_far = clip[1]
        rect = mujoco.MjrRect(0, 0, width, height)
        mujoco.mjr_render(rect, self.scene, self.mjr)
        self.passes += 1
        rgb, raw_depth = self._buffers(width, height)
        mujoco.mjr_readPixels(rgb if rgb_out is not None else None, raw_depth if depth else None, rect, self.mjr)
        if rgb_out is not None:
            rgb_out[..., :3] = rgb[::-1]
        if depth and depth_out is not None:
            glcam = self.scene.camera[0]
            depth_out[...] = _metric_depth(raw_depth[::-1], float(glcam.frustum_near), float(glcam.frustum_far),
                                           bool(glcam.orthographic))

    def free(self) -> None:
        """Release the GL resources (idempotent)."""
        if self.mjr is not None:
            try:
                self.gl.make_current()
                self.mjr.free()
            finally:
                self.mjr = None
                self.gl.free()


def _metric_depth(raw: np.ndarray, near: float, far: float, orthographic: bool) -> np.ndarray:
    """Depth-buffer values (reversed Z, as MuJoCo renders) to distances along the optical axis."""
    z = raw.astype(np.float64)
    zfar, znear = np.float32(far), np.float32(near)
    if orthographic:
        return (zfar - z * (zfar - znear)).astype(np.float32)
    c = -(zfar + znear) / (zfar - znear)
    d = -(np.float32(2) * zfar * znear) / (zfar - znear)
    c = np.float32(-0.5) * c - np.float32(0.5)
    d = np.float32(-0.5) * d
    return (d / (z + c)).astype(np.float32)


def geom_slots(world: 'MujocoWorld') -> np.ndarray:
    """Slot of every geom of the compiled world (``-1`` for world-level geoms outside any slot).

    Geoms of a slot's bodies get the body's slot; static geoms of the world body get the slot
    named by their ``env{i}/`` prefix, else the grid cell their centre lies in.
    """
    model = world.model
    slots = np.asarray(world.body_slot, dtype=np.intp)[model.geom_bodyid].copy()
    static = np.flatnonzero(model.geom_bodyid == 0)
    origins = np.asarray(world.origins, dtype=float)
    for g in static:
        name = model.geom(g).name
        head = name[3:].split('/', 1)[0] if name.startswith('env') else ''
        if head.isdigit() and int(head) < world.env_num:
            slots[g] = int(head)
            continue
        distance = np.abs(origins[:, :2] - model.geom_pos[g, :2]).max(axis=1)
        nearest = int(np.argmin(distance))
        slots[g] = nearest if distance[nearest] <= world.offset / 2 + 1e-9 else -1
    return slots


# ----------------------------------------------------------------------------------------------
# per-world state: the shared context and the render clock
class RenderClock:
    """Decides, once per physics step, whether cameras refresh on it.

    ``rendering_interval`` (render every N physics steps) wins when set; otherwise a step renders
    when sim time advanced by at least ``rendering_dt`` since the last render. The first step asked
    always renders. Every camera asking on the same step gets the same answer.
    """

    def __init__(self, physics_dt: float, rendering_dt: float, rendering_interval: Optional[int]) -> None:
        self.physics_dt = float(physics_dt)
        self.rendering_dt = float(rendering_dt)
        self.interval = rendering_interval
        self.last_render: Optional[float] = None
        self._tick: Optional[float] = None
        self._tick_due = False

    def due(self, time: float) -> bool:
        """Whether the physics step at sim ``time`` is a render step (memoized per step)."""
        if self._tick is not None and time == self._tick:
            return self._tick_due
        last = self.last_render
        if last is None or time < last:
            due = True
        elif self.interval is not None:
            due = round((time - last) / self.physics_dt) >= self.interval
        else:
            due = time - last >= self.rendering_dt - 1e-6 * self.physics_dt
        if due:
            self.last_render = time
        self._tick, self._tick_due = time, due
        return due


class WorldRender:
    """Rendering state attached to one world: its :class:`RenderClock` and :class:`RenderContext`."""

    def __init__(self, world: 'MujocoWorld') -> None:
        sim = world.sim
        self.clock = RenderClock(sim.physics_dt, sim.rendering_dt, sim.rendering_interval)
        self._world = weakref.ref(world)
        self._context: Optional[RenderContext] = None

    def context(self, width: int = 0, height: int = 0) -> RenderContext:
        """The shared context of the world's current model (rebuilt after a recompile)."""
        world = self._world()
        if world is None or world.model is None:
            raise RuntimeError('the world is closed or not built yet; call env.reset() before rendering')
        context = self._context
        if context is not None and context.model is not world.model:
            context.free()
            context = None
        if context is None:
            context = self._context = RenderContext(world, width, height)
        context.ensure_size(width, height)
        return context

    @property
    def has_context(self) -> bool:
        """Whether a GL context was ever created for this world (and not released)."""
        return self._context is not None

    def free(self) -> None:
        """Release the GL context (a later render makes a new one)."""
        if self._context is not None:
            self._context.free()
            self._context = None


_STATES: 'weakref.WeakKeyDictionary[Any, WorldRender]' = weakref.WeakKeyDictionary()


def world_render(world: 'MujocoWorld') -> WorldRender:
    """The rendering state of ``world`` (made on first use)."""
    state = _STATES.get(world)
    if state is None:
        state = _STATES[world] = WorldRender(world)
    return state


def has_render_state(world: 'MujocoWorld') -> bool:
    """True when anything was ever rendered (or scheduled) for ``world``; costs nothing otherwise."""
    state = _STATES.get(world)
    return state is not None and state.has_context


def release(world: 'MujocoWorld') -> None:
    """Free ``world``'s GL context and forget its rendering state (``Env.close`` calls this)."""
    state = _STATES.pop(world, None)
    if state is not None:
        state.free()


# ----------------------------------------------------------------------------------------------
# overview
@dataclass
class OverviewCamera:
    """A free camera on the grid: ``lookat``, ``distance`` (m), ``azimuth``/``elevation`` (deg)."""

    lookat: np.ndarray
    distance: float
    azimuth: float
    elevation: float
    fovy: float = OVERVIEW_FOVY

    def axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Unit ``right``, ``up`` and ``forward`` vectors of the camera in the world frame."""
        az, el = math.radians(self.azimuth), math.radians(self.elevation)
        forward = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
        right = np.cross(forward, [0.0, 0.0, 1.0])
        right /= np.linalg.norm(right)
        up = np.cross(right, forward)
        return right, up, forward

    @property
    def position(self) -> np.ndarray:
        """The camera's position in the world frame."""
        return np.asarray(self.lookat, dtype=float) - self.distance * self.axes()[2]

    def project(self, points: np.ndarray, width: int, height: int) -> np.ndarray:
        """Pixel coordinates ``(N, 2)`` as ``(column, row)`` of world ``points`` ``(N, 3)``."""
        right, up, forward = self.axes()
        rel = np.atleast_2d(points) - self.position
        depth = rel @ forward
        focal = (height / 2) / math.tan(math.radians(self.fovy) / 2)
        col = width / 2 + focal * (rel @ right) / depth
        row = height / 2 - focal * (rel @ up) / depth
        return np.stack([col, row], axis=-1)

    def mjv_camera(self) -> mujoco.MjvCamera:
        """The same view as a ``mujoco.MjvCamera`` (also usable for ``viewer.cam``)."""
        camera = mujoco.MjvCamera()
        self.apply(camera)
        return camera

    def apply(self, camera: Any) -> None:
        """Point an ``MjvCamera`` (e.g. a passive viewer's ``cam``) at this view."""
        camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        camera.lookat[:] = self.lookat
        camera.distance = self.distance
        camera.azimuth = self.azimuth
        camera.elevation = self.elevation


def overview_camera(world: 'MujocoWorld', width: int = 640, height: int = 480, azimuth: float = 60.0,
                    elevation: float = -45.0, height_m: float = 2.0) -> OverviewCamera:
    """The camera :func:`render_overview` uses: it looks at the centre of the grid and stands just
    far enough back that every slot's whole cell (up to ``height_m`` above the ground) is in view.
    """
    origins = np.asarray(world.origins, dtype=float)
    half = world.offset / 2
    low = origins[:, :2].min(axis=0) - half
    high = origins[:, :2].max(axis=0) + half
    lookat = np.array([(low[0] + high[0]) / 2, (low[1] + high[1]) / 2, 0.0])
    camera = OverviewCamera(lookat=lookat, distance=1.0, azimuth=azimuth, elevation=elevation)
    right, up, forward = camera.axes()
    corners = np.array([[x, y, z] for x in (low[0], high[0]) for y in (low[1], high[1]) for z in (0.0, height_m)])
    rel = corners - lookat
    tan_v = math.tan(math.radians(camera.fovy) / 2)
    tan_h = tan_v * width / height
    # A point at camera coords (x, y, f) with the camera d back along forward sits at depth f + d.
    need = np.maximum(np.abs(rel @ right) / tan_h, np.abs(rel @ up) / tan_v) - rel @ forward
    camera.distance = float(max(need.max(), 1.0) * 1.04)
    return camera


def render_overview(world: 'MujocoWorld', width: int = 640, height: int = 480,
                    camera: Optional[OverviewCamera] = None) -> np.ndarray:
    """An RGB image ``uint8 (height, width, 3)`` of the whole grid from above at an angle.

    Every slot is in view (see :func:`overview_camera`); pass ``camera`` for another view.
    """
    width, height = int(width), int(height)
    if width < 1 or height < 1:
        raise ValueError(f'overview size must be positive; got width={width}, height={height}')
    if world.model is None:
        raise RuntimeError('nothing to render: the world is not built yet (call env.reset() first) or is closed')
    camera = camera or overview_camera(world, width, height)
    state = world_render(world)
    context = state.context(width, height)
    image = np.empty((height, width, 3), dtype=np.uint8)
    mjv_camera = camera.mjv_camera()
    saved_fovy = context.model.vis.global_.fovy
    context.model.vis.global_.fovy = camera.fovy
    try:
        context.render(world.data, mjv_camera, width, height, clip=(0.05, 4.0 * camera.distance + 50.0), rgb_out=image)
    finally:
        context.model.vis.global_.fovy = saved_fovy
    return image


# ----------------------------------------------------------------------------------------------
# interactive viewer
class PassiveViewer:
    """``mujoco.viewer.launch_passive`` on a world, synced each step and relaunched after a rebuild.

    Opening is lazy (the world has no model before the first reset); a closed window stays closed.
    """

    def __init__(self, world: 'MujocoWorld') -> None:
        self.world = world
        self.handle: Any = None
        self._model: Optional[mujoco.MjModel] = None
        self._data: Optional[mujoco.MjData] = None
        self._user_closed = False

    def sync(self) -> None:
        """Show the world's current state; (re)launch when its model or data object changed."""
        world = self.world
        if self._user_closed or world.model is None:
            return
        if self.handle is not None and not self.handle.is_running():
            self.handle = None
            self._user_closed = True
            return
        if self.handle is not None and (world.model is not self._model or world.data is not self._data):
            self.close()
        if self.handle is None:
            import mujoco.viewer

            self.handle = mujoco.viewer.launch_passive(world.model, world.data, show_left_ui=False, show_right_ui=False)
            self._model, self._data = world.model, world.data
            with self.handle.lock():
                overview_camera(world).apply(self.handle.cam)
        self.handle.sync()

    def close(self) -> None:
        """Close the window (idempotent)."""
        if self.handle is not None:
            try:
                self.handle.close()
            finally:
                self.handle = None
                self._model = self._data = None


__all__ = ['HIDDEN_GROUP', 'OverviewCamera', 'PassiveViewer', 'RenderClock', 'RenderContext', 'WorldRender',
           'geom_slots', 'gl_context_class', 'has_render_state', 'mat_to_quat', 'overview_camera', 'release',
           'render_overview', 'world_render']
