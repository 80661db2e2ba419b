"""Uniform scaling of a robot's MuJoCo model (``RobotCfg.scale``), for robots whose model allows it.

Every length of the model is multiplied by ``s`` (body, joint, geom, site and camera positions;
geom and site sizes; slide-joint ranges), masses given explicitly by ``s**3`` (densities stay, so
geoms without a mass get ``s**3`` heavier by themselves), inertias by ``s**5``, and the actuators
and joint damping by ``s**5`` so a joint responds to its commands as quickly as before (a joint's
inertia grows with ``s**5``). Only uniform scales make sense for such a model; others are an error.
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np


def uniform_factor(scale: Sequence[float] | None, where: str) -> float:
    """The factor of a uniform ``scale`` (1 for ``None``); ``ValueError`` naming ``where`` otherwise."""
    if scale is None:
        return 1.0
    values = [float(v) for v in scale]
    if not (len(values) == 3 and values[0] > 0 and values[0] == values[1] == values[2]):
        raise ValueError(f'{where}: scale={tuple(values)} cannot be honoured; this robot scales uniformly only '
                         '(three equal positive numbers)')
    return values[0]


def scale_spec(spec: mujoco.MjSpec, s: float) -> mujoco.MjSpec:
    """Scale ``spec`` in place by ``s`` (see the module docstring); returns it."""
    if s == 1.0:
        return spec
    length, mass, inertia = s, s ** 3, s ** 5
    for body in spec.bodies:
        body.pos = np.asarray(body.pos) * length
        if body.explicitinertial:
            body.ipos = np.asarray(body.ipos) * length
            body.mass = body.mass * mass
            body.inertia = np.asarray(body.inertia) * inertia
    for geom in spec.geoms:
        geom.pos = np.asarray(geom.pos) * length
        geom.size = np.asarray(geom.size) * length
        if not np.isnan(geom.mass):
            geom.mass = geom.mass * mass
    for joint in spec.joints:
        joint.pos = np.asarray(joint.pos) * length
        joint.damping = np.asarray(joint.damping) * inertia
        joint.armature = joint.armature * inertia
        if joint.type == mujoco.mjtJoint.mjJNT_SLIDE:
            joint.range = np.asarray(joint.range) * length
    for site in spec.sites:
        site.pos = np.asarray(site.pos) * length
        site.size = np.asarray(site.size) * length
    for camera in spec.cameras:
        camera.pos = np.asarray(camera.pos) * length
    for mesh in spec.meshes:
        mesh.scale = np.asarray(mesh.scale) * length
    for actuator in spec.actuators:
        actuator.gainprm = np.asarray(actuator.gainprm) * np.r_[inertia, np.ones(len(actuator.gainprm) - 1)]
        bias = np.asarray(actuator.biasprm, dtype=float)
        bias[1:3] *= inertia
        actuator.biasprm = bias
        actuator.forcerange = np.asarray(actuator.forcerange) * inertia
    return spec


__all__ = ['scale_spec', 'uniform_factor']
