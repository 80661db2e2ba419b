"""Triangle meshes of a compiled MuJoCo model's visible geoms, merged per body and colour.

A viewer draws each body of each slot as instances of one mesh per (body, colour): the body's
geoms (primitives tessellated, meshes as compiled, both moved into the body's frame) merged into
one vertex and face array. Ground planes and height fields are left out (the viewer draws each
slot's cell as a grid); so are geoms in groups 3 and up (MuJoCo's collision-only convention) and
fully transparent ones. Heavy meshes come from the model's level-of-detail copy
(:func:`internutopia.core.backend.mujoco.render.lod.lod_model`), as the cameras draw them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ['BodyMesh', 'body_meshes', 'quat_to_matrix']

#: Geom groups drawn (MuJoCo shows 0-2 by default; 3 and up hold collision-only geoms by convention).
VISIBLE_GROUPS = 3


@dataclass(frozen=True)
class BodyMesh:
    """The visible geoms of one body of one colour, in the body's frame.

    Attributes:
        body: the body's id in the model.
        rgb: colour, uint8 ``(3,)``.
        opacity: 0..1.
        vertices: float32 ``(V, 3)`` in the body's frame.
        faces: uint32 ``(F, 3)``.
    """

    body: int
    rgb: tuple[int, int, int]
    opacity: float
    vertices: np.ndarray
    faces: np.ndarray


def quat_to_matrix(wxyz: np.ndarray) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` of unit quaternions ``(..., 4)`` (w, x, y, z)."""
    w, x, y, z = np.moveaxis(np.asarray(wxyz, dtype=float), -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


def _primitive(kind: str, size: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Vertices and faces of a primitive geom of MuJoCo ``size``, centred on its frame (z its axis)."""
    import trimesh

    if kind == 'sphere':
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=float(size[0]))
    elif kind == 'ellipsoid':
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
        mesh.vertices = mesh.vertices * size[:3]
    elif kind == 'capsule':
        mesh = trimesh.creation.capsule(height=2 * float(size[1]), radius=float(size[0]), count=[12, 12])
    elif kind == 'cylinder':
        mesh = trimesh.creation.cylinder(radius=float(size[0]), height=2 * float(size[1]), sections=16)
    elif kind == 'box':
        mesh = trimesh.creation.box(extents=2 * np.asarray(size[:3], dtype=float))
    else:
        return None
    return np.asarray(mesh.vertices, dtype=float), np.asarray(mesh.faces, dtype=np.int64)


def _lod(model: Any) -> Any:
    try:
        from internutopia.core.backend.mujoco.render.lod import lod_model

        return lod_model(model)
    except Exception:  # noqa: BLE001 - no decimation available: draw the full meshes
        return model


def body_meshes(model: Any, static_only: bool | None = None) -> list[BodyMesh]:
    """The meshes of ``model``'s visible geoms, one per (body, colour) (see the module doc).

    ``static_only``: only bodies welded to the world (``True``), only moving ones (``False``), or all.
    """
    import mujoco

    model = _lod(model)
    kinds = {int(mujoco.mjtGeom.mjGEOM_SPHERE): 'sphere', int(mujoco.mjtGeom.mjGEOM_ELLIPSOID): 'ellipsoid',
             int(mujoco.mjtGeom.mjGEOM_CAPSULE): 'capsule', int(mujoco.mjtGeom.mjGEOM_CYLINDER): 'cylinder',
             int(mujoco.mjtGeom.mjGEOM_BOX): 'box', int(mujoco.mjtGeom.mjGEOM_MESH): 'mesh'}
    parts: dict[tuple[int, tuple[int, int, int], float], list[tuple[np.ndarray, np.ndarray]]] = {}
    for geom in range(model.ngeom):
        kind = kinds.get(int(model.geom_type[geom]))
        if kind is None or model.geom_group[geom] >= VISIBLE_GROUPS:
            continue
        body = int(model.geom_bodyid[geom])
        static = body == 0 or int(model.body_weldid[body]) == 0
        if static_only is not None and static != static_only:
            continue
        material = int(model.geom_matid[geom])
        rgba = model.mat_rgba[material] if material >= 0 else model.geom_rgba[geom]
        if rgba[3] <= 0.0:
            continue
        if kind == 'mesh':
            mesh = int(model.geom_dataid[geom])
            start, count = int(model.mesh_vertadr[mesh]), int(model.mesh_vertnum[mesh])
            first, nface = int(model.mesh_faceadr[mesh]), int(model.mesh_facenum[mesh])
            shape: tuple[np.ndarray, np.ndarray] | None = (np.asarray(model.mesh_vert[start:start + count], dtype=float),
                                                          np.asarray(model.mesh_face[first:first + nface], dtype=np.int64))
        else:
            shape = _primitive(kind, model.geom_size[geom])
        if shape is None or not len(shape[1]):
            continue
        vertices = shape[0] @ quat_to_matrix(model.geom_quat[geom]).T + model.geom_pos[geom]
        rgb = tuple(int(round(float(c) * 255)) for c in rgba[:3])
        parts.setdefault((body, rgb, round(float(rgba[3]), 2)), []).append((vertices, shape[1]))  # type: ignore[arg-type]
    out = []
    for (body, rgb, opacity), pieces in parts.items():
        offsets = np.cumsum([0] + [len(v) for v, _ in pieces[:-1]])
        vertices = np.concatenate([v for v, _ in pieces]).astype(np.float32)
        faces = np.concatenate([f + o for (_, f), o in zip(pieces, offsets, strict=True)]).astype(np.uint32)
        out.append(BodyMesh(body, rgb, opacity, vertices, faces))
    return out
