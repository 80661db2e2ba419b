"""A pose handle in the web viewer's page: drag it in the browser, read its pose in the script.

:class:`PoseHandle` puts a transform control (arrows to slide along each axis, arcs to turn about
it; ``viser``'s) in a slot's cell of a :class:`~internutopia.viewer.viewer.Viewer`, and a
**gripper closed** checkbox in the page's panel. A script reads :attr:`PoseHandle.position`
(env-local metres), :attr:`PoseHandle.wxyz` and :attr:`PoseHandle.gripper_closed` each step, e.g.
through ``internutopia_extension.interactions.motion_capture.HandleMocap``, which turns them into
hand frames for the mocap-teleoperated Franka (``docs/robots.md``)::

    viewer = attach_viewer(env, port=8080)
    handle = PoseHandle(viewer, position=start, slot=0)   # where the end effector starts
    source = HandleMocap(handle, scale=teleop_cfg.scale)
    env.step([{'mocap_controlled_franka': {'franka_mocap_teleop_controller': [source.step()]}}])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ['PoseHandle']


class PoseHandle:
    """A draggable pose in slot ``slot``'s cell of ``viewer``'s page; see the module doc.

    Args:
        viewer: the :class:`~internutopia.viewer.viewer.Viewer` of the env.
        position: start position, env-local (m).
        wxyz: start orientation.
        slot: the slot whose cell the handle sits in.
        name: names the scene node (``/handles/NAME``) and the panel's checkbox.
        scale: the arrows' length (m).
        controls: further arguments of ``viser``'s ``add_transform_controls`` (e.g.
            ``disable_rotations=True``).
    """

    def __init__(self, viewer: Any, position: Sequence[float] = (0.0, 0.0, 0.0),
                 wxyz: Sequence[float] = (1.0, 0.0, 0.0, 0.0), slot: int = 0, name: str = 'teleop', scale: float = 0.2,
                 **controls: Any) -> None:
        if isinstance(slot, bool) or not isinstance(slot, (int, np.integer)) or not 0 <= slot < len(viewer.origins):
            raise ValueError(f'slot must be one of the env\'s slots 0..{len(viewer.origins) - 1}; got {slot!r}')
        if isinstance(scale, bool) or not isinstance(scale, (int, float, np.integer, np.floating)) or not (math.isfinite(scale) and scale > 0):
            raise ValueError(f'scale must be a finite number > 0 (the arrows\' length, m); got {scale!r}')
        in_use: set[str] = viewer.handle_names
        if name in in_use:
            raise ValueError(f'a pose handle named {name!r} is on this page already (names in use: {sorted(in_use)}): '
                             'give each handle its own name')
        start = _vector(position, 3, 'position')
        turn = _vector(wxyz, 4, 'wxyz')
        norm = float(np.linalg.norm(turn))
        if norm < 1e-9:
            raise ValueError(f'wxyz must be a rotation quaternion (w, x, y, z), not zero; got {tuple(wxyz)!r}')
        self.origin = np.asarray(viewer.origins[slot], dtype=float)
        self.slot = int(slot)
        self.name = name
        self.drags = 0  # updates received from a page
        controls.setdefault('depth_test', False)  # drawn over the robot, so it can always be grabbed
        self.control = viewer.server.scene.add_transform_controls(
            f'/handles/{name}', scale=float(scale), position=tuple(self.origin + start),
            wxyz=tuple(float(v) for v in turn / norm), **controls)
        in_use.add(name)
        self._names_in_use = in_use
        self.checkbox = viewer.server.gui.add_checkbox(f'{name}: gripper closed', initial_value=False)
        self.control.on_update(self._count)

    def _count(self, _: Any) -> None:
        self.drags += 1

    @property
    def position(self) -> np.ndarray:
        """Env-local position (m), a copy."""
        return np.asarray(self.control.position, dtype=float) - self.origin

    @position.setter
    def position(self, value: Sequence[float]) -> None:
        self.control.position = tuple(self.origin + _vector(value, 3, 'position'))

    @property
    def wxyz(self) -> np.ndarray:
        """Orientation (wxyz), a copy."""
        return np.asarray(self.control.wxyz, dtype=float)

    @property
    def gripper_closed(self) -> bool:
        """Whether the page's **gripper closed** box is ticked."""
        return bool(self.checkbox.value)

    def remove(self) -> None:
        """Take the handle and its checkbox off the page (its name is free again); twice does nothing."""
        if self.name not in self._names_in_use:
            return
        self._names_in_use.discard(self.name)
        self.control.remove()
        self.checkbox.remove()


def _vector(value: Any, size: int, what: str) -> np.ndarray:
    """``value`` as ``size`` finite floats, or a ``ValueError`` naming ``what``."""
    try:
        vector = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        vector = None
    if vector is None or vector.shape != (size,) or not np.isfinite(vector).all():
        raise ValueError(f'{what} must be {size} finite numbers; got {value!r}')
    return vector
