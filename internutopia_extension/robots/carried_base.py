"""A humanoid carried by a mocap target (H1's and GR1's ``locomotion='carried'``): gravity
compensated on its links, its pelvis welded (softly) to a mocap body that a ``move_by_speed``
controller moves like a holonomic base. The target stays upright (the base glides on the floor):
of a pose's orientation only the heading is kept.

>>> import mujoco
>>> spec = mujoco.MjSpec.from_string('<mujoco><worldbody><body name="pelvis"><freejoint/><geom size="0.1"/></body>'
...                                  '</worldbody></mujoco>')
>>> weld_to_mocap(spec, 'pelvis', 'base_target')
>>> model = mujoco.MjSpec.compile(spec)
>>> int(model.body_mocapid[model.body('base_target').id]), float(model.body_gravcomp[model.body('pelvis').id])
(0, 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mujoco
import numpy as np

from internutopia.core.util.math import quat_to_yaw, yaw_to_quat


def weld_to_mocap(spec: mujoco.MjSpec, base_body: str, mocap_body: str, position: Sequence[float] | None = None) -> None:
    """Compensate gravity on every body of ``spec`` and weld ``base_body`` (softly: ``solref``
    0.02 s) to a new mocap body ``mocap_body`` (at ``position``; the origin when ``None``) carrying
    a ``base_target`` site."""
    for body in spec.bodies:
        if body.name != 'world':
            body.gravcomp = 1.0
    target = spec.worldbody.add_body(name=mocap_body, mocap=True, pos=[0.0, 0.0, 0.0] if position is None else list(position))
    target.add_site(name='base_target', size=[0.02, 0, 0], rgba=[1, 0.5, 0, 0.0])
    spec.add_equality(type=mujoco.mjtEq.mjEQ_WELD, objtype=mujoco.mjtObj.mjOBJ_BODY, name1=base_body,
                      name2=mocap_body, solref=[0.02, 1.0], data=[0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0])


def teleport_target(data: Any, slot: int, mocap: int, position: Any, orientation: Any) -> None:
    """Move slot ``slot``'s mocap target ``mocap`` to ``position`` and the heading of
    ``orientation`` (wxyz; either may be ``None``: kept), as a teleported carried robot's base goes."""
    if position is not None:
        data.mocap_pos[slot, mocap] = position
    if orientation is not None:
        data.mocap_quat[slot, mocap] = yaw_to_quat(quat_to_yaw(np.asarray(orientation, dtype=float)))


def reset_targets(data: Any, slots: np.ndarray, mocap: np.ndarray, positions: Any, configs: Sequence[Any]) -> None:
    """Put the mocap targets ``mocap`` of ``slots`` at ``positions`` ``(k, 3)``, upright with the
    heading of each config's ``orientation`` (wxyz; ``None``: heading 0)."""
    data.mocap_pos[slots, mocap] = positions
    orientations = np.array([c.orientation if c.orientation is not None else (1.0, 0.0, 0.0, 0.0) for c in configs], dtype=float)
    data.mocap_quat[slots, mocap] = yaw_to_quat(quat_to_yaw(orientations))


__all__ = ['reset_targets', 'teleport_target', 'weld_to_mocap']
