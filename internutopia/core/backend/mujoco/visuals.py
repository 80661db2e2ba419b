"""Physics models without what is only drawn; the drawn model, compiled when something draws.

A robot's look is most of its model: H1's 21 visual meshes (143,000 vertices, their faces and the
bounding-volume trees MuJoCo builds over them) are 51.6 MB of its 51.7 MB compiled model, and
compiling them is 0.4 s of a start. The physics never reads them: they collide with nothing and
carry no inertia of their own. So a world compiles each structure's
physics model with MuJoCo's ``discardvisual`` (:func:`compile_physics`): geoms that do not collide
and that nothing names, the meshes only they used, materials and textures are left out (a body
whose inertia came from a discarded geom gets it as an explicit inertial). The H1's model is then
0.06 MB and compiles in a millisecond, and it moves bit for bit as the full one does
(``tests/test_physics_visuals.py``), a tenth faster (its kinematics no longer poses 21 geoms
nothing reads; ``docs/performance.md``). MuJoCo reads every mesh file before it leaves them out
while any body derives its inertial from its geoms; :func:`explicit_inertials` gives such bodies
theirs first where no mesh is needed for it (a GR1's fingertips), so nothing is read.

A structure keeps its visuals in the physics model only where something measures the visual
geometry: a sensor that sees it (a rangefinder's ray, a distance sensor between bodies;
:func:`needs_visuals`). Everything that draws, cameras and the interactive viewer
(``headless=False``) included, draws through the drawn model, so a structure with a camera steps
as light as one without. The world compiles the drawn model with the structure where a camera
sensor will draw it from the first step (``SlotPart.draws``), else when something first draws it,
if anything does (a camera of the robot file that no sensor draws, Aliengo's, costs nothing);
:func:`when_drawn` tells the world then, for its memory estimate.

Everything that draws a pack (cameras, ``env.render()``'s overview, the web viewer, the
interactive viewer) asks for :func:`drawn_model`: the physics model itself when nothing was
discarded, else the full model, compiled on first use from the spec kept at compile time;
:class:`DrawnState` poses it at a slot's state (bodies, joints, cameras and
mocap bodies are the same in both models; only geoms, meshes and materials differ). Semantic
labels are read from it too: a camera made at run time (``ICamera.create``) draws a structure
whose physics model had no camera of its own, and so left its looks out.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable
from typing import Any

import mujoco

#: Sensor types that read geometry a discarded geom could be part of (rays hit every geom; the
#: distance sensors between bodies measure every geom of a body).
_GEOMETRY_SENSORS = frozenset(int(t) for t in (
    mujoco.mjtSensor.mjSENS_RANGEFINDER, mujoco.mjtSensor.mjSENS_GEOMDIST, mujoco.mjtSensor.mjSENS_GEOMNORMAL,
    mujoco.mjtSensor.mjSENS_GEOMFROMTO))

#: The full spec of every model compiled without its visuals (kept for :func:`drawn_model`).
_kept_specs: weakref.WeakKeyDictionary[mujoco.MjModel, mujoco.MjSpec] = weakref.WeakKeyDictionary()
#: The drawn model of every such model, once compiled.
_drawn_models: weakref.WeakKeyDictionary[mujoco.MjModel, mujoco.MjModel] = weakref.WeakKeyDictionary()
#: What to call with a model's drawn model once it is compiled (:func:`when_drawn`).
_drawn_hooks: weakref.WeakKeyDictionary[mujoco.MjModel, Callable[[mujoco.MjModel], None]] = weakref.WeakKeyDictionary()
#: Render threads ask for a drawn model at once (each its own DrawnState): one compiles it.
_drawn_lock = threading.Lock()


def needs_visuals(spec: mujoco.MjSpec) -> bool:
    """Whether the physics model of ``spec`` must keep its visual geoms: it has a sensor that reads
    geometry (a ray or a distance hits or measures every geom)."""
    return any(int(sensor.type) in _GEOMETRY_SENSORS for sensor in spec.sensors)


def explicit_inertials(spec: mujoco.MjSpec) -> int:
    """Give the bodies of ``spec`` that have no inertial of their own the one MuJoCo derives from
    their geoms, as an explicit one, where none of them has a mesh geom; returns how many got one.

    While any body derives its inertial, MuJoCo reads and decodes every mesh file of the model
    when it compiles, even those of geoms ``discardvisual`` then leaves out: an Inspire hand's
    fingertips (a sphere each, no inertial) made a GR1's or an H1 with hands' physics compile
    read 61 and 47 meshes (0.6 s, and 211 and 179 MB kept in MuJoCo's asset cache). The values
    come from compiling a copy without any mesh (a millisecond), and are the same to the last
    bit, so the compiled model is too. Where a body's inertial comes from a mesh, the meshes are
    read anyway and nothing changes; nor where the copy does not compile (a mesh geom named by a
    sensor, say).
    """
    if not len(spec.meshes) or spec.compiler.inertiafromgeom == mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_TRUE:
        return 0
    mesh = mujoco.mjtGeom.mjGEOM_MESH
    bodies = [body for body in spec.bodies if body.name != 'world' and not body.explicitinertial]
    # (found again by name in the copy's model: an unnamed one could not be)
    if not bodies or any(not body.name or any(geom.type == mesh for geom in body.geoms) for body in bodies):
        return 0
    bare = spec.copy()
    for geom in [geom for geom in bare.geoms if geom.type == mesh]:
        bare.delete(geom)
    for asset in list(bare.meshes):
        bare.delete(asset)
    try:
        derived = bare.compile()
    except ValueError:
        return 0
    for body in bodies:
        inertial = derived.body(body.name)
        body.explicitinertial = True
        body.mass = float(inertial.mass[0])
        body.ipos = inertial.ipos
        body.iquat = inertial.iquat
        body.inertia = inertial.inertia
        body.fullinertia = [math.nan] * 6  # (the diagonal and its axes say it all)
    return len(bodies)


def compile_physics(spec: mujoco.MjSpec, keep_visuals: bool) -> mujoco.MjModel:
    """Compile ``spec``; unless ``keep_visuals`` or :func:`needs_visuals`, without its visual
    elements (and without reading their meshes: :func:`explicit_inertials`), keeping ``spec``
    itself, never compiled, for :func:`drawn_model` (the caller hands it over: it must not
    change it after)."""
    if keep_visuals or needs_visuals(spec):
        return spec.compile()
    # A copy compiles and goes; ``spec`` is kept uncompiled. A compiled spec holds its meshes as
    # the compiler made them (vertices, faces, hulls, bounding-volume trees: 106 MB for a G1's
    # 24 collision meshes, whose model is 44 MB), and where parts were attached to a spec by
    # reference (a world's), a copy taken before the compile keeps them alive: kept for the drawn
    # model, such a copy held the G1's 106 MB as long as its model lived. The model is the same
    # to the bit (tests/test_physics_visuals.py). (Copies are cheap, a fraction of a millisecond:
    # mesh files are read when a spec compiles, not when it is copied.)
    physics = spec.copy()
    explicit_inertials(physics)
    physics.compiler.discardvisual = True
    model = physics.compile()
    del physics
    kept = (model.ngeom, model.nmesh, model.nmat, model.ntex)
    if kept != (len(spec.geoms), len(spec.meshes), len(spec.materials), len(spec.textures)):
        _kept_specs[model] = spec  # (else nothing was discarded: the model draws as it is)
    return model


def discarded_visuals(model: mujoco.MjModel) -> bool:
    """Whether ``model`` was compiled without visual elements (:func:`compile_physics`)."""
    return model in _kept_specs


def drawn_model(model: mujoco.MjModel) -> mujoco.MjModel:
    """The model to draw a physics ``model``'s slots with: ``model`` itself, or, when it was
    compiled without its visuals, the full model (compiled on the first call, then kept as long
    as ``model`` lives)."""
    spec = _kept_specs.get(model)
    if spec is None:
        return model
    drawn = _drawn_models.get(model)
    if drawn is None:
        with _drawn_lock:
            drawn = _drawn_models.get(model)
            if drawn is None:
                # A copy compiles: the kept spec stays as it was for nothing else to change.
                drawn = spec.copy().compile()
                hook = _drawn_hooks.pop(model, None)
                if hook is not None:
                    hook(drawn)  # (before it counts in drawn_bytes: the hook sees the world without it)
                _drawn_models[model] = drawn
    return drawn


def when_drawn(model: mujoco.MjModel, hook: Callable[[mujoco.MjModel], None]) -> None:
    """Call ``hook(drawn)`` when :func:`drawn_model` compiles ``model``'s drawn model (once, in
    the thread that first draws it); never where ``model`` draws as it is."""
    if model in _kept_specs:
        _drawn_hooks[model] = hook


def drawn_bytes(model: mujoco.MjModel) -> float:
    """Bytes the drawn model of ``model`` holds beyond ``model`` itself: its buffer once compiled,
    nothing before or where ``model`` draws as it is."""
    drawn = _drawn_models.get(model)
    return 0.0 if drawn is None else float(drawn.nbuffer)


def pose_for_drawing(model: mujoco.MjModel, data: mujoco.MjData) -> mujoco.MjData:
    """``data`` with the body, geom, camera and light poses computed at its state (what drawing
    and pose reads need; no dynamics)."""
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    mujoco.mj_camlight(model, data)
    return data


class DrawnState:
    """An ``MjData`` to draw a pack's slots with, one slot at a time: the slot's state posed in the
    pack's drawn model (each render thread keeps its own)."""

    def __init__(self, pack: Any) -> None:
        # Weakly: a render thread's state must not keep a pack the world dropped alive.
        self._pack = weakref.ref(pack)
        #: The model drawn (:func:`drawn_model` of the pack's model) and its data.
        self.model = drawn_model(pack.model)
        self.data = mujoco.MjData(self.model)
        # Where the two differ, the slot's state is read into a physics-model scratch first.
        self._physics = None if self.model is pack.model else mujoco.MjData(pack.model)

    def load(self, slot: int) -> mujoco.MjData:
        """:attr:`data` holding ``slot``'s state with the body, geom, camera and light poses
        computed at it (what drawing reads); overwritten by the next call."""
        pack = self._pack()
        if pack is None:
            raise RuntimeError('nothing to draw: this pack of the world is gone')
        data, physics = self.data, self._physics
        if physics is None:
            pack.batch.get_data(int(slot), data)
        else:
            pack.batch.get_data(int(slot), physics)
            # Bodies, joints and mocap bodies are the same in both models.
            data.time = physics.time
            data.qpos[:] = physics.qpos
            data.mocap_pos[:] = physics.mocap_pos
            data.mocap_quat[:] = physics.mocap_quat
        return pose_for_drawing(self.model, data)


__all__ = ['DrawnState', 'compile_physics', 'discarded_visuals', 'drawn_bytes', 'drawn_model', 'explicit_inertials', 'needs_visuals',
           'pose_for_drawing', 'when_drawn']
