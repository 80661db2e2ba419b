"""``MocapControlledCameraCfg``: a camera the left hand moves during mocap teleoperation (InternUtopia's name)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from internutopia_extension.configs.sensors.rep_camera import RepCameraCfg


class MocapControlledCameraCfg(RepCameraCfg):
    """A :class:`RepCameraCfg` camera that a left-hand thumb-index pinch, held for 60 frames, moves
    with the left wrist, keeping it aimed at the teleop controller's ``target_position`` (see
    :mod:`internutopia_extension.sensors.mocap_controlled_camera`). Like InternUtopia's, it gives
    ``rgba`` and ``bounding_box_2d_tight`` (``landmarks``) by default, at 320x240."""

    type: str = 'MocapControlledCamera'
    resolution: tuple[int, int] = (320, 240)
    landmarks: bool = True
    #: InternUtopia's ``MocapControlledCamera`` renders 320x240 where no resolution is given.
    _none_means: ClassVar[Mapping[str, Any]] = {'resolution': (320, 240)}


__all__ = ['MocapControlledCameraCfg']
