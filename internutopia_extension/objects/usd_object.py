"""``UsdObject``: a USD or MJCF file loaded like a scene and wrapped into one body named ``body``.

A USD file is placed as InternUtopia places it. There, ``add_reference_to_stage`` references the
file's default prim at the object's prim path, and the ``RigidPrim``/``GeometryPrim`` made on it
sets that prim's translate, orient and scale to the config's ``position``, ``orientation`` and
``scale``, which replaces the file's own transform of the prim. So here the top prim (the default
prim; the only root prim of a file without one) sits at the body's origin, with the file's own
translate, rotation and scale of it dropped; ``scale`` scales everything under it, and the
transforms of its descendants are kept. Root prims besides the top prim are not part of the
reference, so their geometry is left out, with a warning.
"""

from __future__ import annotations

import functools
import warnings
from typing import TYPE_CHECKING, Any

import mujoco

from internutopia.core.backend.mujoco.scene_loader import scene_to_spec
from internutopia.core.backend.mujoco.usd_mass import weightless_visuals
from internutopia.core.backend.mujoco.usd_scene import USD_EXTENSIONS, usd_scene_to_spec
from internutopia.core.config.object import object_scale
from internutopia.core.object.base import BaseObject
from internutopia.core.util.caller import caller_stacklevel
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
        usd = str(config.usd_path).lower().endswith(USD_EXTENSIONS)
        try:
            if usd:
                content = _usd_content(str(config.usd_path), object_scale(config))
            else:
                content = scene_to_spec(config.usd_path, scale=object_scale(config))
        except (FileNotFoundError, ValueError) as exc:
            raise type(exc)(f'object {config.name!r} (usd_path): {exc}') from exc
        for joint in list(content.joints):
            if joint.type == mujoco.mjtJoint.mjJNT_FREE:
                content.delete(joint)
        if usd:  # (PhysX weighs a rigid body by its colliders alone: usd_mass)
            weightless_visuals(list(content.geoms))
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


def _usd_content(path: str, scale: Any) -> mujoco.MjSpec:
    """The USD file at ``path`` as a spec, its top prim (see the module docstring) at the origin
    with its own transform dropped, scaled by ``scale`` (the scene loader's units rule)."""
    return usd_scene_to_spec(path, scale, edit_stage=functools.partial(_reference_top_prim, path=path))


def _reference_top_prim(stage: Any, path: str) -> None:
    """Edit ``stage``'s session layer (the file is left as it is) so that it holds what Isaac Sim's
    reference to the file holds: the top prim with an identity transform, and no geometry besides
    its subtree (other root prims are deactivated, unless they hold no geometry: materials bound
    from inside the top prim keep their colours). Nothing changes for a file of several root prims
    without a default prim (no top prim to tell)."""
    from pxr import Usd, UsdGeom

    top = stage.GetDefaultPrim()
    if not top or not top.IsValid():
        roots = list(stage.GetPseudoRoot().GetChildren())
        if len(roots) != 1:
            return
        top = roots[0]
    stage.SetEditTarget(stage.GetSessionLayer())
    if top.IsA(UsdGeom.Xformable):
        UsdGeom.Xformable(top).ClearXformOpOrder()  # an empty op order over the file's: identity
    predicate = Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)
    left_out = []
    for root in stage.GetPseudoRoot().GetChildren():
        if root != top and any(p.IsA(UsdGeom.Gprim) or p.IsA(UsdGeom.PointInstancer) for p in Usd.PrimRange(root, predicate)):
            root.SetActive(False)
            left_out.append(str(root.GetPath()))
    if left_out:
        warnings.warn(f'{path}: {", ".join(left_out)} left out: an object is its file\'s default prim '
                      f'{top.GetPath()} (what a reference to the file holds)', stacklevel=caller_stacklevel())
