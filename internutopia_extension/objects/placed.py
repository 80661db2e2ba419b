"""The common base of the built-in objects: a root body named ``body``, free or mocap.

A *dynamic* object's root body has a free joint: its pose and velocity are physics state,
written at reset (``Entity.reset_slots``) and integrated by the engine. A *static* object's root
body is a mocap body: it never moves by itself and nothing pushes it, but its pose is state too
(``data.mocap_pos``/``mocap_quat``), so episodes that place the same object elsewhere share one
compiled world, and a reset costs a state write, not a rebuild. (Baking the pose into the model
would make every new placement a structural change; the structure key ignores poses.)
"""

from __future__ import annotations

import mujoco
import numpy as np

from internutopia.core.config.object import object_orientation
from internutopia.core.object.base import BaseObject
from internutopia.core.robot.base import NO_ID

#: Geom group of visual-only geoms (as in scenes loaded from USD).
GROUP_VISUAL = 2


def rgba(color) -> list[float]:
    """``color`` (rgb or rgba in [0, 1], or ``None``) as an rgba list (grey when ``None``)."""
    if color is None:
        return [0.7, 0.7, 0.7, 1.0]
    return [float(c) for c in color] + ([1.0] if len(color) == 3 else [])


class PlacedObject(BaseObject):
    """An object whose root body ``body`` is free (``dynamic``) or a mocap body (static)."""

    base_body = 'body'
    #: Whether the root body gets a free joint; subclasses decide (possibly from the config).
    dynamic = False

    def __init__(self, config, env_num, sim) -> None:
        super().__init__(config, env_num, sim)
        self.mocap_id = np.full(env_num, NO_ID, dtype=np.intp)

    def new_root(self, model_name: str) -> tuple[mujoco.MjSpec, mujoco.MjsBody]:
        """A fresh spec holding only the root body (free joint or mocap, per :attr:`dynamic`)."""
        spec = mujoco.MjSpec()
        spec.modelname = model_name
        spec.compiler.degree = False
        body = spec.worldbody.add_body(name=self.base_body, mocap=not self.dynamic)
        if self.dynamic:
            body.add_freejoint(name='root')
        return spec, body

    def bind(self, world, slots: np.ndarray) -> None:
        super().bind(world, slots)
        self.mocap_id[:] = NO_ID
        if len(self.slots):
            self.mocap_id[self.slots] = world.model.body_mocapid[self.base_body_id[self.slots]]

    def reset_slots(self, slots: np.ndarray, configs) -> None:
        super().reset_slots(slots, configs)  # free joints: qpos = position, unit orientation
        slots = np.asarray(slots, dtype=np.intp)
        mocap = self.mocap_id[slots]
        static = mocap != NO_ID
        if not np.any(static):
            return
        assert self.world is not None, 'reset before bind'
        data = self.world.data
        positions = np.array([c.position for c, s in zip(configs, static, strict=True) if s], dtype=float)
        quats = np.array([object_orientation(c) for c, s in zip(configs, static, strict=True) if s], dtype=float)
        data.mocap_pos[slots[static], mocap[static]] = positions
        data.mocap_quat[slots[static], mocap[static]] = quats / np.linalg.norm(quats, axis=1, keepdims=True)
