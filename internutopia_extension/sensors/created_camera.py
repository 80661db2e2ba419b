"""Cameras made at run time by ``ICamera.create(...)`` (InternUtopia's factory), as its sensors do.

InternUtopia's ``RepCamera`` and the cameras of downstream sensors call ``ICamera.create(name=...,
prim_path='<robot prim>/<link>/<camera>', rgba=..., distance_to_image_plane=...,
bounding_box_2d_tight=..., camera_params=..., resolution=..., translation=..., orientation=...)``
in a sensor's ``post_reset``. The per-slot layer answers with an ``ICamera`` over a
:class:`CreatedCamera` (made by ``RepCamera.create_camera``, which it finds in the sensor registry)
of the robot and slot whose sensor is being reset: a pinhole camera fixed to the robot body named in ``prim_path`` (the deepest
path component that is a body of the robot), at ``translation`` (body frame) or ``position``
(env-local, kept relative to the body from then on) with ``orientation`` (wxyz; identity looks
along the body's -z with +y up, as a USD camera prim does). A ``prim_path`` under the robot prim
that names no link (``'<robot prim>/<camera>'``, as InternNav's top-down camera) puts the camera
on the robot's root body, ``translation`` in the robot prim's frame (see
:meth:`CreatedCamera._resolve_body`). Its vertical field of view is :data:`CREATED_FOVY_DEG` and it
clips at :data:`CREATED_CLIPPING` metres. An output the camera was not made with reads ``None``
(as InternUtopia's camera answers).

A frame is drawn on the first ``get_*`` call of a step (one frame per camera and step, shared by
the calls of that step), with the slot's own scene only, like every camera here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mujoco
import numpy as np

from internutopia.core.backend.mujoco.render import FrameRequest, pack_render
from internutopia.core.backend.mujoco.render.cameras import default_render_threads
from internutopia.core.backend.mujoco.render.semantics import SemanticTable
from internutopia_extension.sensors.annotations import isaac_camera_params, slot_part_labels, tight_boxes, world_origins
from internutopia_extension.sensors.camera_mounts import BODY_ALIASES, CameraMount, camera_mounts, is_third_person

#: Vertical field of view of a created camera (degrees): a RepCameraCfg's default.
CREATED_FOVY_DEG = 60.0
#: Near and far clipping of a created camera (m).
CREATED_CLIPPING = (0.01, 1000.0)
#: InternUtopia's default resolution of a camera made without one.
DEFAULT_RESOLUTION = (64, 64)


class CreatedCamera:
    """A camera made by ``ICamera.create`` on a body of robot group ``group`` in ``slot`` (see the
    module docstring). It answers as a robot camera sensor does for its slot (``camera_pose``,
    ``set_camera_pose``, ``camera_params``) plus :meth:`reading`; the per-slot layer's ``ICamera``
    is the face users see."""

    def __init__(self, group: Any, slot: int, *, name: str, prim_path: str | None, rgba: bool,
                 distance_to_image_plane: bool, bounding_box_2d_tight: bool, camera_params: bool,
                 resolution: Sequence[int] | None, position: Sequence[float] | None,
                 translation: Sequence[float] | None, orientation: Sequence[float] | None) -> None:
        self.group, self.slot = group, int(slot)
        self.name, self.prim_path = name, prim_path
        #: Which outputs the camera was made with (InternUtopia's arguments).
        self.with_rgba, self.with_depth = bool(rgba), bool(distance_to_image_plane)
        self.with_boxes, self.with_params = bool(bounding_box_2d_tight), bool(camera_params)
        width, height = (int(v) for v in (resolution or DEFAULT_RESOLUTION))
        if width < 1 or height < 1:
            raise ValueError(f'camera {name!r}: resolution is (width, height) in pixels, each >= 1; got {resolution}')
        self.resolution = (width, height)
        self.body, mount, origin = self._resolve_body(prim_path)
        #: Where the frame that ``translation`` is given in sits on the body (its origin but for a
        #: camera right under the robot prim: the prim's frame, see :meth:`_resolve_body`).
        self.local_position = origin.copy()
        self.local_quat = np.array([1.0, 0.0, 0.0, 0.0])
        if mount is not None and translation is None and position is None and orientation is None:
            # an upstream link folded into another body here: where the built-in camera goes on it
            self.local_position = np.asarray(mount.position, dtype=float)
            self.local_quat = np.asarray(mount.orientation, dtype=float)
        quat = None if orientation is None else np.asarray(orientation, dtype=float)
        if quat is not None and not (quat.shape == (4,) and np.isfinite(quat).all() and np.linalg.norm(quat) > 0):
            raise ValueError(f'camera {name!r}: orientation must be a non-zero wxyz quaternion; got {orientation}')
        for what, value in (('translation', translation), ('position', position)):
            if value is not None and not (np.shape(value) == (3,) and np.isfinite(np.asarray(value, dtype=float)).all()):
                raise ValueError(f'camera {name!r}: {what} must be three finite numbers (m); got {value}')
        if translation is not None:
            self.local_position = origin + np.asarray(translation, dtype=float)
            if quat is not None:
                self.local_quat = quat / np.linalg.norm(quat)
        elif position is not None or quat is not None:
            self.set_camera_pose(self.slot, None if position is None else np.asarray(position, dtype=float), quat)
        self._stamp = np.nan
        self._frame: dict[str, Any] = {}
        self._table: tuple[tuple, SemanticTable] | None = None

    # -- where it is ---------------------------------------------------------------------------
    def _resolve_body(self, prim_path: str | None) -> tuple[int, CameraMount | None, np.ndarray]:
        """The body the camera goes on, the robot's camera mount when ``prim_path`` names the
        mount's body (``'/aliengo/trunk/Camera'``) or a link of InternUtopia's asset that this
        robot's model folds into another body (``'/h1/logo_link/Camera'``: H1's head logo, part of
        its torso here), as a configured camera with that ``prim_path`` is mounted
        (:meth:`RepCamera.resolve_mount`), and the origin of the frame ``translation`` is given in,
        in the body's frame.

        A camera right under the robot prim, on no link (InternNav's ``'/h1/topdown_camera_500'``,
        InternManip's ``'/franka/franka/obs_camera'``: an Xform of the robot prim that is no link),
        goes on the robot's root body (:attr:`BaseRobot.base_body`) in the robot prim's frame: at
        its origin when no pose is given (the root body's, but for a root body that rides off it,
        as Jetbot's chassis does, :attr:`BaseRobot.root_offset`)."""
        group = self.group
        prefix = f'{group.name}/'
        bodies = {name[len(prefix):]: i for i, name in enumerate(group.bound_world.lookup.names('body'))
                  if name.startswith(prefix)}
        parts = [p for p in (prim_path or '').split('/') if p]
        mount = camera_mounts(group).get('third' if is_third_person(parts[-1]) else 'first') if parts else None
        origin = np.zeros(3)
        for part in reversed(parts[:-1]):
            if part in bodies:  # (on the mount's own body: at the mount, as a configured camera is)
                return bodies[part], mount if mount is not None and mount.body == part else None, origin
        if any(part in BODY_ALIASES for part in parts[:-1]):
            if mount is not None and mount.body in bodies:
                return bodies[mount.body], mount, origin
        robot_prim = [p for p in (getattr(group.config, 'prim_path', None) or f'/{group.name}').split('/') if p]
        if len(parts) > len(robot_prim) and parts[:len(robot_prim)] == robot_prim and group.base_body in bodies:
            return bodies[group.base_body], None, origin - np.asarray(group.root_offset, dtype=float)
        raise ValueError(f'camera {self.name!r}: prim_path {prim_path!r} names no body of robot {group.name!r} before '
                         f"the camera's own name and is not under the robot's prim {'/' + '/'.join(robot_prim)!r} "
                         f"(a camera goes on a link, '<robot prim>/<link>/<camera>', or on the robot prim, "
                         f"'<robot prim>/<camera>'); bodies: {sorted(bodies)}")

    def _body_pose(self) -> tuple[np.ndarray, np.ndarray]:
        data = self.group.bound_world.mjdata(self.slot)
        return data.xpos[self.body].copy(), data.xquat[self.body].copy()

    def camera_pose(self, slot: int) -> tuple[np.ndarray, np.ndarray]:
        """The camera's env-local position and wxyz orientation now (``slot`` is its own)."""
        body_pos, body_quat = self._body_pose()
        position, orientation = np.zeros(3), np.zeros(4)
        mujoco.mju_rotVecQuat(position, self.local_position, body_quat)
        mujoco.mju_mulQuat(orientation, body_quat, self.local_quat)
        return body_pos + position, orientation

    def set_camera_pose(self, slot: int, position: np.ndarray | None, orientation: np.ndarray | None) -> None:
        """Move the camera to an env-local pose (``None`` keeps that part); it follows its body from there."""
        current_pos, current_quat = self.camera_pose(slot)
        position = current_pos if position is None else np.asarray(position, dtype=float)
        orientation = current_quat if orientation is None else np.asarray(orientation, dtype=float)
        norm = float(np.linalg.norm(orientation))
        if not norm > 0:
            raise ValueError(f'camera {self.name!r}: orientation must be a non-zero wxyz quaternion; got {orientation}')
        body_pos, body_quat = self._body_pose()
        inverse = np.zeros(4)
        mujoco.mju_negQuat(inverse, body_quat)
        mujoco.mju_rotVecQuat(self.local_position, position - body_pos, inverse)
        mujoco.mju_mulQuat(self.local_quat, inverse, orientation / norm)
        self._stamp = np.nan  # the next reading shows the new view

    # -- frames ---------------------------------------------------------------------------------
    def reading(self, slot: int) -> dict[str, Any]:
        """This step's frame (drawn on the first call of a step): the keys of the enabled outputs,
        ``'rgba'``, ``'depth'``, ``'bounding_box_2d_tight'`` and ``'camera_params'``."""
        pack = self.group.bound_world
        time = float(pack.data.time[self.slot])
        if time != self._stamp:
            self._frame = self._draw(pack)
            self._stamp = time
        return self._frame

    def _draw(self, pack: Any) -> dict[str, Any]:
        width, height = self.resolution
        near, far = CREATED_CLIPPING
        position, quat = self.camera_pose(self.slot)
        xmat = np.zeros(9)
        mujoco.mju_quat2Mat(xmat, quat)
        rgba = np.empty((height, width, 4), np.uint8) if self.with_rgba else None
        depth = np.empty((height, width), np.float32) if self.with_depth else None
        ids = np.empty((height, width), np.int32) if self.with_boxes else None
        table = self._semantic_table(pack) if self.with_boxes else None
        request = FrameRequest(self.slot, -1, rgba, depth, near, far, segmentation=ids, view=(position, xmat, CREATED_FOVY_DEG),
                               geom_instances=None if table is None else table.geom_instance[1:])
        sim = self.group.sim
        threads = getattr(sim, 'rendering_threads', None) or default_render_threads()  # (shares the robot cameras' renderer)
        pack_render(pack).cameras(width, height, 0, lod=bool(getattr(sim, 'rendering_lod', True)), threads=threads).render([request])
        frame: dict[str, Any] = {}
        if rgba is not None:
            frame['rgba'] = rgba
        if depth is not None:
            frame['depth'] = depth
        params = isaac_camera_params(width, height, CREATED_FOVY_DEG, near, far, request.position[None],
                                     request.xmat.reshape(1, 3, 3), origins=world_origins(self.group, [self.slot]))
        if self.with_params:
            frame['camera_params'] = {key: value[0] for key, value in params.items()}
        if ids is not None and table is not None:
            data, info = tight_boxes(table.instance_image(ids)[None], [table], [request.alone_pixels])
            frame['bounding_box_2d_tight'] = {'data': data[0], 'info': info[0]}
        return frame

    def _semantic_table(self, pack: Any) -> SemanticTable:
        labels = slot_part_labels(self.group, self.slot)
        drawn = pack.drawn_model  # (the geoms the frame's ids name: the physics model may leave some out)
        key = (id(drawn), tuple(sorted(labels.items(), key=lambda item: item[0])))
        if self._table is None or self._table[0] != key:
            self._table = (key, SemanticTable.build(drawn, labels))
        return self._table[1]

    def camera_params(self, slot: int) -> dict[str, Any] | None:
        """Isaac's ``camera_params`` keys of this step's view (the view transform in the world
        frame, the slot's origin included, as Isaac's annotator gives it); ``None`` for a camera
        made with ``camera_params=False`` (as InternUtopia's camera answers)."""
        return self.reading(slot)['camera_params'] if self.with_params else None


__all__ = ['CREATED_CLIPPING', 'CREATED_FOVY_DEG', 'CreatedCamera']
