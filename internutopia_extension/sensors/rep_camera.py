"""``RepCamera``: an RGB(-D) camera on a robot body, rendered for every slot of its robot group.

Observation ``obs[i][robot]['sensors'][name]``:

* ``'rgba'``: ``uint8 (H, W, 4)`` (when ``rgba=True``);
* ``'depth'``: ``float32 (H, W)``, distance to the image plane in metres (when ``depth=True``);
* ``'camera_params'`` (when ``camera_params=True``): ``'intrinsics'`` ``(3, 3)`` (pinhole, in pixels)
  and ``'pose'`` (``'position'`` ``(3,)``, ``'orientation'`` ``(4,)`` wxyz: the env-local pose of
  that image's camera, looking along its -z with +y up), beside the keys of Isaac Sim's
  ``camera_params`` annotator (``cameraViewTransform``, ``cameraFocalLength``, ``cameraAperture``,
  ``renderProductResolution``, ...; see :func:`~internutopia_extension.sensors.annotations.isaac_camera_params`),
  whose view transform is in the world frame, as Isaac's is (the slot's origin, its ``ICamera``'s
  ``offset``, included);
* ``'semantic_segmentation'`` / ``'instance_segmentation'`` (when enabled): ``{'data': int32 (H, W),
  'info': {'idToLabels': ...}}`` (see :mod:`internutopia.core.backend.mujoco.render.semantics`);
* ``'bounding_box_2d_tight'`` and ``'landmarks'`` (when ``landmarks=True``): tight 2D boxes of the
  labelled things in view in Isaac's layout, and their labels (see
  :mod:`internutopia_extension.sensors.annotations`);
* ``'pointcloud'``: ``float32 (N, 3)``, env-local points seen by the camera, one per pixel that
  hit something (from the depth image and the pose of that image; when ``pointcloud=True``);
* ``'rendered'`` (when ``report_rendered=True``): ``True`` when the image was refreshed on this
  step, ``False`` when it is the last one again (``SimConfig.rendering_interval`` / ``rendering_dt``
  decide; see :class:`~internutopia.core.backend.mujoco.render.RenderClock`). A slot's first
  observation of an episode is always freshly rendered.

The camera of one slot can be moved (``set_camera_pose``, or ``set_world_pose`` of the slot's
:class:`~internutopia.core.sensor.camera.ICamera`): the new pose is kept relative to the body the
camera is on, so the camera then follows that body from there; the next episode in the slot
starts from the configured mount again.

A slot's camera sees its own slot's whole scene (the ground to its own extent or the horizon) and
nothing of other slots (each slot is its own simulation). The frames of one step are drawn in one
batch per image size: the first camera of a robot group that is read draws the due frames of all
the group's cameras, all drawn before any is read back
(:class:`~internutopia.core.backend.mujoco.render.CameraRenderer`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from internutopia.core.backend.mujoco.render import FrameRequest, RenderClock, mat_to_quat, pack_render
from internutopia.core.backend.mujoco.render.cameras import default_render_threads
from internutopia.core.backend.mujoco.render.semantics import SemanticTable
from internutopia.core.sensor.base import BaseSensor
from internutopia.core.util.memory import check_slots_fit
from internutopia.core.util.trees import row
from internutopia_extension.configs.sensors import RepCameraCfg
from internutopia_extension.sensors.annotations import (
    isaac_camera_params,
    landmarks,
    slot_part_labels,
    tight_boxes,
    world_origins,
)
from internutopia_extension.sensors.camera_mounts import (  # noqa: F401  (forward_camera_quat: users import it from here)
    BODY_ALIASES,
    CAMERA_MOUNTS,
    CameraMount,
    camera_mounts,
    forward_camera_quat,
    is_third_person,
)
from internutopia_extension.sensors.frame_images import FrameImages, every_slot_in_order

if TYPE_CHECKING:
    from internutopia.core.robot.base import BaseRobot


@BaseSensor.register('RepCamera')
class RepCamera(BaseSensor):
    """See the module docstring."""

    config: RepCameraCfg
    draws_structure = True

    def __init__(self, config: RepCameraCfg, robot: BaseRobot) -> None:
        super().__init__(config, robot)
        if not isinstance(config, RepCameraCfg):
            config = RepCameraCfg.model_validate(config.model_dump())
            self.config = config
        self.width, self.height = (int(v) for v in config.resolution)
        self.camera_name = f'rep_camera_{config.name}'
        # Refused now rather than grown into: every slot's images are drawn at the first observation,
        # past the machine's memory mid-step for a large env_num (20,000 Jetbot cameras take 12 GB).
        check_slots_fit(robot.env_num, self.image_bytes_per_slot(), f'the images of camera {config.name!r} '
                        f'({self.width}x{self.height})')
        self.cam_id = np.full(robot.env_num, -1, dtype=np.intp)
        self.stamp = np.full(robot.env_num, np.nan)  # sim time of each slot's image
        self.fresh = np.zeros(robot.env_num, dtype=bool)  # next observation must render
        self.position = np.zeros((robot.env_num, 3))
        self.orientation = np.tile([1.0, 0.0, 0.0, 0.0], (robot.env_num, 1))
        # Each slot's last image, made on first use: (env_num, H, W, 4) and (env_num, H, W).
        self._rgba: FrameImages | None = None
        self._depth: FrameImages | None = None
        self._geoms: np.ndarray | None = None  # (env_num, H, W) int32 model geom ids, for the annotations
        self._alone: dict[int, np.ndarray | None] = {}  # per slot: pixels of each instance drawn alone
        fy = (self.height / 2) / math.tan(math.radians(config.fovy_deg) / 2)
        self.intrinsics = np.array([[fy, 0.0, self.width / 2], [0.0, fy, self.height / 2], [0.0, 0.0, 1.0]])
        self.mount_body = ''
        self.clock = RenderClock.of(robot.sim)
        #: Per-slot camera poses relative to the mount body, set by set_camera_pose.
        self.moved: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        #: Semantic tables by (model, part labels) (see :meth:`semantic_table`).
        self._tables: dict[tuple, SemanticTable] = {}

    @staticmethod
    def create_camera(group: Any, slot: int, **arguments: Any) -> Any:
        """A camera made at run time on a body of robot ``group`` in ``slot`` (what ``ICamera.create``
        gives, through the per-slot layer; ``arguments`` are InternUtopia's, see
        :class:`~internutopia_extension.sensors.created_camera.CreatedCamera`)."""
        from internutopia_extension.sensors.created_camera import CreatedCamera

        return CreatedCamera(group, slot, **arguments)

    def image_bytes_per_slot(self) -> int:
        """Bytes this camera's images take per slot: colour and depth twice (the array an
        observation handed out and the one drawn next, see :class:`FrameImages`), geom ids once."""
        pixels, config = self.width * self.height, self.config
        kept = 4 * pixels * (bool(config.rgba) + bool(config.depth or config.pointcloud))
        return 2 * kept + (4 * pixels if self.wants_ids else 0)

    @property
    def wants_ids(self) -> bool:
        """Whether this camera draws geom ids (segmentation or boxes)."""
        config = self.config
        return bool(config.landmarks or config.semantic_segmentation or config.instance_segmentation)

    # -- structure ---------------------------------------------------------------------------
    def resolve_mount(self, spec: mujoco.MjSpec) -> tuple[str, tuple[float, ...], tuple[float, ...]]:
        """``(body, position, orientation)`` of the camera in the robot's standalone ``spec``."""
        config = self.config
        parts = [p for p in (config.prim_path or '').strip('/').split('/') if p]
        leaf = parts[-1] if parts else config.name
        written = parts[:-1]
        bodies = [b.name for b in spec.bodies if b.name and b.name != 'world']
        mounts = camera_mounts(self.robot)
        mount = mounts.get('third' if is_third_person(leaf) else 'first')
        body: str | None = next((p for p in reversed(written) if p in bodies), None)
        if not written:
            body = mount.body if mount else self.robot.base_body
        elif body is None and mount is not None and any(p in BODY_ALIASES for p in written):
            body = mount.body
        if body is None or body not in bodies:
            raise ValueError(f'camera {config.name!r} of robot {self.robot.name!r}: prim_path {config.prim_path!r} '
                             f"must be '<body>/<camera>' with a body of the robot; bodies: {sorted(bodies)}")
        default_pos, default_quat = (0.0, 0.0, 0.0), forward_camera_quat(0.0)
        if mount is not None and body == mount.body:
            default_pos, default_quat = mount.position, mount.orientation
        position = config.position if config.position is not None else config.translation
        return (body, tuple(position) if position is not None else default_pos,
                tuple(config.orientation) if config.orientation is not None else default_quat)

    def add_to_spec(self, spec: mujoco.MjSpec) -> None:
        body, position, orientation = self.resolve_mount(spec)
        self.mount_body = body
        spec.body(body).add_camera(name=self.camera_name, pos=list(position), quat=list(orientation),
                                   fovy=float(self.config.fovy_deg))

    def bind(self, world: Any) -> None:
        """Look up this camera in every slot of the robot group (``world`` is the group's pack)."""
        self.cam_id[:] = -1
        self.cam_id[self.robot.slots] = world.model.camera(self.robot.full_name(self.camera_name)).id
        gone = np.ones(self.robot.env_num, dtype=bool)
        gone[self.robot.slots] = False
        self.stamp[gone] = np.nan

    def reset(self, slots: np.ndarray) -> None:
        self.fresh[slots] = True
        for slot in np.asarray(slots).tolist():
            self.moved.pop(slot, None)

    # -- one slot's camera ---------------------------------------------------------------------
    def _mount_pose(self, slot: int) -> tuple[np.ndarray, np.ndarray]:
        moved = self.moved.get(slot)
        if moved is not None:
            return moved
        model, cam = self.robot.world.model, int(self.cam_id[slot])
        return model.cam_pos[cam].copy(), model.cam_quat[cam].copy()

    def _body_pose(self, slot: int) -> tuple[np.ndarray, np.ndarray]:
        data = self.robot.world.mjdata(slot)
        body = int(self.robot.world.model.cam_bodyid[int(self.cam_id[slot])])
        return data.xpos[body].copy(), data.xquat[body].copy()

    def camera_pose(self, slot: int) -> tuple[np.ndarray, np.ndarray]:
        """The camera's env-local position and wxyz orientation in ``slot`` now (it looks along its -z, +y up)."""
        body_pos, body_quat = self._body_pose(slot)
        local_pos, local_quat = self._mount_pose(slot)
        position, orientation = np.zeros(3), np.zeros(4)
        mujoco.mju_rotVecQuat(position, local_pos, body_quat)
        mujoco.mju_mulQuat(orientation, body_quat, local_quat)
        return body_pos + position, orientation

    def set_camera_pose(self, slot: int, position: np.ndarray | None, orientation: np.ndarray | None) -> None:
        """Move the camera of ``slot`` to an env-local pose (``None`` keeps that part); it then
        follows its body from there, until the slot's next episode."""
        current_pos, current_quat = self.camera_pose(slot)
        position = current_pos if position is None else np.asarray(position, dtype=float)
        orientation = current_quat if orientation is None else np.asarray(orientation, dtype=float)
        norm = float(np.linalg.norm(orientation))
        if not norm > 0:
            raise ValueError(f'camera {self.name!r}: orientation must be a non-zero wxyz quaternion; got {orientation}')
        body_pos, body_quat = self._body_pose(slot)
        inverse = np.zeros(4)
        mujoco.mju_negQuat(inverse, body_quat)
        local_pos, local_quat = np.zeros(3), np.zeros(4)
        mujoco.mju_rotVecQuat(local_pos, position - body_pos, inverse)
        mujoco.mju_mulQuat(local_quat, inverse, orientation / norm)
        self.moved[int(slot)] = (local_pos, local_quat)
        self.fresh[slot] = True  # the next observation shows the new view

    def camera_params(self, slot: int) -> dict[str, Any] | None:
        """``slot``'s ``camera_params`` of its last image (see the module docstring); ``None`` when
        the camera has none (``camera_params`` and ``pointcloud`` off: InternUtopia's ``RepCamera``
        makes its camera without them then, and its ``ICamera`` answers ``None``)."""
        if not (self.config.camera_params or self.config.pointcloud):
            return None
        return row(self._camera_params(np.array([slot], dtype=np.intp)), 0)  # (its 'pose' is a dict of rows)

    def depth_image(self, slot: int) -> np.ndarray | None:
        """A copy of ``slot``'s last depth image, ``float32 (H, W)``; ``None`` when the camera draws
        none (``depth`` and ``pointcloud`` off). With ``pointcloud`` alone the observation has no
        ``'depth'``, but InternUtopia's camera is made with one: its ``ICamera`` gives it."""
        if not (self.config.depth or self.config.pointcloud) or self._depth is None:
            return None
        return self._depth.array[slot].copy()

    def _camera_params(self, slots: np.ndarray) -> dict[str, Any]:
        rotations = np.zeros((len(slots), 9))
        for row_index, quat in enumerate(self.orientation[slots]):
            mujoco.mju_quat2Mat(rotations[row_index], quat)
        near, far = self.config.clipping_range_m
        out = isaac_camera_params(self.width, self.height, self.config.fovy_deg, near, far, self.position[slots],
                                  rotations.reshape(-1, 3, 3), origins=world_origins(self.robot, slots))
        out['intrinsics'] = np.broadcast_to(self.intrinsics, (len(slots), 3, 3)).copy()
        out['pose'] = {'position': self.position[slots].copy(), 'orientation': self.orientation[slots].copy()}
        return out

    def part_labels(self, slot: int) -> dict[str, str | None]:
        """Semantic labels of the robots (their type) and objects (their ``label``, else their
        name) of ``slot``'s episode, by name."""
        return slot_part_labels(self.robot, slot)

    def semantic_table(self, slot: int) -> SemanticTable:
        """The semantic labels of ``slot``'s geoms now, as drawn (made once per model and labels)."""
        model = self.robot.world.drawn_model
        labels = self.part_labels(slot)
        key = (id(model), tuple(sorted(labels.items(), key=lambda item: item[0])))
        table = self._tables.get(key)
        if table is None or len(table.geom_instance) != model.ngeom + 1:
            table = self._tables[key] = SemanticTable.build(model, labels)
        return table

    def _annotations(self, slots: np.ndarray, out: dict[str, Any]) -> None:
        """Segmentation images, boxes and landmarks of ``slots``' last frames into ``out``."""
        config = self.config
        assert self._geoms is not None  # drawn (stamps start as NaN: stale)
        geoms = self._geoms if every_slot_in_order(slots, len(self._geoms)) else self._geoms[slots]  # (no copy of the images when all slots are read)
        tables = [self.semantic_table(slot) for slot in slots.tolist()]
        instances = np.empty_like(geoms)
        semantics = np.empty_like(geoms) if config.semantic_segmentation else None
        # Slots with the same table are mapped together (one take per table, straight into the output).
        by_table: dict[int, list[int]] = {}
        for index, table in enumerate(tables):
            by_table.setdefault(id(table), []).append(index)
        for rows in by_table.values():
            table = tables[rows[0]]
            if len(rows) == len(tables):
                table.instance_image(geoms, out=instances)
                if semantics is not None:
                    table.semantic_image(geoms, out=semantics)
                continue
            instances[rows] = table.instance_image(geoms[rows])
            if semantics is not None:
                semantics[rows] = table.semantic_image(geoms[rows])
        if config.instance_segmentation:
            out['instance_segmentation'] = {'data': instances, 'info': [
                {'idToLabels': t.instance_id_to_labels(), 'idToSemantics': t.instance_id_to_semantics()} for t in tables]}
        if semantics is not None:
            out['semantic_segmentation'] = {'data': semantics, 'info': [{'idToLabels': t.id_to_labels()} for t in tables]}
        if config.landmarks:
            data, info = tight_boxes(instances, tables, [self._alone.get(slot) for slot in slots.tolist()])
            out['bounding_box_2d_tight'] = {'data': data, 'info': info}
            out['landmarks'] = [landmarks(boxes, meta['idToLabels']) for boxes, meta in zip(data, info, strict=True)]

    def pointcloud(self, slot: int) -> np.ndarray:
        """Env-local points ``float32 (N, 3)`` of ``slot``'s last depth image (pixels that hit something)."""
        if self._depth is None:
            raise ValueError(f'camera {self.name!r} has no depth image (depth and pointcloud are off, or it drew nothing yet)')
        depth = self._depth.array[slot]
        near, far = self.config.clipping_range_m
        rows, columns = np.nonzero((depth > near) & (depth < far * (1 - 1e-4)))
        d = depth[rows, columns].astype(np.float64)
        fx, cx, cy = self.intrinsics[0, 0], self.intrinsics[0, 2], self.intrinsics[1, 2]
        camera = np.stack([(columns + 0.5 - cx) / fx * d, -(rows + 0.5 - cy) / fx * d, -d], axis=1)
        rotation = np.zeros(9)
        mujoco.mju_quat2Mat(rotation, self.orientation[slot])
        return (camera @ rotation.reshape(3, 3).T + self.position[slot]).astype(np.float32)

    # -- observation -------------------------------------------------------------------------
    def get_obs(self, slots: np.ndarray) -> dict[str, Any]:
        slots = np.asarray(slots, dtype=np.intp)
        pack = self.robot.world
        time = pack.time
        if self._stale(slots, time).any():
            render_cameras(pack, [s for s in self.robot.sensors.values() if isinstance(s, RepCamera)], slots, time)
        out: dict[str, Any] = {}
        if self.config.rgba:
            assert self._rgba is not None  # drawn above (stamps start as NaN: stale)
            out['rgba'] = self._rgba.read(slots)  # later frames never change what a caller holds
        # (A point cloud brings the depth and params it is made from, as InternUtopia's RepCamera
        # gives them, in its order.)
        if self.config.depth or self.config.pointcloud:
            assert self._depth is not None
            out['depth'] = self._depth.read(slots)
        if self.config.camera_params or self.config.pointcloud:
            out['camera_params'] = self._camera_params(slots)
        if self.config.pointcloud:
            out['pointcloud'] = [self.pointcloud(slot) for slot in slots.tolist()]
        if self.wants_ids:
            self._annotations(slots, out)
        if self.config.report_rendered:
            out['rendered'] = [bool(v) for v in self.stamp[slots] == time]
        return out

    def _stale(self, slots: np.ndarray, time: float) -> np.ndarray:
        """Which of ``slots`` need a new image at sim ``time``."""
        return self.fresh[slots] | np.isnan(self.stamp[slots]) | (self.clock.due(time) & (self.stamp[slots] != time))

    def _requests(self, slots: np.ndarray) -> list[FrameRequest]:
        """Frame requests of ``slots``, drawing into this camera's image buffers."""
        config = self.config
        near, far = config.clipping_range_m
        requests = []
        env_num = self.robot.env_num
        if config.rgba and self._rgba is None:
            self._rgba = FrameImages(env_num, (self.height, self.width, 4), np.uint8)
        wants_depth = config.depth or config.pointcloud
        if wants_depth and self._depth is None:
            self._depth = FrameImages(env_num, (self.height, self.width), np.float32)
        if self.wants_ids and self._geoms is None:
            self._geoms = np.full((env_num, self.height, self.width), -1, dtype=np.int32)
        rgba_images = self._rgba.for_drawing(slots) if config.rgba and self._rgba is not None else None
        depth_images = self._depth.for_drawing(slots) if wants_depth and self._depth is not None else None
        geom_images = self._geoms if self.wants_ids else None
        for slot in slots.tolist():
            rgba = rgba_images[slot] if rgba_images is not None else None
            depth = depth_images[slot] if depth_images is not None else None
            geoms = geom_images[slot] if geom_images is not None else None
            requests.append(FrameRequest(slot, int(self.cam_id[slot]), rgba, depth, near, far, mount=self.moved.get(slot),
                                         segmentation=geoms,
                                         geom_instances=self.semantic_table(slot).geom_instance[1:] if config.landmarks else None))
        return requests

    def _took(self, requests: list[FrameRequest], slots: np.ndarray, time: float) -> None:
        """Record the poses of frames just drawn (or of ``slots`` when nothing was drawn)."""
        for request in requests:
            self.position[request.slot] = request.position
            self.orientation[request.slot] = mat_to_quat(request.xmat)
            self._alone[request.slot] = request.alone_pixels
        self.stamp[slots] = time
        self.fresh[slots] = False


def render_cameras(pack: Any, cameras: list[RepCamera], slots: np.ndarray, time: float) -> None:
    """Refresh, in one batch per image size, every camera of ``cameras`` (one robot group's) that
    is due at ``time`` in ``slots``: the first camera asked for its image draws its siblings' too,
    so a step's frames are batched together whatever order the sensors are read in."""
    jobs = []
    for camera in cameras:
        stale = slots[camera._stale(slots, time)]
        if len(stale):
            drawn = camera.config.rgba or camera.config.depth or camera.config.pointcloud or camera.wants_ids
            jobs.append((camera, stale, camera._requests(stale) if drawn else []))
    batches: dict[tuple[int, int, int], list[FrameRequest]] = {}
    for camera, _, requests in jobs:
        if requests:
            batches.setdefault((camera.width, camera.height, camera.config.multisamples), []).extend(requests)
    if batches:
        sim = cameras[0].robot.sim
        lod = bool(getattr(sim, 'rendering_lod', True))
        threads = getattr(sim, 'rendering_threads', None) or default_render_threads()
        state = pack_render(pack)
        for (width, height, samples), requests in batches.items():
            state.cameras(width, height, samples, lod=lod, threads=threads).render(requests)
    for camera, stale, requests in jobs:
        if not requests:  # camera_params only: the pose (a moved camera's too), with nothing drawn
            requests = []
            for slot in stale.tolist():
                position, orientation = camera.camera_pose(slot)
                xmat = np.zeros(9)
                mujoco.mju_quat2Mat(xmat, orientation)
                requests.append(FrameRequest(slot, int(camera.cam_id[slot]), None, None, position=position, xmat=xmat))
        camera._took(requests, stale, time)


__all__ = ['BODY_ALIASES', 'CAMERA_MOUNTS', 'CameraMount', 'RepCamera', 'forward_camera_quat', 'is_third_person', 'render_cameras']
