"""Planes of USD scenes: ``UsdGeom.Plane`` prims and flat meshes named like a ground.

A flat colliding mesh on a prim whose name (or an ancestor's) contains ``ground`` or ``plane`` may
become an infinite MuJoCo plane (what Isaac's ground planes are), but only when nothing static
that collides lies below it: a plane is a half-space, so a tabletop or a ceiling grouped under
``GroundFloor`` made infinite would swallow everything beneath it. Such a mesh is kept as an
ordinary flat collider instead (see :mod:`internutopia.core.backend.mujoco.usd_scene`).
"""

from __future__ import annotations

from typing import Any, Protocol

import mujoco
import numpy as np

from internutopia.core.backend.mujoco.mesh_geometry import mat_to_quat, quat_to_mat


class SceneBuilder(Protocol):
    """What this module uses of ``usd_builder.UsdSceneBuilder`` (named here, not imported: the
    builder imports this module)."""

    spec: mujoco.MjSpec
    time: Any
    #: Flat ground-like meshes deferred until the whole stage is read: ``(prim, parent, rel,
    #: style, centre, axes, half)`` each.
    ground_candidates: list[tuple[Any, ...]]

    def _add_geom(self, parent: Any, prim: Any, style: Any, **attributes: Any) -> Any: ...

    def _warn(self, message: str) -> None: ...

    def _emit_mesh(self, prim: Any, parent: Any, rel: Any, style: Any, dynamic: bool, ground: bool = True) -> int: ...

_GROUND_WORDS = ('ground', 'plane')
#: Metres: static colliding geometry may reach this far below a ground mesh that becomes a plane.
GROUND_BELOW_TOL = 0.05


def ground_like(prim) -> bool:
    """Whether ``prim`` or an ancestor is named like a ground plane."""
    p = prim
    while p and not p.IsPseudoRoot():
        name = p.GetName().lower()
        if any(word in name for word in _GROUND_WORDS):
            return True
        p = p.GetParent()
    return False


def plane_geom(builder: SceneBuilder, parent, prim, style, centre, axes, half) -> None:
    """A MuJoCo plane at ``centre`` with in-plane ``axes`` u, v (normal turned up) and half extents."""
    axes = np.array(axes, dtype=float)
    if axes[2, 2] < 0:  # normal (third column) pointing down: turn over about u
        axes[:, 1:] *= -1
    builder._add_geom(parent, prim, style, type=mujoco.mjtGeom.mjGEOM_PLANE,
                      size=[max(float(half[0]), 0.0), max(float(half[1]), 0.0), 0.5],
                      pos=np.asarray(centre).tolist(), quat=mat_to_quat(axes).tolist())


def emit_plane(builder: SceneBuilder, prim, parent, rel, style, dynamic) -> int:
    """A ``UsdGeom.Plane`` as a MuJoCo plane (static only)."""
    from pxr import UsdGeom

    if dynamic:
        builder._warn(f'plane {prim.GetPath()} is in a rigid body; MuJoCo planes must be static, skipped')
        return 0
    api = UsdGeom.Plane(prim)
    time = builder.time
    width = abs(float(api.GetWidthAttr().Get(time) or 0.0))
    length = abs(float(api.GetLengthAttr().Get(time) or 0.0))
    axis = str(api.GetAxisAttr().Get(time) or 'Z')
    # (u, v, n) in the prim's frame and the USD extents along u and v
    if axis == 'X':
        local, extents = np.array([[0.0, 0, 1], [1, 0, 0], [0, 1, 0]]), (length, width)
    elif axis == 'Y':
        local, extents = np.array([[0.0, 1, 0], [0, 0, 1], [1, 0, 0]]), (length, width)
    else:
        local, extents = np.eye(3), (width, length)
    linear = rel[:3, :3] @ local
    lengths = np.linalg.norm(linear, axis=0)
    u = linear[:, 0] / max(lengths[0], 1e-12)
    n = np.cross(linear[:, 0], linear[:, 1])
    n = n / max(np.linalg.norm(n), 1e-12)
    v = np.cross(n, u)
    plane_geom(builder, parent, prim, style, rel[:3, 3], np.stack([u, v, n], axis=1),
               (extents[0] / 2 * lengths[0], extents[1] / 2 * lengths[1]))
    return 1


def settle_grounds(builder: SceneBuilder) -> None:
    """Emit the ground-like flat meshes deferred by the builder: planes where nothing static collides
    below them, ordinary meshes (thin boxes) elsewhere."""
    candidates = builder.ground_candidates
    if not candidates:
        return
    heights = [float(c[4][2]) for c in candidates]
    lowest = _lowest_static_point(builder.spec)
    for k, (prim, parent, rel, style, centre, axes, half) in enumerate(candidates):
        below = min([lowest, *heights[:k], *heights[k + 1:]])
        if below >= heights[k] - GROUND_BELOW_TOL:
            plane_geom(builder, parent, prim, style, centre, axes, half)
        else:
            builder._emit_mesh(prim, parent, rel, style, False, ground=False)


def _lowest_static_point(spec: mujoco.MjSpec) -> float:
    """The lowest z (scene frame) of the static colliding geoms of ``spec`` (planes left out)."""
    lowest = np.inf
    for geom in spec.worldbody.geoms:
        if (geom.contype == 0 and geom.conaffinity == 0) or geom.type == mujoco.mjtGeom.mjGEOM_PLANE:
            continue
        rot = quat_to_mat(np.asarray(geom.quat, dtype=float))
        size = np.asarray(geom.size, dtype=float)
        z = float(geom.pos[2])
        if geom.type == mujoco.mjtGeom.mjGEOM_MESH:
            verts = np.asarray(spec.mesh(geom.meshname).uservert, dtype=float).reshape(-1, 3)
            reach = -float((verts @ rot[2]).min()) if len(verts) else 0.0
        elif geom.type == mujoco.mjtGeom.mjGEOM_BOX:
            reach = float(np.abs(rot[2]) @ size)
        elif geom.type == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
            reach = float(np.linalg.norm(rot[2] * size))
        elif geom.type == mujoco.mjtGeom.mjGEOM_SPHERE:
            reach = float(size[0])
        elif geom.type == mujoco.mjtGeom.mjGEOM_CAPSULE:
            reach = float(size[0] + size[1] * abs(rot[2, 2]))
        else:  # cylinder
            reach = float(size[1] * abs(rot[2, 2]) + size[0] * np.sqrt(max(0.0, 1.0 - rot[2, 2] ** 2)))
        lowest = min(lowest, z - reach)
    return float(lowest)


__all__ = ['GROUND_BELOW_TOL', 'SceneBuilder', 'emit_plane', 'ground_like', 'plane_geom', 'settle_grounds']
