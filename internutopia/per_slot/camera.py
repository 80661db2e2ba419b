"""``ICamera``: a camera in one env slot (InternUtopia's interface).

A per-slot robot's ``sensors[name]`` is an ``ICamera`` when that sensor is a camera (a
``RepCamera``): ``get_rgba()`` (``uint8 (H, W, 4)``), ``get_distance_to_image_plane()``
(``float32 (H, W)``, metres), ``get_camera_params()`` and the poses of
:class:`~internutopia.core.util.pose_mixin.PoseMixin`. ``set_world_pose`` moves the camera: the
new pose is kept relative to the body the camera is mounted on, so the camera goes on following
that body from there, as a camera prim under an Isaac Sim link does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from internutopia.core.util.pose_mixin import PoseMixin


class ICamera(PoseMixin):
    """A camera of one slot; subclasses provide ``_camera`` (the robot group's camera sensor) and ``slot``."""

    _camera: Any = None
    slot: int = -1
    # Provided by the sensor view it is mixed into (:class:`~internutopia.per_slot.sensor.SlotCameraView`).
    name: str
    get_data: Callable[[], dict[str, Any]]

    def _reading(self) -> dict[str, Any]:
        return self.get_data()

    def get_rgba(self) -> np.ndarray:
        """The last colour image, ``uint8 (H, W, 4)``."""
        reading = self._reading()
        if 'rgba' not in reading:
            raise ValueError(f'camera {self.name!r} renders no colour image (rgba=False in its config)')
        return reading['rgba']

    def get_distance_to_image_plane(self) -> np.ndarray:
        """The last depth image, metres along the optical axis, ``float32 (H, W)``."""
        reading = self._reading()
        if 'depth' not in reading:
            raise ValueError(f'camera {self.name!r} renders no depth (depth=False in its config)')
        return reading['depth']

    def get_camera_params(self) -> dict[str, Any]:
        """Intrinsics ``(3, 3)`` and the camera's env-local pose of the last image."""
        return self._camera.camera_params(self.slot)

    def get_bounding_box_2d_tight(self) -> np.ndarray:
        """Not available: MuJoCo's renderer has no semantic labels to box."""
        raise ValueError(f'camera {self.name!r}: 2D bounding boxes need semantic labels, which MuJoCo rendering does not have')

    def _env_pose(self) -> tuple[np.ndarray, np.ndarray]:
        return self._camera.camera_pose(self.slot)

    def _set_env_pose(self, position: np.ndarray | None, orientation: np.ndarray | None) -> None:
        self._camera.set_camera_pose(self.slot, position, orientation)

    def cleanup(self) -> None:
        """Called when the slot's episode is replaced."""

    @classmethod
    def create(cls, *args: Any, **kwargs: Any) -> ICamera:
        """Cameras are sensors here: configure a ``RepCameraCfg`` on the robot; its per-slot view is an ``ICamera``."""
        raise ValueError('cameras are robot sensors here: add a RepCameraCfg to the robot config; '
                         "robot.sensors[name] of a per-slot robot is then its ICamera")


__all__ = ['ICamera']
