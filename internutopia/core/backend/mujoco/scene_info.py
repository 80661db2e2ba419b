"""Geometric facts about a scene for episode generation: where a round robot can stand."""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

__all__ = ['free_cells', 'obstacle_boxes']

_IGNORED_TYPES = (mujoco.mjtGeom.mjGEOM_PLANE, mujoco.mjtGeom.mjGEOM_HFIELD)


def _compiled(spec_or_model: mujoco.MjSpec | mujoco.MjModel) -> mujoco.MjModel:
    if isinstance(spec_or_model, mujoco.MjModel):
        return spec_or_model
    if isinstance(spec_or_model, mujoco.MjSpec):
        return spec_or_model.copy().compile()  # leave the caller's spec untouched (and attachable)
    raise TypeError(f'expected an MjSpec or MjModel, got {type(spec_or_model).__name__}')


def obstacle_boxes(spec_or_model: mujoco.MjSpec | mujoco.MjModel,
                   z_range: Sequence[float] = (0.02, 2.0),
                   include_dynamic: bool = False) -> np.ndarray:
    """World-axis-aligned xy boxes ``(m, 4)`` = ``[xmin, ymin, xmax, ymax]`` of the colliding geoms.

    A geom counts when it collides (``contype`` or ``conaffinity`` non-zero), is not a plane or a height
    field, belongs to a body welded to the world (unless ``include_dynamic``; then at its initial pose)
    and its vertical extent overlaps ``z_range`` (so floor slabs below and ceilings above are ignored).
    Boxes come from the compiled geom bounding boxes (``geom_aabb``), rotated into the world:
    exact for axis-aligned boxes, conservative otherwise.
    """
    model = _compiled(spec_or_model)
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    keep = (model.geom_contype != 0) | (model.geom_conaffinity != 0)
    keep &= ~np.isin(model.geom_type, [int(t) for t in _IGNORED_TYPES])
    if not include_dynamic:
        keep &= model.body_weldid[model.geom_bodyid] == 0
    ids = np.flatnonzero(keep)
    if ids.size == 0:
        return np.zeros((0, 4))
    aabb = model.geom_aabb[ids]  # local centre (3), local half sizes (3)
    xmat = data.geom_xmat[ids].reshape(-1, 3, 3)
    centre = data.geom_xpos[ids] + np.einsum('kij,kj->ki', xmat, aabb[:, :3])
    half = np.einsum('kij,kj->ki', np.abs(xmat), aabb[:, 3:])
    zlo, zhi = float(z_range[0]), float(z_range[1])
    inside = (centre[:, 2] + half[:, 2] > zlo) & (centre[:, 2] - half[:, 2] < zhi)
    centre, half = centre[inside], half[inside]
    return np.concatenate([centre[:, :2] - half[:, :2], centre[:, :2] + half[:, :2]], axis=1)


def free_cells(spec_or_model: mujoco.MjSpec | mujoco.MjModel,
               bounds: Sequence[float] | Sequence[Sequence[float]] | None,
               resolution: float = 0.25,
               robot_radius: float = 0.3,
               *,
               z_range: Sequence[float] = (0.02, 2.0),
               include_dynamic: bool = False) -> np.ndarray:
    """Grid points ``(k, 2)`` (x, y in the scene's frame) at least ``robot_radius`` from every obstacle.

    Args:
        spec_or_model: the scene, as a spec (compiled on a copy) or a compiled model.
        bounds: the region, ``(xmin, ymin, xmax, ymax)`` or ``((xmin, ymin), (xmax, ymax))``; ``None``
            uses the box around all obstacles, snapped outwards to multiples of ``resolution``.
        resolution: grid spacing in metres; the grid starts at ``(xmin, ymin)`` and includes the upper
            bounds when they fall on it.
        robot_radius: clearance in metres between a point and every obstacle footprint.
        z_range: only obstacles whose vertical extent overlaps this interval count (see
            :func:`obstacle_boxes`).
        include_dynamic: also count geoms of moving bodies, at their initial pose.

    Obstacles are the xy footprints of :func:`obstacle_boxes` (boxes, cylinders, spheres, capsules,
    ellipsoids, meshes; planes ignored), bounded by world-axis-aligned rectangles.
    """
    if resolution <= 0:
        raise ValueError(f'resolution must be positive, got {resolution}')
    if robot_radius < 0:
        raise ValueError(f'robot_radius must be non-negative, got {robot_radius}')
    boxes = obstacle_boxes(spec_or_model, z_range=z_range, include_dynamic=include_dynamic)
    if bounds is None:
        if len(boxes) == 0:
            raise ValueError('bounds=None needs at least one obstacle to take the bounds from')
        lo, hi = boxes[:, :2].min(axis=0), boxes[:, 2:].max(axis=0)
        # snapped outwards to multiples of the resolution (rounding noise of the boxes aside)
        lo = np.floor(lo / resolution + 1e-6) * resolution
        hi = np.ceil(hi / resolution - 1e-6) * resolution
    else:
        b = np.asarray(bounds, dtype=float).reshape(-1)
        if b.size != 4:
            raise ValueError(f'bounds must be (xmin, ymin, xmax, ymax), got {bounds!r}')
        lo, hi = b[:2], b[2:]
        if np.any(hi < lo):
            raise ValueError(f'bounds must have xmin <= xmax and ymin <= ymax, got {bounds!r}')
    nx, ny = (np.floor((hi - lo) / resolution + 1e-9).astype(int) + 1)
    xs = lo[0] + resolution * np.arange(nx)
    ys = lo[1] + resolution * np.arange(ny)
    gx, gy = np.meshgrid(xs, ys, indexing='ij')
    points = np.stack([gx.ravel(), gy.ravel()], axis=1)
    if len(boxes) == 0 or len(points) == 0:
        return points
    free = np.ones(len(points), dtype=bool)
    r2 = robot_radius * robot_radius
    chunk = max(1, 4_000_000 // max(len(boxes), 1))
    for start in range(0, len(points), chunk):
        p = points[start:start + chunk, None, :]  # (n, 1, 2)
        d = np.maximum(np.maximum(boxes[None, :, :2] - p, p - boxes[None, :, 2:]), 0.0)  # (n, m, 2)
        dist2 = (d * d).sum(axis=2)
        # strictly inside counts as blocked even with a zero radius
        inside = np.all((p >= boxes[None, :, :2]) & (p <= boxes[None, :, 2:]), axis=2)
        free[start:start + chunk] = ~np.any((dist2 < r2) | inside, axis=1)
    return points[free]
