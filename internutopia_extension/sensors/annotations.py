"""A camera's annotations, batched over slots: segmentation images, tight 2D boxes, landmarks,
and the Isaac Sim ``camera_params`` keys.

Everything here works on whole images of all the slots read at once (numpy, no per-pixel
Python). Layouts follow Isaac Sim's Replicator annotators, which InternUtopia's ``RepCamera``
returns: ``bounding_box_2d_tight`` is ``{'data': structured array, 'info': {'idToLabels',
'bboxIds', 'primPaths'}}`` with one row per visible labelled instance (fields of
:data:`BOX_DTYPE`), and ``landmarks`` the labels in view. See ``docs/perception.md``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from internutopia.core.backend.mujoco.render.semantics import SemanticTable
from internutopia.core.util.jit import Kernel

#: One row of ``bounding_box_2d_tight``: semantic id, inclusive pixel bounds, occlusion ratio (Isaac's layout).
BOX_DTYPE = np.dtype([('semanticId', '<u4'), ('x_min', '<i4'), ('y_min', '<i4'), ('x_max', '<i4'), ('y_max', '<i4'),
                      ('occlusionRatio', '<f4')])
#: Horizontal aperture (mm) the Isaac ``camera_params`` report (Isaac Sim's default camera's).
HORIZONTAL_APERTURE_MM = 20.955
#: OpenGL camera (x right, y up, looking along -z) to the ROS/OpenCV camera (x right, y down, along +z).
GL_TO_CV = np.diag([1.0, -1.0, -1.0, 1.0])


def slot_part_labels(robot: Any, slot: int) -> dict[str, str | None]:
    """Semantic labels of the robots (by type) and objects (their config's ``label``, else their
    name) of ``slot``'s episode, by name, as seen from ``robot`` (a robot group)."""
    view = robot.env_view
    task = view.task_config(slot) if view is not None else None
    if task is None:
        return {robot.name: robot.config.type}
    labels: dict[str, str | None] = {config.name: config.type for config in task.robots}
    for obj in task.objects or []:
        label = getattr(obj, 'label', None)
        labels[obj.name] = obj.name if label is None else label
    return labels


def world_origins(robot: Any, slots: Any) -> np.ndarray:
    """The world origins ``(len(slots), 3)`` of ``slots`` (their env offsets: where InternUtopia
    places env ``i``; world = env-local + origin), as seen from ``robot`` (a robot group); zeros
    for a group outside an env."""
    slots = np.asarray(slots, dtype=np.intp).reshape(-1)
    view = robot.env_view
    return np.zeros((len(slots), 3)) if view is None else view.origins_of(slots)


def _box_pass(instances: np.ndarray, count: int, bounds: np.ndarray, pixels: np.ndarray) -> None:
    """Compiled twin of :func:`visible_boxes_numpy`: one pass over the pixels, per (frame, instance)
    its pixel count and ``[x_min, y_min, x_max, y_max]`` (``bounds`` starts as ``[W, H, -1, -1]``)."""
    frames, height, width = instances.shape
    for frame in range(frames):
        base = frame * count
        for row in range(height):
            for col in range(width):
                thing = instances[frame, row, col]
                if thing == 0:
                    continue
                key = base + thing
                pixels[key] += 1
                if col < bounds[key, 0]:
                    bounds[key, 0] = col
                if row < bounds[key, 1]:
                    bounds[key, 1] = row
                if col > bounds[key, 2]:
                    bounds[key, 2] = col
                if row > bounds[key, 3]:
                    bounds[key, 3] = row


_box_kernel = Kernel(_box_pass)


def visible_boxes(instances: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`visible_boxes_numpy`, in one compiled pass when numba is there."""
    if not _box_kernel.available:
        return visible_boxes_numpy(instances, count)
    frames, height, width = instances.shape
    bins = frames * count
    bounds = np.empty((bins, 4), dtype=np.int64)
    bounds[:] = (width, height, -1, -1)
    pixels = np.zeros(bins, dtype=np.int64)
    _box_kernel(np.ascontiguousarray(instances), int(count), bounds, pixels)
    present = np.flatnonzero(pixels)
    return np.stack([present // count, present % count], axis=1), bounds[present], pixels[present]


def visible_boxes_numpy(instances: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tight boxes of the instances in a stack of instance images.

    ``instances`` is ``int (N, H, W)`` (0: no instance), ``count`` is one more than the largest
    instance id. Returns ``(frame_and_instance (M, 2), bounds (M, 4) [x_min, y_min, x_max, y_max]
    inclusive, pixels (M,))`` for each (frame, instance) that has at least one pixel, sorted by
    frame then instance. Three ``bincount`` passes over the pixels (counts, and which columns and
    rows each (frame, instance) has pixels in), no sort.
    """
    frames, height, width = instances.shape
    keys = (np.arange(frames, dtype=np.int64)[:, None, None] * count + instances).reshape(frames, height, width)
    bins = frames * count
    pixels = np.bincount(keys.reshape(-1), minlength=bins)
    columns = np.bincount((keys * width + np.arange(width)).reshape(-1), minlength=bins * width).reshape(bins, width) > 0
    rows = np.bincount((keys * height + np.arange(height)[:, None]).reshape(-1), minlength=bins * height).reshape(bins, height) > 0
    present = np.flatnonzero((pixels > 0) & (np.arange(bins) % count != 0))
    columns, rows = columns[present], rows[present]
    bounds = np.stack([columns.argmax(axis=1), rows.argmax(axis=1),
                       width - 1 - columns[:, ::-1].argmax(axis=1), height - 1 - rows[:, ::-1].argmax(axis=1)], axis=1)
    owners = np.stack([present // count, present % count], axis=1)
    return owners, bounds, pixels[present]


def tight_boxes(instances: np.ndarray, tables: list[SemanticTable], alone_pixels: list[np.ndarray | None]
                ) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    """``bounding_box_2d_tight`` data and info of each frame of ``instances`` (``int (N, H, W)``),
    frame ``i`` labelled by ``tables[i]``.

    A box bounds the visible pixels of one labelled instance; an instance with no visible pixel
    has no box; a thing cut by the image edge is boxed within the image. ``occlusionRatio`` is
    ``1 - visible pixels / pixels it covers drawn alone`` (``alone_pixels[i]``, by instance id, from
    the renderer: within the image, so the edge is not occlusion, and its own parts hiding each
    other are not either); 0 without ``alone_pixels``.
    """
    frames = instances.shape[0]
    count = max(len(t.instance_names) for t in tables)
    owners, bounds, pixels = visible_boxes(instances, count)
    data, info = [], []
    for frame in range(frames):
        table = tables[frame]
        mine = owners[:, 0] == frame
        ids, box, seen = owners[mine, 1], bounds[mine], pixels[mine]
        rows = np.zeros(len(ids), dtype=BOX_DTYPE)
        rows['semanticId'] = table.instance_semantic[ids]
        rows['x_min'], rows['y_min'], rows['x_max'], rows['y_max'] = box.T
        alone = alone_pixels[frame]
        if alone is not None and len(ids):
            whole = np.where(ids < len(alone), alone[np.minimum(ids, len(alone) - 1)], 0)
            rows['occlusionRatio'] = np.clip(1.0 - seen / np.maximum(whole, seen), 0.0, 1.0)
        data.append(rows)
        info.append({'idToLabels': table.id_to_labels(), 'bboxIds': ids.astype(np.int32),
                     'primPaths': [table.instance_names[i] for i in ids.tolist()]})
    return data, info


def landmarks(boxes: np.ndarray, id_to_labels: dict[str, dict[str, str]]) -> list[str]:
    """The labels in view (one per semantic id with a box, in id order): InternUtopia's ``landmarks``."""
    return [id_to_labels[str(i)]['class'] for i in np.unique(boxes['semanticId']).tolist()]


def isaac_camera_params(width: int, height: int, fovy_deg: float, near: float, far: float,
                        positions: np.ndarray, rotations: np.ndarray, origins: np.ndarray | None = None) -> dict[str, Any]:
    """The keys of Isaac Sim's ``camera_params`` annotator for ``N`` frames of one camera.

    ``positions`` ``(N, 3)`` and ``rotations`` ``(N, 3, 3)`` are the camera poses (env-local; the
    camera looks along its -z with +y up) and ``origins`` ``(N, 3)`` the world origins of their
    slots (``None``: zeros). The view transform is in the world frame, as Isaac's annotator gives
    it for a camera of env ``i`` placed at its env offset:
    ``cameraViewTransform.reshape(4, 4).T`` maps world points (env-local + the slot's origin) to
    the camera frame, so InternUtopia's un-projection, which subtracts the camera's ``offset``
    afterwards, gives env-local points. Matrices are flattened row-major in USD's row-vector
    convention, as Isaac gives them; the focal length and aperture are in millimetres (Isaac's
    default horizontal aperture), so that ``width * cameraFocalLength / cameraAperture[0]`` is the
    focal length in pixels. Values are ``(N, ...)`` arrays (strings: lists).
    """
    frames = len(positions)
    if origins is not None:
        positions = np.asarray(positions, dtype=float) + np.asarray(origins, dtype=float)
    tan_y = math.tan(math.radians(fovy_deg) / 2)
    aperture = np.array([HORIZONTAL_APERTURE_MM, HORIZONTAL_APERTURE_MM * height / width])
    focal_mm = (aperture[1] / 2) / tan_y
    view = np.zeros((frames, 4, 4))
    view[:, :3, :3] = np.transpose(rotations, (0, 2, 1))
    view[:, :3, 3] = -np.einsum('nji,nj->ni', rotations, positions)
    view[:, 3, 3] = 1.0
    aspect = width / height
    projection = np.zeros((4, 4))  # OpenGL's perspective of this camera
    projection[0, 0], projection[1, 1] = 1 / (tan_y * aspect), 1 / tan_y
    projection[2, 2], projection[2, 3] = -(far + near) / (far - near), -2 * far * near / (far - near)
    projection[3, 2] = -1.0

    def rows(value: Any) -> np.ndarray:
        return np.broadcast_to(np.asarray(value), (frames, *np.shape(value))).copy()

    return {
        'cameraAperture': rows(aperture),
        'cameraApertureOffset': rows(np.zeros(2)),
        'cameraFisheyeLensP': rows(np.zeros(2)),
        'cameraFisheyeLensS': rows(np.zeros(4)),
        'cameraFisheyeMaxFOV': rows(0.0),
        'cameraFisheyeNominalHeight': rows(np.int32(0)),
        'cameraFisheyeNominalWidth': rows(np.int32(0)),
        'cameraFisheyeOpticalCentre': rows(np.zeros(2)),
        'cameraFisheyePolynomial': rows(np.zeros(5)),
        'cameraFocalLength': rows(focal_mm),
        'cameraFocusDistance': rows(0.0),
        'cameraFStop': rows(0.0),
        'cameraModel': ['pinhole'] * frames,
        'cameraNearFar': rows(np.array([near, far])),
        'cameraProjection': rows(projection.T.reshape(16)),
        'cameraViewTransform': np.transpose(view, (0, 2, 1)).reshape(frames, 16),
        'metersPerSceneUnit': rows(1.0),
        'renderProductResolution': rows(np.array([width, height], dtype=np.int32)),
    }


__all__ = ['BOX_DTYPE', 'GL_TO_CV', 'HORIZONTAL_APERTURE_MM', 'isaac_camera_params', 'landmarks', 'slot_part_labels',
           'tight_boxes', 'visible_boxes', 'visible_boxes_numpy', 'world_origins']
