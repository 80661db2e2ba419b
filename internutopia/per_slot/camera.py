"""``ICamera``: a camera in one env slot (InternUtopia's interface).

A per-slot robot's ``sensors[name]`` is an ``ICamera`` when that sensor is a camera (a
``RepCamera``): ``get_rgba()`` (``uint8 (H, W, 4)``), ``get_distance_to_image_plane()``
(``float32 (H, W)``, metres), ``get_camera_params()`` and the poses of
:class:`~internutopia.core.util.pose_mixin.PoseMixin`. ``set_world_pose`` moves the camera: the
new pose is kept relative to the body the camera is mounted on, so the camera goes on following
that body from there, as a camera prim under an Isaac Sim link does. ``ICamera.create(...)``
(InternUtopia's factory, called in a per-slot robot's ``__init__`` or a sensor's ``post_reset``)
makes a camera on a link of that robot in its slot, or on its root body for a camera right under
the robot prim. A getter of an output the camera was not made with returns ``None``, as
InternUtopia's do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from internutopia.core.config import Simulator
from internutopia.core.sensor.base import BaseSensor
from internutopia.core.util.pose_mixin import PoseMixin
from internutopia.per_slot.building import BUILDING


class ICamera(PoseMixin):
    """A camera of one slot; subclasses provide ``_camera`` (the robot group's camera sensor) and ``slot``."""

    _camera: Any = None
    slot: int = -1
    # Provided by the sensor view it is mixed into (:class:`~internutopia.per_slot.sensor.SlotCameraView`).
    name: str
    get_data: Callable[[], dict[str, Any]]

    def _reading(self) -> dict[str, Any]:
        return self.get_data()

    def _sensor(self) -> Any:
        """The camera that answers for this slot (``camera_params``, ``depth_image``): the robot
        group's camera sensor, or a camera made by :meth:`create`."""
        return self._camera

    # Each getter gives None for an output the camera was not made with, as InternUtopia's do.
    def get_rgba(self) -> np.ndarray | None:
        """The last colour image, ``uint8 (H, W, 4)``; ``None`` for a camera without one (``rgba=False``)."""
        return self._reading().get('rgba')

    def get_distance_to_image_plane(self) -> np.ndarray | None:
        """The last depth image, metres along the optical axis, ``float32 (H, W)``; ``None`` for a
        camera without one (``distance_to_image_plane=False``; a configured camera has one with
        ``depth=True`` or ``pointcloud=True``)."""
        reading = self._reading()
        depth = reading.get('depth')
        if depth is None:  # (a configured camera's depth drawn for its point cloud only)
            depth_image = getattr(self._sensor(), 'depth_image', None)
            depth = None if depth_image is None else depth_image(self.slot)
        return depth

    def get_camera_params(self) -> dict[str, Any] | None:
        """Isaac's ``camera_params`` keys of the last image, its view transform in the world frame
        as Isaac's (the slot's origin, ``offset``, included: InternUtopia's un-projection then
        subtracts ``offset``); a configured camera's also have ``intrinsics`` ``(3, 3)`` and the
        env-local ``pose``. ``None`` for a camera made without them (``camera_params=False``; a
        configured camera has them with ``camera_params=True`` or ``pointcloud=True``)."""
        return self._sensor().camera_params(self.slot)

    def get_bounding_box_2d_tight(self) -> dict[str, Any] | None:
        """Tight 2D boxes of the labelled things in the last image (``{'data', 'info'}``, Isaac's
        layout); ``None`` for a camera that computes none (``bounding_box_2d_tight=False``; a
        configured camera computes them with ``landmarks=True`` or a segmentation)."""
        return self._reading().get('bounding_box_2d_tight')

    def _env_pose(self) -> tuple[np.ndarray, np.ndarray]:
        return self._camera.camera_pose(self.slot)

    def _set_env_pose(self, position: np.ndarray | None, orientation: np.ndarray | None) -> None:
        self._camera.set_camera_pose(self.slot, position, orientation)

    def cleanup(self) -> None:
        """Called when the slot's episode is replaced."""

    @classmethod
    def create(cls, simulator_type: str = Simulator.ISAACSIM.value, name: str = 'camera', prim_path: str | None = None,
               rgba: bool | None = True, distance_to_image_plane: bool | None = False,
               bounding_box_2d_tight: bool | None = False, camera_params: bool | None = False,
               resolution: tuple[int, int] | None = None, position: tuple[float, float, float] | None = None,
               translation: tuple[float, float, float] | None = None,
               orientation: tuple[float, float, float, float] | None = None) -> ICamera:
        """A camera on a link of the per-slot robot whose sensors are being built or reset
        (InternUtopia's factory, same arguments; see ``internutopia_extension/sensors/created_camera.py``).

        ``prim_path`` is ``'<robot prim>/<link>/<camera>'``, or ``'<robot prim>/<camera>'`` for a
        camera on the robot's root body (in the robot prim's frame, as an Xform under the robot
        prim); ``translation`` (link frame) or ``position`` (env-local) and ``orientation`` (wxyz)
        place it; ``resolution`` is ``(width, height)``. Any simulator type names this package's
        renderer.

        Raises:
            ValueError: called outside a per-slot robot's ``__init__`` or its sensors'
                ``post_reset``, an unknown ``simulator_type``, or a ``prim_path`` neither naming a
                link nor under the robot prim.
        """
        valid = [s.value for s in Simulator]
        if simulator_type not in valid:
            raise ValueError(f'Invalid simulator_type: {simulator_type!r}; valid: {valid}')
        context = BUILDING.get()
        if context is None:
            raise ValueError('ICamera.create makes a camera on a link of a per-slot robot: call it in the robot\'s '
                             "__init__ or in a sensor's post_reset (as InternUtopia's sensors do), or add a "
                             'RepCameraCfg to the robot config (see docs/perception.md)')
        registry = BaseSensor.registry
        maker = getattr(registry.get(CAMERA_SENSOR_TYPE), 'create_camera', None) if CAMERA_SENSOR_TYPE in registry else None
        if maker is None:
            raise ValueError(f'no {CAMERA_SENSOR_TYPE!r} sensor type that makes cameras is registered: call '
                             'internutopia_extension.import_extensions()')
        camera = maker(context.group, context.slot, name=name, prim_path=prim_path, rgba=bool(rgba),
                       distance_to_image_plane=bool(distance_to_image_plane),
                       bounding_box_2d_tight=bool(bounding_box_2d_tight), camera_params=bool(camera_params),
                       resolution=resolution, position=position, translation=translation, orientation=orientation)
        view = CreatedCameraView(camera, context.slot, name)
        view.offset = np.asarray(context.origin, dtype=float)  # (world poses are the stage's: the slot's origin added)
        return view


#: The registered sensor type whose ``create_camera(group, slot, **arguments)`` makes the cameras of
#: :meth:`ICamera.create` (the built-in ``RepCamera``; the core never imports it).
CAMERA_SENSOR_TYPE = 'RepCamera'


class CreatedCameraView(ICamera):
    """The ``ICamera`` of a camera made by :meth:`ICamera.create` (``camera`` answers ``reading``,
    ``camera_params``, ``camera_pose`` and ``set_camera_pose`` for its slot)."""

    def __init__(self, camera: Any, slot: int, name: str) -> None:
        super().__init__()
        self._camera = camera
        self.slot = int(slot)
        self.name = name

    def get_data(self) -> dict[str, Any]:
        """This step's outputs of the camera, by InternUtopia's annotator names."""
        return self._camera.reading(self.slot)

    def __repr__(self) -> str:
        return f'ICamera({self.name!r}, env {self.slot})'


__all__ = ['CAMERA_SENSOR_TYPE', 'CreatedCameraView', 'ICamera']
