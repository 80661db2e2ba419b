"""Cameras made at run time by ``ICamera.create(...)`` (InternUtopia's factory), as its sensors do.

InternUtopia's ``RepCamera`` and the cameras of downstream sensors call ``ICamera.create(name=...,
prim_path='<robot prim>/<link>/<camera>', rgba=..., distance_to_image_plane=...,
bounding_box_2d_tight=..., camera_params=..., resolution=..., translation=..., orientation=...)``
in a sensor's ``post_reset``. Here that gives a :class:`CreatedCamera` of the robot and slot whose
sensor is being reset: a pinhole camera fixed to the robot body named in ``prim_path`` (the deepest
path component that is a body of the robot), at ``translation`` (body frame) or ``position``
(env-local, kept relative to the body from then on) with ``orientation`` (wxyz; identity looks
along the body's -z with +y up, as a USD camera prim does). Its vertical field of view is
:data:`CREATED_FOVY_DEG` and it clips at :data:`CREATED_CLIPPING` metres.

A frame is drawn on the first ``get_*`` call of a step (one frame per camera and step, shared by
the calls of that step), with the slot's own scene only, like every camera here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mujoco
import numpy as np

from internutopia.core.backend.mujoco.render import FrameRequest, pack_render
from internutopia.core.backend.mujoco.render.semantics import SemanticTable
from internutopia.per_slot.building import SlotRobotContext
from internutopia.per_slot.camera import ICamera, register_camera_factory
from internutopia_extension.sensors.annotations import isaac_camera_params, slot_part_labels, tight_boxes

#: Vertical field of view of a created camera (degrees): a RepCameraCfg's default.
CREATED_FOVY_DEG = 60.0
#: Near and far clipping of a created camera (m).
CREATED_CLIPPING = (0.01, 1000.0)
#: InternUtopia's default resolution of a camera made without one.
DEFAULT_RESOLUTION = (64, 64)


class CreatedCamera(ICamera):
    """A camera made by ``ICamera.create`` on a body of a robot in one slot (see the module docstring)."""

    def __init__(self, context: SlotRobotContext, *, name: str, prim_path: str | None, rgba: bool,
                 distance_to_image_plane: bool, bounding_box_2d_tight: bool, camera_params: bool,
                 resolution: Sequence[int] | None, position: Sequence[float] | None,
                 translation: Sequence[float] | None, orientation: Sequence[float] | None) -> None:
        super().__init__()
        self.group, self.slot = context.group, int(context.slot)
        self.name, self.prim_path = name, prim_path
        self.rgba, self.distance_to_image_plane = bool(rgba), bool(distance_to_image_plane)
        self.bounding_box_2d_tight, self.camera_params = bool(bounding_box_2d_tight), bool(camera_params)
        width, height = (int(v) for v in (resolution or DEFAULT_RESOLUTION))
        if width < 1 or height < 1:
            raise ValueError(f'camera {name!r}: resolution is (width, height) in pixels, each >= 1; got {resolution}')
        self.resolution = (width, height)
        self.body = self._resolve_body(prim_path)
        self.local_position = np.zeros(3)
        self.local_quat = np.array([1.0, 0.0, 0.0, 0.0])
        quat = None if orientation is None else np.asarray(orientation, dtype=float)
        if translation is not None:
            self.local_position = np.asarray(translation, dtype=float)
            if quat is not None:
                self.local_quat = quat / np.linalg.norm(quat)
        elif position is not None or quat is not None:
            self._set_env_pose(None if position is None else np.asarray(position, dtype=float), quat)
        self._stamp = np.nan
        self._frame: dict[str, Any] = {}

    # -- where it is ---------------------------------------------------------------------------
    def _resolve_body(self, prim_path: str | None) -> int:
        group = self.group
        prefix = f'{group.name}/'
        bodies = {name[len(prefix):]: i for i, name in enumerate(group.bound_world.lookup.names('body'))
                  if name.startswith(prefix)}
        parts = [p for p in (prim_path or '').split('/') if p]
        for part in reversed(parts[:-1]):
            if part in bodies:
                return bodies[part]
        raise ValueError(f'camera {self.name!r}: prim_path {prim_path!r} names no body of robot {group.name!r} before '
                         f"the camera's own name (a camera goes on a link: '<robot prim>/<link>/<camera>'); "
                         f'bodies: {sorted(bodies)}')

    def _body_pose(self) -> tuple[np.ndarray, np.ndarray]:
        data = self.group.bound_world.mjdata(self.slot)
        return data.xpos[self.body].copy(), data.xquat[self.body].copy()

    def _env_pose(self) -> tuple[np.ndarray, np.ndarray]:
        body_pos, body_quat = self._body_pose()
        position, orientation = np.zeros(3), np.zeros(4)
        mujoco.mju_rotVecQuat(position, self.local_position, body_quat)
        mujoco.mju_mulQuat(orientation, body_quat, self.local_quat)
        return body_pos + position, orientation

    def _set_env_pose(self, position: np.ndarray | None, orientation: np.ndarray | None) -> None:
        current_pos, current_quat = self._env_pose()
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
    def _reading(self) -> dict[str, Any]:
        pack = self.group.bound_world
        time = float(pack.data.time[self.slot])
        if time != self._stamp:
            self._frame = self._draw(pack)
            self._stamp = time
        return self._frame

    def _draw(self, pack: Any) -> dict[str, Any]:
        width, height = self.resolution
        near, far = CREATED_CLIPPING
        position, quat = self._env_pose()
        xmat = np.zeros(9)
        mujoco.mju_quat2Mat(xmat, quat)
        rgba = np.empty((height, width, 4), np.uint8) if self.rgba else None
        depth = np.empty((height, width), np.float32) if self.distance_to_image_plane else None
        ids = np.empty((height, width), np.int32) if self.bounding_box_2d_tight else None
        request = FrameRequest(self.slot, -1, rgba, depth, near, far, segmentation=ids,
                               project_geoms=self.bounding_box_2d_tight, view=(position, xmat, CREATED_FOVY_DEG))
        sim = self.group.sim
        pack_render(pack).cameras(width, height, 0, lod=bool(getattr(sim, 'rendering_lod', True))).render([request])
        frame: dict[str, Any] = {'rgba': rgba, 'depth': depth}
        params = isaac_camera_params(width, height, CREATED_FOVY_DEG, near, far, request.position[None],
                                     request.xmat.reshape(1, 3, 3))
        frame['camera_params'] = {key: value[0] for key, value in params.items()}
        if ids is not None:
            table = SemanticTable.build(pack.model, slot_part_labels(self.group, self.slot))
            data, info = tight_boxes(table.instance_image(ids)[None], [table], [request.geom_boxes])
            frame['bounding_box_2d_tight'] = {'data': data[0], 'info': info[0]}
        return frame

    def _get(self, key: str, flag: str) -> Any:
        if not getattr(self, flag):
            raise ValueError(f'camera {self.name!r} was created with {flag}=False')
        return self._reading()[key]

    def get_rgba(self) -> np.ndarray:
        """The colour image of this step, ``uint8 (H, W, 4)``."""
        return self._get('rgba', 'rgba')

    def get_distance_to_image_plane(self) -> np.ndarray:
        """Depth of this step, metres along the optical axis, ``float32 (H, W)``."""
        return self._get('depth', 'distance_to_image_plane')

    def get_bounding_box_2d_tight(self) -> dict[str, Any]:
        """Tight 2D boxes of this step's labelled things (``{'data', 'info'}``, Isaac's layout)."""
        return self._get('bounding_box_2d_tight', 'bounding_box_2d_tight')

    def get_camera_params(self) -> dict[str, Any]:
        """Isaac's ``camera_params`` keys of this step's view (env-local)."""
        return self._get('camera_params', 'camera_params')

    def cleanup(self) -> None:
        """Nothing to release: the frame's buffers belong to the pack's renderer."""
        self._frame = {}


register_camera_factory(CreatedCamera)

__all__ = ['CREATED_CLIPPING', 'CREATED_FOVY_DEG', 'CreatedCamera']
