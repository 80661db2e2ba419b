"""Config classes of the built-in sensors."""

from __future__ import annotations

from typing import Optional

from internutopia.core.config import SensorCfg


class RepCameraCfg(SensorCfg):
    """A camera on a robot (InternUtopia's ``RepCamera``).

    ``prim_path`` names the robot body it is mounted on and the camera, as ``'<body>/<camera>'``.
    ``resolution`` is ``(width, height)``. ``rgba`` gives ``uint8 (H, W, 4)``, ``depth`` gives
    ``float32 (H, W)`` in metres, ``camera_params`` adds intrinsics and the camera pose.
    """

    type: str = 'RepCamera'
    resolution: tuple[int, int] = (640, 480)
    rgba: bool = True
    depth: bool = False
    camera_params: bool = False
    clipping_range_m: tuple[float, float] = (0.01, 1000.0)
    fovy_deg: float = 60.0
    position: Optional[tuple[float, float, float]] = None
    orientation: Optional[tuple[float, float, float, float]] = None


__all__ = ['RepCameraCfg']
