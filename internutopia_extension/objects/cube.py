"""``DynamicCube`` (a rigid box with a free joint) and ``VisualCube`` (a drawn, non-colliding box)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco
import numpy as np

from internutopia.core.config.object import object_scale
from internutopia.core.object.base import BaseObject
from internutopia_extension.objects.placed import GROUP_VISUAL, PlacedObject, rgba

if TYPE_CHECKING:
    from internutopia_extension.configs.objects.cube import DynamicCubeCfg, VisualCubeCfg


@BaseObject.register('DynamicCube')
class DynamicCube(PlacedObject):
    """A box of full size ``scale`` (m) and ``mass`` (kg; density 1000 kg/m^3 when ``None``)."""

    dynamic = True
    config: DynamicCubeCfg

    def build_spec(self) -> mujoco.MjSpec:
        spec, body = self.new_root('dynamic_cube')
        geom = body.add_geom(name='box', type=mujoco.mjtGeom.mjGEOM_BOX,
                             size=(np.asarray(object_scale(self.config)) / 2).tolist(), rgba=rgba(self.config.color))
        if self.config.mass is not None:
            geom.mass = float(self.config.mass)
        elif self.config.density is not None:
            geom.density = float(self.config.density)
        if not self.config.collider:
            geom.contype = geom.conaffinity = 0
        return spec


@BaseObject.register('VisualCube')
class VisualCube(PlacedObject):
    """A box of full size ``scale`` (m) that is drawn but never collides (a static mocap body)."""

    dynamic = False
    config: VisualCubeCfg

    def build_spec(self) -> mujoco.MjSpec:
        spec, body = self.new_root('visual_cube')
        body.add_geom(name='box', type=mujoco.mjtGeom.mjGEOM_BOX, size=(np.asarray(object_scale(self.config)) / 2).tolist(),
                      rgba=rgba(self.config.color), contype=0, conaffinity=0, group=GROUP_VISUAL)
        return spec
