"""``RepCameraCfg``: a camera mounted on a robot (InternUtopia's ``RepCamera``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import field_validator, model_validator

from internutopia.core.config import SensorCfg
from internutopia.core.config.values import Quat, Vec3


class RepCameraCfg(SensorCfg):
    """A camera on a robot (InternUtopia's ``RepCamera``; see ``docs/rendering.md``).

    ``prim_path`` names the robot body it is mounted on and the camera, as ``'<body>/<camera>'``.
    ``resolution`` is ``(width, height)``: 64x64 unless given, as InternUtopia's. ``rgba`` gives
    ``uint8 (H, W, 4)``, ``depth`` gives ``float32 (H, W)`` in metres, ``camera_params`` adds
    intrinsics and the camera pose.
    ``position``/``translation`` (the same thing; InternUtopia's name) and ``orientation`` (wxyz)
    place the camera in the body's frame, looking along its -z axis with +y up (the USD and MuJoCo
    camera convention); when left out, a default mount of the robot is used. ``multisamples`` is
    the image's anti-aliasing in samples per pixel: 0 (the default) draws each pixel once, since
    MuJoCo's own default of 4 makes a frame several times slower on a CPU. ``pointcloud`` adds the
    env-local points the camera sees (``float32 (N, 3)``); ``report_rendered`` adds whether the image
    was refreshed on this step. ``landmarks`` adds InternUtopia's ``bounding_box_2d_tight`` (tight
    2D boxes of the labelled things in view) and ``landmarks`` (their labels);
    ``semantic_segmentation`` and ``instance_segmentation`` add ``int32 (H, W)`` id images with their
    id-to-label tables (see ``docs/perception.md``).
    """

    type: str = 'RepCamera'
    #: InternUtopia's default: its ``RepCamera`` renders 64x64 where no resolution is given.
    resolution: tuple[int, int] = (64, 64)
    rgba: bool = True
    depth: bool = False
    pointcloud: bool = False
    camera_params: bool = False
    landmarks: bool = False
    semantic_segmentation: bool = False
    instance_segmentation: bool = False
    report_rendered: bool = False
    clipping_range_m: tuple[float, float] = (0.01, 1000.0)
    fovy_deg: float = 60.0
    position: Vec3 | None = None
    translation: Vec3 | None = None
    orientation: Quat | None = None
    multisamples: int = 0
    #: ``None`` as InternUtopia's ``RepCamera`` reads it: no resolution is 64x64, and the outputs
    #: are switched by their truth value (``None`` is off, also for ``rgba``).
    _none_means: ClassVar[Mapping[str, Any]] = {
        'resolution': (64, 64),
        'rgba': False, 'depth': False, 'pointcloud': False, 'camera_params': False, 'landmarks': False,
    }

    @field_validator('resolution')
    @classmethod
    def _resolution_positive(cls, value: tuple[int, int]) -> tuple[int, int]:
        if value[0] < 1 or value[1] < 1 or value[0] > 8192 or value[1] > 8192:
            raise ValueError(f'resolution is (width, height) in pixels, each in 1..8192; got {value}')
        return value

    @field_validator('clipping_range_m')
    @classmethod
    def _clipping_ordered(cls, value: tuple[float, float]) -> tuple[float, float]:
        if not 1e-6 <= value[0] < value[1] <= 1e6:  # a nearer near plane stops MuJoCo's renderer
            raise ValueError(f'clipping_range_m must be (near, far) metres with 1e-6 <= near < far <= 1e6; got {value}')
        return value

    @field_validator('fovy_deg')
    @classmethod
    def _fovy_range(cls, value: float) -> float:
        if not 0 < value < 180:
            raise ValueError(f'fovy_deg (vertical field of view) must be in (0, 180) degrees; got {value}')
        return value

    @field_validator('multisamples')
    @classmethod
    def _samples_range(cls, value: int) -> int:
        if value not in (0, 2, 4, 8, 16):
            raise ValueError(f'multisamples (anti-aliasing samples per pixel) must be one of 0, 2, 4, 8, 16; got {value}')
        return value

    @field_validator('orientation')
    @classmethod
    def _unit_quaternion(cls, value: tuple[float, float, float, float] | None) -> Any:
        if value is not None and not 0.5 < sum(v * v for v in value) ** 0.5 < 2.0:
            raise ValueError(f'orientation must be a wxyz unit quaternion; got {value}')
        return value

    @model_validator(mode='after')
    def _one_position(self) -> RepCameraCfg:
        if self.position is not None and self.translation is not None and tuple(self.position) != tuple(self.translation):
            raise ValueError(f'position {self.position} and translation {self.translation} are the same setting '
                             '(camera offset in the body frame); give one of them')
        return self


__all__ = ['RepCameraCfg']
