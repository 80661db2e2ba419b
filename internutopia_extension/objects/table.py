"""``Table``: a static lab table, a top on four legs (see :class:`~internutopia_extension.configs.objects.table.TableCfg`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco
import numpy as np

from internutopia.core.config.object import object_scale
from internutopia.core.object.base import BaseObject
from internutopia_extension.objects.placed import PlacedObject, rgba

if TYPE_CHECKING:
    from internutopia_extension.configs.objects.table import TableCfg

#: How much darker the legs are than the top (a factor on the rgb).
_LEG_SHADE = 0.6


@BaseObject.register('Table')
class Table(PlacedObject):
    """A mocap body (static, its pose is state) with a box top and four box legs, all colliding.

    The body's origin is on the floor under the top's centre; the top's upper face is ``scale[2]``
    above it. Objects rest on the top and the fingers and arm collide with it like with any geom.
    """

    dynamic = False
    config: TableCfg

    def build_spec(self) -> mujoco.MjSpec:
        config = self.config
        spec, body = self.new_root('table')
        length, depth, height = object_scale(config)
        thickness, leg = float(config.top_thickness), float(config.leg_width)
        top_rgba = rgba(config.color)
        body.add_geom(name='top', type=mujoco.mjtGeom.mjGEOM_BOX, size=[length / 2, depth / 2, thickness / 2],
                      pos=[0.0, 0.0, height - thickness / 2], rgba=top_rgba)
        leg_rgba = [*(np.asarray(top_rgba[:3]) * _LEG_SHADE).tolist(), top_rgba[3]]
        leg_height = height - thickness
        for i, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
            body.add_geom(name=f'leg{i}', type=mujoco.mjtGeom.mjGEOM_BOX, size=[leg / 2, leg / 2, leg_height / 2],
                          pos=[sx * (length / 2 - leg / 2), sy * (depth / 2 - leg / 2), leg_height / 2], rgba=leg_rgba)
        return spec
