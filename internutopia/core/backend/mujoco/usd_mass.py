"""Masses of the rigid bodies of USD scenes, by PhysX's rules.

A rigid body's mass comes from ``UsdPhysics.MassAPI``: the body's own ``mass`` wins; else each
collider's own ``MassAPI`` (mass or density); else the body's ``density``; else MuJoCo's default
density. As in PhysX only colliders weigh: where a body has colliders, its visual-only geoms
(``contype = conaffinity = 0``: a decal, a detailed mesh beside a collision proxy) weigh nothing
(MuJoCo weighs every geom, and an open visual mesh's volume can be anything). A body with no
collider keeps its geoms' masses: something has to weigh.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

__all__ = ['mass_props', 'weigh_body', 'weightless_visuals']


def mass_props(prim: Any, time: Any, kg_per_unit: float, scale: np.ndarray) -> tuple[str, float] | None:
    """``('mass', kg)`` or ``('density', kg/m^3)`` from ``prim``'s ``UsdPhysics.MassAPI``, if any
    (in the stage's units, converted by ``kg_per_unit`` and the scene's effective ``scale``)."""
    from pxr import UsdPhysics

    if not prim.HasAPI(UsdPhysics.MassAPI):
        return None
    mass_api = UsdPhysics.MassAPI(prim)
    mass = mass_api.GetMassAttr().Get(time)
    density = mass_api.GetDensityAttr().Get(time)
    length = float(np.prod(scale)) ** (1.0 / 3.0)
    if mass is not None and mass > 0:
        return 'mass', float(mass) * kg_per_unit
    if density is not None and density > 0:
        return 'density', float(density) * kg_per_unit / length ** 3
    return None


def weigh_body(geoms: list[tuple[Any, float, str]], body_mass: tuple[str | None, float],
               prim_mass: dict[str, tuple[str, float]]) -> None:
    """Set the densities of a rigid body's ``geoms`` (``(geom, volume, prim path)``) from the
    body's ``MassAPI`` (``body_mass``: ``('mass' | 'density', value)`` or ``(None, 0)``) and its
    colliders' (``prim_mass``, by prim path); see the module docstring."""
    if weightless_visuals([geom for geom, _, _ in geoms]):
        geoms = [g for g in geoms if g[0].contype or g[0].conaffinity]
    kind, value = body_mass
    groups = [geoms] if kind == 'mass' else [[g for g in geoms if g[2] == p] for p in {g[2] for g in geoms}]
    for group in groups:
        gkind, gvalue = (kind, value) if kind == 'mass' else prim_mass.get(group[0][2], (kind, value))
        volume = sum(v for _, v, _ in group)  # a mass: one density so that the geoms add up to it
        for geom, _, _ in group:
            if gkind is not None:
                geom.density = gvalue / max(volume, 1e-12) if gkind == 'mass' else gvalue


def weightless_visuals(geoms: list[Any]) -> bool:
    """Where some of ``geoms`` (a body's ``MjsGeom`` objects) collide, make the visual-only ones weigh
    nothing (see the module docstring); whether it did. Planes do not count as colliders (they
    are grounds, not parts of a body)."""
    def collides(geom: Any) -> bool:
        return bool(geom.contype or geom.conaffinity)

    if not any(collides(g) for g in geoms if g.type != mujoco.mjtGeom.mjGEOM_PLANE):
        return False
    for geom in geoms:
        if not collides(geom):
            geom.density = 0.0
            geom.mass = 0.0
    return True
