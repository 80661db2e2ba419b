"""Where a robot's built-in cameras sit: the default first- and third-person mounts per robot type,
and the bodies of InternUtopia's USD robots that the MJCF models fold into another.

Both the configured cameras (:class:`~internutopia_extension.sensors.rep_camera.RepCamera`) and the
ones made at run time (:class:`~internutopia_extension.sensors.created_camera.CreatedCamera`) read them.

>>> [round(v, 3) for v in forward_camera_quat()]  # camera -z along the body's +x, image up = +z
[0.5, 0.5, -0.5, -0.5]
>>> is_third_person('TPCamera'), is_third_person('Camera')
(True, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np


def forward_camera_quat(pitch_down_deg: float = 0.0) -> tuple[float, float, float, float]:
    """wxyz orientation of a camera looking along its body's +x (image up = +z), pitched down."""
    forward = np.array([0.5, 0.5, -0.5, -0.5])  # camera -z -> body +x, camera +y -> body +z
    half = math.radians(pitch_down_deg) / 2
    pitch = np.array([math.cos(half), 0.0, math.sin(half), 0.0])  # about body +y: +x tips toward -z
    out = np.empty(4)
    mujoco.mju_mulQuat(out, pitch, forward)
    w, x, y, z = (float(v) for v in out)
    return w, x, y, z


@dataclass(frozen=True)
class CameraMount:
    """Where a robot's first- or third-person camera goes when the config gives no pose."""

    body: str
    position: tuple[float, float, float]
    pitch_down_deg: float

    @property
    def orientation(self) -> tuple[float, float, float, float]:
        return forward_camera_quat(self.pitch_down_deg)


#: Default mounts per robot type: 'first' (head) and 'third' (behind and above, looking forward-down).
#: A robot without a 'third' mount puts a third-person camera at its body's origin unless posed.
CAMERA_MOUNTS: dict[str, dict[str, CameraMount]] = {
    'H1Robot': {'first': CameraMount('torso_link', (0.13, 0.0, 0.62), 10.0),
                'third': CameraMount('torso_link', (-2.0, 0.0, 1.2), 25.0)},
    'G1Robot': {'first': CameraMount('torso_link', (0.09, 0.0, 0.40), 10.0),
                'third': CameraMount('torso_link', (-1.6, 0.0, 0.9), 25.0)},
    'JetbotRobot': {'first': CameraMount('chassis', (0.095, 0.0, 0.05), 0.0),  # (the chassis frame is between the wheels)
                    'third': CameraMount('chassis', (-0.57, 0.0, 0.4), 30.0)},
    # Aliengo's head camera, level, 1 cm ahead of the trunk's front face (x 0.33 at mid-height; the
    # front hips reach x 0.29, behind it): upstream's 'trunk/Camera' ('trunk' sits at the base's origin)
    'AliengoRobot': {'first': CameraMount('trunk', (0.34, 0.0, 0.0), 0.0)},
}
#: Bodies of InternUtopia's USD robots that the MJCF models fold into another body: a camera on them
#: goes on the robot's mount body ('logo_link' is the H1 head logo, part of 'torso_link' here).
BODY_ALIASES = ('logo_link', 'head_link', 'head')


def is_third_person(camera_name: str) -> bool:
    """InternUtopia's third-person cameras are named like ``TPCamera``/``tp_camera``."""
    lowered = camera_name.lower()
    return lowered.startswith('tp') or '_tp' in lowered or 'third' in lowered


def camera_mounts(robot: Any) -> dict[str, CameraMount]:
    """The camera mounts of ``robot``'s type, or of the nearest built-in robot class it derives from
    (an extension's H1 subclass mounts ``logo_link/Camera`` where H1 does)."""
    from internutopia.core.robot.base import BaseRobot

    names = {cls: name for name, cls in BaseRobot.registry.table.items()}
    for cls in type(robot).__mro__:
        mounts = CAMERA_MOUNTS.get(names.get(cls, ''))
        if mounts is not None:
            return mounts
    return CAMERA_MOUNTS.get(robot.config.type, {})
