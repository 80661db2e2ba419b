"""What is drawn: render models (private copies of a pack's model), planes, culling, slot poses.

A :class:`RenderModel` is a copy of a pack's one-slot model made for one purpose:

- ``'camera'`` (robot cameras): a slot's camera sees its slot's whole scene. Ground planes reach
  their own extent, or the horizon (:data:`HORIZON_M`) when infinite, whatever ``env_offset_size``
  is, and follow the camera (moved by whole texture periods, so the floor's pattern stays put).
- ``'overview'`` (``env.render()``): every slot is drawn at its grid origin, so planes are cut to
  the slot's cell (``env_offset_size / 2`` each way) and stay at the slot's origin.

Both draw planes as a coarse grid of quads (MuJoCo draws an infinite plane as 200 x 200 quads and a
finite one with a quad every ``size[2]`` metres; with directional lights a flat plane looks the same
either way, and Mesa's CPU rasterizer pays for every vertex). With ``lod`` the copy's meshes are
decimated (:mod:`.lod`). The pack's own model, which the physics uses, is never modified.
"""

from __future__ import annotations

import copy
import math
import threading
from typing import Literal

import mujoco
import numpy as np

from internutopia.core.backend.mujoco.render.lod import FACE_BUDGET, LodReport, apply_lod

#: Geom group that camera renders use to hide geoms outside the view (hidden in every option here).
HIDDEN_GROUP = 5
#: How far an infinite ground plane reaches from a robot camera (m): at 1 km the floor's edge is
#: within a pixel of the horizon for any usual camera.
HORIZON_M = 1000.0
#: Quads per side of a plane as drawn (fewer than MuJoCo's; see the module docstring).
PLANE_QUADS = 16

Purpose = Literal['camera', 'overview']


def visual_option() -> mujoco.MjvOption:
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


class RenderModel:
    """A private copy of a pack's model for one purpose (see the module docstring).

    ``lock`` guards the copy's ``geom_group`` (frustum culling edits it around
    ``mjv_updateScene``) when several render threads share the copy.
    """

    def __init__(self, model: mujoco.MjModel, purpose: Purpose, *, lod: bool = True, cell_half: float = 0.0,
                 face_budget: int = FACE_BUDGET) -> None:
        if purpose not in ('camera', 'overview'):
            raise ValueError(f"render model purpose must be 'camera' or 'overview'; got {purpose!r}")
        self.source = model
        self.purpose = purpose
        self.lod = bool(lod)
        self.model = copy.copy(model)
        self.lock = threading.Lock()
        self.report: LodReport | None = apply_lod(self.model, face_budget) if lod else None
        self.option = visual_option()
        m = self.model
        if purpose == 'camera':
            # Camera frames are drawn with no mirror reflections, and then MuJoCo still draws its
            # one reflective geom (a plane or a box: convex) first with additive blending onto the
            # cleared buffer: the same pixels as drawing it opaque, at the cost of reading every
            # pixel it covers back. Without reflectance it is drawn opaque.
            m.mat_reflectance[:] = 0
        self.planes = np.flatnonzero(m.geom_type == mujoco.mjtGeom.mjGEOM_PLANE)
        #: Per plane and in-plane axis: infinite in the source model.
        self.infinite = m.geom_size[self.planes, :2] <= 0
        #: Per plane and axis: the step (m) by which a camera's plane follows the camera.
        self.period = np.ones((len(self.planes), 2))
        for row, geom in enumerate(self.planes):
            size = m.geom_size[geom].copy()
            if purpose == 'camera':
                size[:2] = np.where(size[:2] > 0, size[:2], HORIZON_M)
            else:
                half = max(float(cell_half), 1e-3)
                size[:2] = np.where(size[:2] > 0, np.minimum(size[:2], half), half)
            size[2] = max(size[2], float(size[:2].max()) / PLANE_QUADS)
            m.geom_size[geom] = size
            mat = m.geom_matid[geom]
            repeat = m.mat_texrepeat[mat] if mat >= 0 else np.zeros(2)
            for axis in range(2):
                # A textured plane moves by whole texture periods (2 / texrepeat metres), an
                # untextured one by its quads, so neither pattern nor shading swims.
                self.period[row, axis] = 2.0 / repeat[axis] if repeat[axis] > 0 else 2.0 * size[2]

    def fix_planes(self, scene: mujoco.MjvScene, data: mujoco.MjData, eye: np.ndarray | None = None,
                   start: int = 0) -> None:
        """Adjust the planes ``mjv_updateScene`` put into ``scene`` (from index ``start`` on) from this copy.

        Planes that are infinite in the source model are drawn with uniform texture scaling (as
        MuJoCo draws infinite planes); with ``eye`` (the camera position) they are moved under it.
        """
        if not len(self.planes) or not self.infinite.any():
            return
        left = int(self.infinite.any(axis=1).sum())
        plane_type, geom_type = int(mujoco.mjtGeom.mjGEOM_PLANE), int(mujoco.mjtObj.mjOBJ_GEOM)
        rows = {int(g): r for r, g in enumerate(self.planes)}
        # The world's geoms come first in a scene (geoms are added in id order), so this loop
        # stops after a few entries.
        for index in range(start, scene.ngeom):
            geom = scene.geoms[index]
            if geom.type != plane_type or geom.objtype != geom_type:
                continue
            row = rows.get(int(geom.objid))
            if row is None or not self.infinite[row].any():
                continue
            geom.texuniform = 1
            if eye is not None:
                origin = data.geom_xpos[geom.objid]
                axes = data.geom_xmat[geom.objid].reshape(3, 3)
                shift = np.zeros(3)
                for axis in range(2):
                    if self.infinite[row, axis]:
                        step = self.period[row, axis]
                        along = float(np.dot(eye - origin, axes[:, axis]))
                        shift += step * math.floor(along / step + 0.5) * axes[:, axis]
                geom.pos[:] = origin + shift
            left -= 1
            if not left:
                break


class FrustumCulling:
    """Which geoms a fixed camera draws: those whose bounding sphere meets its view frustum.

    Works by handing ``mjv_updateScene`` a per-camera ``geom_group`` in which geoms that need not
    be drawn sit in :data:`HIDDEN_GROUP`: a robot's meshes are mostly behind its own head camera,
    and drawing them would cost vertex work for nothing.
    """

    def __init__(self, model: mujoco.MjModel, option: mujoco.MjvOption) -> None:
        self.model = model
        self.base_groups = model.geom_group.copy()
        visible = np.asarray(option.geomgroup, dtype=bool)[np.clip(self.base_groups, 0, 5)]
        self.cullable = np.flatnonzero(visible & (model.geom_rbound > 0) & (model.geom_type != mujoco.mjtGeom.mjGEOM_PLANE))
        self._radius = model.geom_rbound[self.cullable]

    def camera_groups(self, cam: int, data: mujoco.MjData, aspect: float, near: float, far: float) -> np.ndarray:
        """``geom_group`` for fixed camera ``cam`` with the geoms outside its frustum hidden."""
        model = self.model
        if model.cam_projection[cam] != 0 or model.cam_sensorsize[cam].any():
            return self.base_groups.copy()
        return self.view_groups(data, data.cam_xpos[cam], data.cam_xmat[cam], float(model.cam_fovy[cam]), aspect, near, far)

    def view_groups(self, data: mujoco.MjData, position: np.ndarray, xmat: np.ndarray, fovy_deg: float, aspect: float,
                    near: float, far: float) -> np.ndarray:
        """``geom_group`` for a pinhole view from ``position`` with orientation ``xmat`` (``(9,)``,
        looking along its -z) and vertical field of view ``fovy_deg``, geoms outside it hidden."""
        groups = self.base_groups.copy()
        idx = self.cullable
        if len(idx):
            rel = (data.geom_xpos[idx] - position) @ np.asarray(xmat).reshape(3, 3)
            radius = self._radius
            ahead = -rel[:, 2]
            tan_v = math.tan(math.radians(fovy_deg) / 2)
            tan_h = tan_v * aspect
            outside = ((ahead + radius < near) | (ahead - radius > far)
                       | (np.abs(rel[:, 1]) - ahead * tan_v > radius * math.sqrt(1 + tan_v * tan_v))
                       | (np.abs(rel[:, 0]) - ahead * tan_h > radius * math.sqrt(1 + tan_h * tan_h)))
            groups[idx[outside]] = HIDDEN_GROUP
        return groups


def occludable_geoms(model: mujoco.MjModel, data: mujoco.MjData, eye: np.ndarray, geoms: np.ndarray,
                     owners: np.ndarray) -> np.ndarray:
    """Which of ``geoms`` (model geom ids drawn in one frame seen from ``eye``) a geom of another
    owner among them could hide at some pixel (``bool`` per geom; ``owners``: the thing each of
    ``geoms`` belongs to).

    Conservative, from bounding spheres: a geom hides another only if, seen from the eye, their
    spheres' angular discs overlap and its nearest point is nearer than the other's farthest. A
    plane hides a geom whose sphere is not wholly on the eye's side of it; a plane, or a geom with
    no bounding sphere, may be hidden by anything. A geom of the same owner never counts.
    """
    count = len(geoms)
    if count < 2:
        return np.zeros(count, dtype=bool)
    offset = data.geom_xpos[geoms] - eye
    distance = np.linalg.norm(offset, axis=1)
    radius = model.geom_rbound[geoms].astype(float)
    plane = model.geom_type[geoms] == mujoco.mjtGeom.mjGEOM_PLANE
    unbounded = plane | (radius <= 0) | (distance <= radius)  # (the eye inside a sphere: it covers everything)
    direction = offset / np.maximum(distance, 1e-12)[:, None]
    half_angle = np.arcsin(np.clip(radius / np.maximum(distance, 1e-12), 0.0, 1.0))
    apart = np.arccos(np.clip(direction @ direction.T, -1.0, 1.0))
    hides = (apart <= half_angle[:, None] + half_angle[None, :] + 1e-6) \
        & ((distance - radius)[None, :] < (distance + radius)[:, None])  # [g, o]: o may hide g
    for column in np.flatnonzero(plane):
        normal = data.geom_xmat[geoms[column]].reshape(3, 3)[:, 2]
        origin = data.geom_xpos[geoms[column]]
        side = 1.0 if float(np.dot(eye - origin, normal)) >= 0 else -1.0
        hides[:, column] = side * ((data.geom_xpos[geoms] - origin) @ normal) < radius + 1e-6
    hides[unbounded, :] = True
    hides[:, unbounded & ~plane] = True
    hides &= owners[:, None] != owners[None, :]
    return hides.any(axis=1)


__all__ = ['HIDDEN_GROUP', 'HORIZON_M', 'PLANE_QUADS', 'FrustumCulling', 'RenderModel', 'mat_to_quat', 'occludable_geoms',
           'visual_option']
