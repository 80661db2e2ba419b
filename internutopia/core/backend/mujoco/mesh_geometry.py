"""Geometry of scene meshes: rotations, polygon triangulation, flat-mesh detection, volumes.

Pure numpy (and MuJoCo's quaternion helpers) over vertex and index arrays; the USD scene builder
(:mod:`internutopia.core.backend.mujoco.usd_builder`) uses these to turn stage meshes into geoms.

>>> import numpy as np
>>> triangulate([4], [0, 1, 2, 3]).tolist()  # a quad becomes a fan of two triangles
[[0, 1, 2], [0, 2, 3]]
>>> mesh_volume(np.array([[0., 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]), np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]))
0.16666666666666666
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

__all__ = [
    'connected_components', 'flatness', 'front_side', 'mat_to_quat', 'mesh_volume', 'polar_decomposition', 'primitive_volume',
    'quat_to_mat', 'triangulate',
]

#: Thickness / extent below which a mesh counts as flat.
FLAT_REL_TOL = 1e-5


def quat_to_mat(quat: np.ndarray) -> np.ndarray:
    """The 3x3 rotation matrix of a wxyz quaternion."""
    mat = np.zeros(9)
    mujoco.mju_quat2Mat(mat, np.asarray(quat, dtype=float))
    return mat.reshape(3, 3)


def mat_to_quat(mat: np.ndarray) -> np.ndarray:
    """The wxyz quaternion of a 3x3 rotation matrix."""
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(mat, dtype=float).reshape(9))
    return quat




def triangulate(counts: np.ndarray, indices: np.ndarray, holes: np.ndarray | None = None) -> np.ndarray:
    """Fan-triangulate polygons given as face vertex counts and flat indices: (m, 3) int array."""
    counts = np.asarray(counts, dtype=np.int64).reshape(-1)
    indices = np.asarray(indices, dtype=np.int64).reshape(-1)
    if counts.size == 0 or counts.sum() != indices.size:
        return np.zeros((0, 3), dtype=np.int64)
    starts = np.cumsum(counts) - counts
    ntri = np.maximum(counts - 2, 0)
    if holes is not None and len(holes):
        keep = np.ones(counts.size, dtype=bool)
        holes = np.asarray(holes, dtype=np.int64)
        keep[holes[(holes >= 0) & (holes < counts.size)]] = False
        ntri = np.where(keep, ntri, 0)
    total = int(ntri.sum())
    if total == 0:
        return np.zeros((0, 3), dtype=np.int64)
    face_start = np.repeat(starts, ntri)
    offsets = np.arange(total) - np.repeat(np.cumsum(ntri) - ntri, ntri) + 1  # 1 .. n-2 within each face
    return np.stack([indices[face_start], indices[face_start + offsets], indices[face_start + offsets + 1]], axis=1)


def connected_components(tris: np.ndarray, nvert: int) -> np.ndarray:
    """Connected-component label of every vertex (by shared indices)."""
    labels = np.arange(nvert)
    while True:
        tri_min = labels[tris].min(axis=1)
        new = labels.copy()
        for k in range(3):
            np.minimum.at(new, tris[:, k], tri_min)
        new = new[new]
        while True:  # pointer jumping
            nxt = new[new]
            if np.array_equal(nxt, new):
                break
            new = nxt
        if np.array_equal(new, labels):
            return labels
        labels = new


def flatness(verts: np.ndarray) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray]:
    """(is_flat, centre, axes (columns u, v, n), half extents along the axes) of a point set."""
    lo, hi = verts.min(axis=0), verts.max(axis=0)
    centre = (lo + hi) / 2
    centred = verts - centre
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    axes = vt.T
    if axes.shape[1] < 3:  # fewer than 3 points
        axes = np.eye(3)
    if np.linalg.det(axes) < 0:
        axes[:, 2] *= -1
    # In-plane axes: the principal ones, or the scene's x axis projected into the plane when that gives
    # a smaller bounding rectangle (principal axes of a square are arbitrary).
    n = axes[:, 2]
    u = np.array([1.0, 0.0, 0.0]) - n[0] * n
    if np.linalg.norm(u) > 1e-6:
        u /= np.linalg.norm(u)
        candidate = np.stack([u, np.cross(n, u), n], axis=1)
        extent_pca = np.ptp(centred @ axes, axis=0)
        extent_x = np.ptp(centred @ candidate, axis=0)
        if extent_x[0] * extent_x[1] <= extent_pca[0] * extent_pca[1] * (1 + 1e-9):
            axes = candidate
    proj = centred @ axes
    plo, phi = proj.min(axis=0), proj.max(axis=0)
    extent = phi - plo
    flat = extent[2] <= FLAT_REL_TOL * max(extent.max(), 1e-12) + 1e-12
    centre = centre + axes @ ((plo + phi) / 2)
    return bool(flat), centre, axes, extent / 2


def front_side(verts: np.ndarray, tris: np.ndarray, normal: np.ndarray) -> float:
    """Which side of a flat mesh its faces show, along ``normal``: ``1.0`` when their winding (the
    right-hand rule, area-weighted) faces along it, ``-1.0`` against it, ``0.0`` when the faces
    cancel out (a double-sided mesh: front and back triangles alike).

    >>> quad = np.array([[0.0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]])
    >>> front_side(quad, np.array([[0, 1, 2], [0, 2, 3]]), np.array([0.0, 0, 1]))
    1.0
    """
    a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    area_normal = np.cross(b - a, c - a).sum(axis=0)
    total = float(np.linalg.norm(np.cross(b - a, c - a), axis=1).sum())
    along = float(area_normal @ normal)
    if total <= 0.0 or abs(along) < 0.5 * total:  # (mostly cancelling: no side to prefer)
        return 0.0
    return 1.0 if along > 0 else -1.0


def polar_decomposition(linear: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``linear = rot @ stretch`` with ``rot`` a proper rotation (``stretch`` symmetric up to a mirror)."""
    u, sigma, vt = np.linalg.svd(linear)
    rot = u @ vt
    if np.linalg.det(rot) < 0:
        u = u.copy()
        u[:, 2] *= -1
        rot = u @ vt
    stretch = rot.T @ linear
    stretch[np.abs(stretch) < 1e-12] = 0.0
    if np.allclose(stretch, np.eye(3), atol=1e-9):
        stretch = np.eye(3)
    return rot, stretch


def mesh_volume(verts: np.ndarray, tris: np.ndarray) -> float:
    """Enclosed volume of a closed triangle mesh; its bounding box volume when it is open or flat."""
    a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    volume = abs(float(np.einsum('ij,ij->i', a, np.cross(b, c)).sum()) / 6.0)
    box = float(np.prod(verts.max(axis=0) - verts.min(axis=0)))
    return volume if volume > 1e-3 * box else box


def primitive_volume(geom_type: mujoco.mjtGeom, size: np.ndarray) -> float:
    """Volume of a MuJoCo primitive geom of ``size`` (0 for planes and other unbounded types)."""
    if geom_type == mujoco.mjtGeom.mjGEOM_BOX:
        return 8.0 * float(np.prod(size))
    if geom_type == mujoco.mjtGeom.mjGEOM_SPHERE:
        return 4.0 / 3.0 * math.pi * size[0] ** 3
    if geom_type == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
        return 4.0 / 3.0 * math.pi * float(np.prod(size))
    if geom_type == mujoco.mjtGeom.mjGEOM_CAPSULE:
        return math.pi * size[0] ** 2 * (2 * size[1] + 4.0 / 3.0 * size[0])
    if geom_type == mujoco.mjtGeom.mjGEOM_CYLINDER:
        return math.pi * size[0] ** 2 * 2 * size[1]
    return 0.0
