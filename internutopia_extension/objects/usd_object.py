"""``UsdObject``: a USD or MJCF file loaded like a scene and wrapped into one body named ``body``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco

from internutopia.core.backend.mujoco.scene_loader import scene_to_spec
from internutopia.core.object.base import BaseObject
from internutopia_extension.objects.placed import PlacedObject

if TYPE_CHECKING:
    from internutopia_extension.configs.objects.usd_object import UsdObjCfg


@BaseObject.register('UsdObject')
class UsdObject(PlacedObject):
    """The file's content under ``body`` (see :class:`~internutopia_extension.configs.objects.UsdObjCfg`).

    Free bodies inside the file (USD rigid bodies, MJCF free joints) lose their free joints: the
    object moves as a whole. Ground planes inside the file are dropped.
    """

    config: UsdObjCfg

    def __init__(self, config, env_num, sim) -> None:
        super().__init__(config, env_num, sim)
        self.dynamic = bool(config.dynamic)
        self._template: mujoco.MjSpec | None = None

    def build_spec(self) -> mujoco.MjSpec:
        if self._template is None:
            self._template = self._build()
        return self._template.copy()

    def _build(self) -> mujoco.MjSpec:
        config = self.config
        try:
            content = scene_to_spec(config.usd_path, scale=config.scale)
        except (FileNotFoundError, ValueError) as exc:
            raise type(exc)(f'object {config.name!r} (usd_path): {exc}') from exc
        for joint in list(content.joints):
            if joint.type == mujoco.mjtJoint.mjJNT_FREE:
                content.delete(joint)
        for geom in list(content.geoms):
            if geom.type == mujoco.mjtGeom.mjGEOM_PLANE:
                content.delete(geom)
            elif not config.collider:
                geom.contype = 0
                geom.conaffinity = 0
        if not list(content.geoms):
            raise ValueError(f'object {config.name!r}: {config.usd_path!r} has no geometry besides ground planes')
        spec, body = self.new_root('usd_object')
        spec.attach(content, prefix='content/', frame=body.add_frame(name='content'))
        if self.dynamic and config.mass is not None:
            self._rescale_mass(spec, float(config.mass))
        return spec

    def _rescale_mass(self, spec: mujoco.MjSpec, mass: float) -> None:
        model = spec.copy().compile()
        total = float(model.body_subtreemass[model.body(self.base_body).id])
        if total <= 0:
            raise ValueError(f'object {self.config.name!r}: cannot set mass {mass} kg, the file has no mass')
        factor = mass / total
        for geom in spec.geoms:
            if geom.mass == geom.mass and geom.mass >= 0:  # explicit mass (not nan)
                geom.mass = geom.mass * factor
            else:
                geom.density = geom.density * factor
        for body in spec.bodies:
            if body.explicitinertial:
                body.mass = body.mass * factor
                body.inertia = [i * factor for i in body.inertia]
