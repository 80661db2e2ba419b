"""The overview: one image of the whole grid, every slot drawn at its grid origin (``env.render()``);
and each env's own frame, its slot alone (``env.render_envs()``, a Gymnasium vector env's ``render()``).

Each slot is its own simulation; the overview draws each slot's geoms moved to the slot's grid
origin, with ground planes cut to the slot's cell (see :class:`~.scene.RenderModel`), so the grid
is seen as InternUtopia users know it. A pack (one model) draws all its slots into one scene in
one pass; with several packs the images are merged by depth.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from internutopia.core.backend.mujoco.render.context import metric_depth
from internutopia.core.backend.mujoco.render.pack import pack_render, world_packs
from internutopia.core.backend.mujoco.render.sections import render_section
from internutopia.core.backend.mujoco.render.sky import sky_colour

if TYPE_CHECKING:
    from internutopia.core.backend.mujoco.world import MujocoWorld

#: Default vertical field of view (degrees) of the overview camera.
OVERVIEW_FOVY = 45.0


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


def overview_camera(world: MujocoWorld, width: int = 640, height: int = 480, azimuth: float = 160.0,
                    elevation: float = -50.0, height_m: float = 2.0) -> OverviewCamera:
    """The camera :func:`render_overview` uses: it looks at the centre of the grid and stands just
    far enough back that every slot's whole cell (up to ``height_m`` above the ground) is in view.

    The default view looks along -x, tilted: slot columns (+y) run left to right and rows (+x)
    come toward the viewer, so slot 0 is at the top left, in reading order.
    """
    origins = np.asarray(world.origins, dtype=float)
    half = world.offset / 2
    return _framing(origins[:, :2].min(axis=0) - half, origins[:, :2].max(axis=0) + half, width, height,
                    azimuth, elevation, height_m)


def env_camera(world: MujocoWorld, slot: int, width: int = 640, height: int = 480, azimuth: float = 160.0,
               elevation: float = -35.0, height_m: float = 2.0) -> OverviewCamera:
    """The camera of slot ``slot``'s own frame (:func:`render_envs`): the overview's view, aimed at
    the slot's cell and just far enough back to see all of it (up to ``height_m`` above the ground)."""
    origin = np.asarray(world.origins, dtype=float)[int(slot), :2]
    half = world.offset / 2
    return _framing(origin - half, origin + half, width, height, azimuth, elevation, height_m)


def _framing(low: np.ndarray, high: np.ndarray, width: int, height: int, azimuth: float, elevation: float,
             height_m: float) -> OverviewCamera:
    """A camera looking at the middle of the ground rectangle ``low``-``high`` (x, y) from just far
    enough back that the box over it, ``height_m`` tall, fills the view."""
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


def _lod_setting(world: Any) -> bool:
    return bool(getattr(world.sim, 'rendering_lod', True))


def render_overview(world: MujocoWorld, width: int = 640, height: int = 480,
                    camera: OverviewCamera | None = None) -> np.ndarray:
    """An RGB image ``uint8 (height, width, 3)`` of the whole grid from above at an angle.

    Every slot is in view (see :func:`overview_camera`); pass ``camera`` for another view. Each
    pack (one model) draws all its slots, each at its grid origin, in one pass; with several packs
    the images are merged by depth. Drawn with the model's multisampling (4x by default).
    """
    width, height = _size(width, height)
    packs = world_packs(world)
    if not packs:
        raise RuntimeError('nothing to render: the world is not built yet (call env.reset() first) or is closed')
    camera = camera or overview_camera(world, width, height)
    return _draw(world, [(pack, pack.slots.tolist()) for pack in packs], camera, width, height)


def render_envs(world: MujocoWorld, slots: Sequence[int], width: int = 640, height: int = 480) -> list[np.ndarray]:
    """One RGB image ``uint8 (height, width, 3)`` per slot of ``slots``: that slot alone (no
    neighbour drawn), seen by :func:`env_camera`, the overview's view aimed at its cell. A slot
    that holds nothing (no episode yet) is the empty sky."""
    width, height = _size(width, height)
    pack_of = {slot: pack for pack in world_packs(world) for slot in pack.slots.tolist()}
    frames = []
    for slot in slots:
        pack = pack_of.get(int(slot))
        camera = env_camera(world, int(slot), width, height)
        frames.append(_draw(world, [(pack, [int(slot)])] if pack is not None else [], camera, width, height))
    return frames


def _size(width: int, height: int) -> tuple[int, int]:
    width, height = int(width), int(height)
    if width < 1 or height < 1:
        raise ValueError(f'overview size must be positive; got width={width}, height={height}')
    return width, height


def _draw(world: MujocoWorld, draws: list[tuple[Any, list[int]]], camera: OverviewCamera, width: int,
          height: int) -> np.ndarray:
    """Draw each ``(pack, slots)`` of ``draws`` (each slot at its grid origin) from ``camera``; with
    several packs the images are merged by depth, the sky filling what none drew."""
    near, far = 0.05, 4.0 * camera.distance + 50.0
    image = np.empty((height, width, 3), dtype=np.uint8)
    merge = len(draws) != 1
    best = np.full((height, width), np.inf, dtype=np.float32) if merge else None
    rgba = np.empty((height, width, 4), dtype=np.uint8)
    raw = np.empty((height, width), dtype=np.float32) if merge else None
    depth = np.empty((height, width), dtype=np.float32) if merge else None
    origins = np.asarray(world.origins, dtype=float)
    rect = mujoco.MjrRect(0, 0, width, height)
    lod = _lod_setting(world)
    right, up, forward = camera.axes()
    rotation = np.stack([right, up, -forward], axis=1)  # camera axes in the world's
    sky = True
    for pack, slots in draws:
        context = pack_render(pack).overview_context(width, height, lod, world.offset / 2)
        with render_section():
            context.make_current()
            model = context.model
            context.ensure_capacity(len(slots) * (model.ngeom + 10))
            model.vis.global_.fovy = camera.fovy  # the overview's own copy of the model: no one else reads it
            view = camera.mjv_camera()
            for index, slot in enumerate(slots):
                context.update_scene(pack.drawn_data(slot), view, offset=origins[slot], add=index > 0)
            context.set_clip(near, far)
            context.draw(rect, single_pass=merge)
            context.read(rect, rgba, raw)
        glcam = context.scene.camera[0]
        gl_forward, gl_up = np.asarray(glcam.forward, dtype=float), np.asarray(glcam.up, dtype=float)
        rotation = np.stack([np.cross(gl_forward, gl_up), gl_up, -gl_forward], axis=1)
        sky = context.sky
        if not merge:
            context.copy_colour(rgba, image, rotation, camera.fovy)  # with the sky behind
            continue
        layer = rgba[::-1, :, :3]
        assert raw is not None and depth is not None and best is not None  # made when merging
        metric_depth(raw[::-1], near, far, out=depth)
        # Packs draw coplanar ground tiles: a later pack wins only where it is clearly nearer,
        # so coplanar floors (and their anti-aliased edges) never flicker between packs.
        nearer = depth < best * (1 - 1e-3)
        image[nearer] = layer[nearer]
        best[nearer] = depth[nearer]
    if merge and sky:  # where no pack drew anything: the sky
        assert best is not None
        empty = ~np.isfinite(best) | (best >= far * (1 - 1e-4))
        image[empty] = sky_colour(rotation, (height / 2) / math.tan(math.radians(camera.fovy) / 2), width,
                                  height)[empty].astype(np.uint8)
    return image


__all__ = ['OVERVIEW_FOVY', 'OverviewCamera', 'env_camera', 'overview_camera', 'render_envs', 'render_overview']
