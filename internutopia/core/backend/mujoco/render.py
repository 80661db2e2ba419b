"""Offscreen rendering of the :class:`~internutopia.core.backend.mujoco.world.MujocoWorld`.

Every pack of the world (the slots sharing one structure, one compiled one-slot model) has its
rendering state (:class:`PackRender`): **one OpenGL context and** ``MjrContext`` **per image
size** (a :class:`RenderContext`), shared by every robot camera of that size in every slot of the
pack, with an offscreen buffer of exactly that size.

A robot camera is drawn in **one pass**: one ``mjr_render``, then RGB and depth read back together
(``mujoco.Renderer`` would render twice for RGB + depth). A slot is its own simulation, so its
camera sees its own slot only; geoms outside the camera's view frustum are not even sent to the
rasterizer (:class:`FrustumCulling`), so a frame costs the same with 1 or 64 slots.
:class:`RenderClock` decides on which physics steps cameras refresh. :func:`render_overview` draws
the whole grid, every slot at its grid origin.

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
# render contexts
class FrustumCulling:
    """Which geoms a fixed camera draws: those whose bounding sphere meets its view frustum.

    Works by handing ``mjv_updateScene`` a per-camera copy of ``model.geom_group`` in which geoms
    that need not be drawn sit in :data:`HIDDEN_GROUP` (restored right after): a robot's meshes are
    mostly behind its own head camera, and drawing them would cost vertex work for nothing.
    """

    def __init__(self, model: mujoco.MjModel, option: mujoco.MjvOption) -> None:
        self.model = model
        self.base_groups = model.geom_group.copy()
        visible = np.asarray(option.geomgroup, dtype=bool)[np.clip(self.base_groups, 0, 5)]
        self.cullable = np.flatnonzero(visible & (model.geom_rbound > 0) & (model.geom_type != mujoco.mjtGeom.mjGEOM_PLANE))

    def camera_groups(self, cam: int, data: mujoco.MjData, aspect: float, near: float, far: float) -> np.ndarray:
        """``geom_group`` for fixed camera ``cam`` with the geoms outside its frustum hidden."""
        groups = self.base_groups.copy()
        idx = self.cullable
        model = self.model
        if len(idx) and model.cam_projection[cam] == 0 and not model.cam_sensorsize[cam].any():
            rel = (data.geom_xpos[idx] - data.cam_xpos[cam]) @ data.cam_xmat[cam].reshape(3, 3)
            radius = model.geom_rbound[idx]
            ahead = -rel[:, 2]
            tan_v = math.tan(math.radians(model.cam_fovy[cam]) / 2)
            tan_h = tan_v * aspect
            outside = ((ahead + radius < near) | (ahead - radius > far)
                       | (np.abs(rel[:, 1]) - ahead * tan_v > radius * math.sqrt(1 + tan_v * tan_v))
                       | (np.abs(rel[:, 0]) - ahead * tan_h > radius * math.sqrt(1 + tan_h * tan_h)))
            groups[idx[outside]] = HIDDEN_GROUP
        return groups


class RenderContext:
    """A GL context and an ``MjrContext`` whose offscreen buffer has exactly one image size.

    There is one per distinct image size in use (cameras of the same resolution share it, over
    all robots and slots): a buffer larger than the image costs fill time. ``samples`` is the
    multisampling (anti-aliasing) of the buffer: robot cameras use none (on Mesa's CPU rasterizer
    4x multisampling makes a frame several times slower); the overview keeps the model's (4x).
    """

    def __init__(self, model: mujoco.MjModel, width: int, height: int, option: mujoco.MjvOption,
                 samples: Optional[int] = None) -> None:
        self.model = model
        self.size = (int(width), int(height))
        self.samples = int(model.vis.quality.offsamples if samples is None else samples)
        vis = model.vis
        saved = (vis.global_.offwidth, vis.global_.offheight, vis.quality.offsamples)
        vis.global_.offwidth, vis.global_.offheight = self.size
        vis.quality.offsamples = self.samples
        try:
            self.gl = gl_context_class()(*self.size)
            self.gl.make_current()
            self.mjr: Optional[mujoco.MjrContext] = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_100.value)
        finally:
            vis.global_.offwidth, vis.global_.offheight, vis.quality.offsamples = saved
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self.mjr)
        self.mjr.readDepthMap = mujoco.mjtDepthMap.mjDEPTH_ZEROFAR
        self.scene = mujoco.MjvScene(model, maxgeom=max(1000, 2 * model.ngeom + 100))
        self._perturb = mujoco.MjvPerturb()
        self.option = option
        self.rect = mujoco.MjrRect(0, 0, *self.size)
        self._rgb = np.empty((self.size[1], self.size[0], 3), dtype=np.uint8)
        self._depth = np.empty((self.size[1], self.size[0]), dtype=np.float32)
        #: Number of ``mjr_render`` passes done, for tests and benchmarks.
        self.passes = 0

    def render(self, data: mujoco.MjData, camera: mujoco.MjvCamera, *, groups: Optional[np.ndarray] = None,
               depth: bool = False, clip: Optional[tuple[float, float]] = None, single_pass: bool = False,
               rgb_out: Optional[np.ndarray] = None, depth_out: Optional[np.ndarray] = None) -> None:
        """Draw ``camera`` once; read RGB into ``rgb_out`` (``(H, W, 3)`` or ``(H, W, 4)`` uint8, alpha
        left as is) and, when ``depth``, metric depth (m, along the optical axis) into ``depth_out``.

        Args:
            groups: a ``geom_group`` array to draw with (see :class:`FrustumCulling`); the model's own when ``None``.
            clip: ``(near, far)`` clipping distances in metres; the model's defaults when ``None``.
            single_pass: skip MuJoCo's extra passes (mirror reflections of reflective materials and
                shadow maps), so the scene is rasterized exactly once.
        """
        self.update_scene(data, camera, groups=groups)
        self.draw(depth=depth, clip=clip, single_pass=single_pass, rgb_out=rgb_out, depth_out=depth_out)

    def update_scene(self, data: mujoco.MjData, camera: mujoco.MjvCamera, *, groups: Optional[np.ndarray] = None,
                     offset: Optional[np.ndarray] = None, add: bool = False) -> None:
        """Put ``data``'s geoms into the scene seen from ``camera``, moved by ``offset`` (m, world
        frame) when given; ``add`` appends them to what the scene holds instead of replacing it."""
        if self.mjr is None:
            raise RuntimeError('this render context was freed')
        self.gl.make_current()
        model = self.model
        if groups is not None:
            saved = model.geom_group.copy()
            model.geom_group[:] = groups
        first = self.scene.ngeom if add else 0
        try:
            if add:
                mujoco.mjv_addGeoms(model, data, self.option, self._perturb, mujoco.mjtCatBit.mjCAT_ALL.value, self.scene)
            else:
                mujoco.mjv_updateScene(model, data, self.option, None, camera, mujoco.mjtCatBit.mjCAT_ALL.value, self.scene)
        finally:
            if groups is not None:
                model.geom_group[:] = saved
        if offset is not None and np.any(offset):
            for index in range(first, self.scene.ngeom):
                self.scene.geoms[index].pos[:] += offset

    def draw(self, *, depth: bool = False, clip: Optional[tuple[float, float]] = None, single_pass: bool = False,
             rgb_out: Optional[np.ndarray] = None, depth_out: Optional[np.ndarray] = None) -> None:
        """Rasterize the scene as :meth:`update_scene` left it; arguments as for :meth:`render`."""
        if clip is not None:
            for glcam in self.scene.camera:
                scale = clip[0] / glcam.frustum_near
                glcam.frustum_top *= scale
                glcam.frustum_bottom *= scale
                glcam.frustum_center *= scale
                glcam.frustum_width *= scale
                glcam.frustum_near = clip[0]
                glcam.frustum_far = clip[1]
        flags = self.scene.flags
        if single_pass:
            saved_flags = (flags[mujoco.mjtRndFlag.mjRND_REFLECTION], flags[mujoco.mjtRndFlag.mjRND_SHADOW])
            flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
        try:
            mujoco.mjr_render(self.rect, self.scene, self.mjr)
        finally:
            if single_pass:
                flags[mujoco.mjtRndFlag.mjRND_REFLECTION], flags[mujoco.mjtRndFlag.mjRND_SHADOW] = saved_flags
        self.passes += 1
        mujoco.mjr_readPixels(self._rgb if rgb_out is not None else None, self._depth if depth else None, self.rect, self.mjr)
        if rgb_out is not None:
            rgb_out[..., :3] = self._rgb[::-1]
        if depth and depth_out is not None:
            glcam = self.scene.camera[0]
            depth_out[...] = _metric_depth(self._depth[::-1], float(glcam.frustum_near), float(glcam.frustum_far),
                                           bool(glcam.orthographic))

    def free(self) -> None:
        """Release the GL resources (idempotent)."""
        if self.mjr is None:
            return
        mjr, self.mjr = self.mjr, None
        try:
            self.gl.make_current()
            mjr.free()
        finally:
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
    with np.errstate(divide='ignore'):
        out = (d / (z + c)).astype(np.float32)
    out[(z <= 0) | (out > far)] = far  # nothing drawn there (the cleared buffer): the far plane
    return out


# ----------------------------------------------------------------------------------------------
# per-world state: the shared context and the render clock
class RenderClock:
    """When cameras refresh: on every ``period``-th physics step of the world's clock.

    ``period`` is ``rendering_interval`` when set, else the fewest physics steps spanning at least
    ``rendering_dt`` (so a render step comes once sim time has advanced by ``rendering_dt`` since
    the last one). Steps count from sim time 0 (the world's start; every slot keeps the one clock), so
    the answer depends on the time alone: every camera of every slot and pack agrees, with no state.
    """

    def __init__(self, physics_dt: float, rendering_dt: float, rendering_interval: Optional[int]) -> None:
        self.physics_dt = float(physics_dt)
        if rendering_interval is not None:
            self.period = int(rendering_interval)
        else:
            self.period = max(1, math.ceil(float(rendering_dt) / self.physics_dt - 1e-6))

    @classmethod
    def of(cls, sim: Any) -> 'RenderClock':
        """The clock of a ``SimConfig``."""
        return cls(sim.physics_dt, sim.rendering_dt, sim.rendering_interval)

    def step_index(self, time: float) -> int:
        """Physics steps since sim time 0."""
        return int(round(time / self.physics_dt))

    def due(self, time: float) -> bool:
        """Whether the physics step ending at sim ``time`` is a render step."""
        return self.step_index(time) % self.period == 0


class PackRender:
    """Rendering state of one pack of the world (one compiled one-slot model): frustum culling and
    one :class:`RenderContext` per image size and multisampling."""

    def __init__(self, pack: Any) -> None:
        self._pack = weakref.ref(pack)
        self._contexts: dict[tuple[int, int, int], RenderContext] = {}
        self._culling: Optional[FrustumCulling] = None
        self.option = _visual_option()

    def _current(self) -> Any:
        pack = self._pack()
        if pack is None:
            raise RuntimeError('nothing to render: this pack of the world is gone')
        return pack

    def context(self, width: int, height: int, samples: Optional[int] = None) -> RenderContext:
        """The render context of the pack's model for images of ``width`` x ``height`` with
        ``samples``-fold multisampling (the model's setting when ``None``)."""
        pack = self._current()
        samples = int(pack.model.vis.quality.offsamples if samples is None else samples)
        key = (int(width), int(height), samples)
        context = self._contexts.get(key)
        if context is None:
            context = self._contexts[key] = RenderContext(pack.model, key[0], key[1], self.option, samples)
        return context

    @property
    def culling(self) -> FrustumCulling:
        """Frustum culling for the fixed cameras of the pack's model."""
        if self._culling is None:
            self._culling = FrustumCulling(self._current().model, self.option)
        return self._culling

    @property
    def contexts(self) -> dict[tuple[int, int, int], RenderContext]:
        """The live render contexts, by ``(width, height, samples)``."""
        return dict(self._contexts)

    def free(self) -> None:
        """Release every GL context (later renders make new ones)."""
        contexts, self._contexts = self._contexts, {}
        self._culling = None
        for context in contexts.values():
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
    state.free()


def world_packs(world: Any) -> list[Any]:
    """The packs of ``world`` that hold slots."""
    return [pack for pack in world.packs.values() if len(pack.slots)]


def has_render_state(world: Any) -> bool:
    """True when a GL context exists for any pack of ``world`` (nothing was rendered otherwise)."""
    return any(id(pack) in _STATES and _STATES[id(pack)].contexts for pack in world.packs.values())


def render_contexts(world: Any) -> list[RenderContext]:
    """Every live render context of ``world``, over all its packs (for tests and benchmarks)."""
    return [context for pack in world.packs.values() if id(pack) in _STATES
            for context in _STATES[id(pack)].contexts.values()]


def release(world: Any) -> None:
    """Free the GL contexts of every pack of ``world`` (``Env.close`` calls this)."""
    for pack in list(world.packs.values()):
        state = _STATES.pop(id(pack), None)
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


def overview_camera(world: 'MujocoWorld', width: int = 640, height: int = 480, azimuth: float = 160.0,
                    elevation: float = -50.0, height_m: float = 2.0) -> OverviewCamera:
    """The camera :func:`render_overview` uses: it looks at the centre of the grid and stands just
    far enough back that every slot's whole cell (up to ``height_m`` above the ground) is in view.

    The default view looks along -x, tilted: slot columns (+y) run left to right and rows (+x)
    come toward the viewer, so slot 0 is at the top left, in reading order.
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

    Every slot is in view (see :func:`overview_camera`); pass ``camera`` for another view. Each
    pack (one model) draws all its slots, each at its grid origin, in one pass; with several packs
    the images are merged by depth.
    """
    width, height = int(width), int(height)
    if width < 1 or height < 1:
        raise ValueError(f'overview size must be positive; got width={width}, height={height}')
    packs = world_packs(world)
    if not packs:
        raise RuntimeError('nothing to render: the world is not built yet (call env.reset() first) or is closed')
    camera = camera or overview_camera(world, width, height)
    clip = (0.05, 4.0 * camera.distance + 50.0)
    image = np.empty((height, width, 3), dtype=np.uint8)
    merge = len(packs) > 1
    best = np.full((height, width), np.inf, dtype=np.float32) if merge else None
    layer = np.empty_like(image) if merge else image
    depth = np.empty((height, width), dtype=np.float32) if merge else None
    origins = np.asarray(world.origins, dtype=float)
    for pack in packs:
        context = pack_render(pack).context(width, height)
        saved_fovy = context.model.vis.global_.fovy
        context.model.vis.global_.fovy = camera.fovy
        try:
            view = camera.mjv_camera()
            for index, slot in enumerate(pack.slots.tolist()):
                context.update_scene(pack.mjdata(slot), view, offset=origins[slot], add=index > 0)
            context.draw(clip=clip, single_pass=merge, depth=merge, rgb_out=layer, depth_out=depth)
        finally:
            context.model.vis.global_.fovy = saved_fovy
        if merge:
            # Packs draw coplanar ground tiles: a later pack wins only where it is clearly nearer,
            # so coplanar floors (and their anti-aliased edges) never flicker between packs.
            nearer = depth < best * (1 - 1e-3)
            image[nearer] = layer[nearer]
            best[nearer] = depth[nearer]
    return image


# ----------------------------------------------------------------------------------------------
# interactive viewer
class PassiveViewer:
    """``mujoco.viewer.launch_passive`` on slot 0 of the world, synced each step.

    Opening is lazy (the world has no model before the first reset); it relaunches when slot 0
    changes structure; a closed window stays closed. Each slot is its own simulation, so the
    window shows one slot; :func:`render_overview` draws the whole grid.
    """

    def __init__(self, world: 'MujocoWorld', slot: int = 0) -> None:
        self.world = world
        self.slot = slot
        self.handle: Any = None
        self._model: Optional[mujoco.MjModel] = None
        self._data: Optional[mujoco.MjData] = None
        self._user_closed = False

    def sync(self) -> None:
        """Show the slot's current state; (re)launch when its model changed."""
        pack = self.world.pack(self.slot)
        if self._user_closed or pack is None:
            return
        if self.handle is not None and not self.handle.is_running():
            self.handle = None
            self._user_closed = True
            return
        if self.handle is not None and pack.model is not self._model:
            self.close()
        if self.handle is None:
            import mujoco.viewer

            self._model, self._data = pack.model, mujoco.MjData(pack.model)
            pack.batch.get_data(self.slot, self._data)
            self.handle = mujoco.viewer.launch_passive(self._model, self._data, show_left_ui=False, show_right_ui=False)
        with self.handle.lock():
            pack.batch.get_data(self.slot, self._data)
        self.handle.sync()

    def close(self) -> None:
        """Close the window (idempotent)."""
        if self.handle is not None:
            try:
                self.handle.close()
            finally:
                self.handle = None
                self._model = self._data = None


__all__ = ['HIDDEN_GROUP', 'FrustumCulling', 'OverviewCamera', 'PackRender', 'PassiveViewer', 'RenderClock', 'RenderContext',
           'gl_context_class', 'has_render_state', 'mat_to_quat', 'overview_camera', 'pack_render', 'release',
           'render_contexts', 'render_overview', 'world_packs']
