"""Scene files (USD, MJCF) turned into standalone ``MjSpec`` parts for the MuJoCo backend.

Every function here returns a self-contained :class:`mujoco.MjSpec` whose worldbody holds the scene.
It is meant to be attached (possibly many times, as copies) into one world under prefixes such as
``'env3/scene/'``, so:

* names are unique within the spec for each kind of element and derived from the source: USD prim
  paths without the leading ``/`` (geom ``World/Walls/North``, the body of a rigid prim ``World/Crate``,
  mesh assets ``World/Chair/Seat.mesh``; clashes and mesh parts get ``#k`` suffixes);
* mesh assets built from USD carry their vertex data (``uservert``/``userface``); files referenced by
  MJCF scenes are rewritten to absolute paths, so nothing depends on a working or model directory
  at attach/compile time;
* no lights: the world adds its own lighting. USD lights are ignored; ``<light>`` elements of MJCF
  scenes are deleted (N copies of a scene would otherwise add N times its lights). MJCF keyframes are
  deleted as well, since the world owns the keyframes of its slots;
* geoms that must not collide have ``contype = conaffinity = 0``; colliding geoms keep the default
  bits (1/1), which the world is free to rewrite.

Units and scale (USD)
---------------------
MuJoCo positions end up in metres. A USD stage is read in its own units and frame, then converted:

1. the world transform of each prim (``UsdGeom.XformCache.GetLocalToWorldTransform``) is taken as-is,
   in stage units;
2. a Y-up stage is rotated into Z-up (+90 degrees about X: stage ``+Y`` becomes ``+Z``);
3. lengths are multiplied by the *effective scale* (see :func:`effective_scene_scale`)::

       effective = scene_scale            if scene_scale != (1, 1, 1)
                 = metersPerUnit * (1,1,1) otherwise

   i.e. an explicit ``scene_scale`` is the whole stage-units-to-metres conversion (what Isaac Sim /
   InternUtopia do: they apply ``scene_scale`` on top of the stage and never look at
   ``metersPerUnit``), while the default scale converts by the stage's authored ``metersPerUnit``.
   So ``empty.usd`` (authored in centimetres) gives metres with ``scene_scale=(0.01,)*3`` *and* with
   the default scale, a stage authored in metres gives metres with the default scale, and a metre
   stage with ``scene_scale=(2,2,2)`` is twice as large. Metadata that is not authored counts as
   metres and Z-up (the USD fallbacks, centimetres and Y-up, are rarely what an unannotated robotics
   file means);
4. finally the scene is rotated by ``orientation_wxyz`` and moved to ``position`` (both in metres, in
   the frame the spec is attached to). ``scale`` multiplies everything about the scene origin.

Everything is baked into the geoms (no frames): primitive sizes absorb the (possibly non-uniform)
scale along their own axes; for meshes the linear part of the transform is split into a rotation (the
geom's orientation) and a stretch (scale, shear, mirroring) baked into the vertices, so instances that
differ only by a rigid motion share identical vertex data (merged by ``MjSpec.dedup_assets``). A
sheared transform (non-uniform scale above a rotated child) is approximated for primitives (a warning
says so); meshes stay exact.

Masses given by ``UsdPhysics.MassAPI`` are converted by ``kilogramsPerUnit``; densities additionally
by the effective length scale. As in PhysX, a rigid body's own mass wins; otherwise each collider's
``MassAPI`` (mass or density) decides for its geoms, and the body's density for the others; and
only colliders weigh: a body's visual-only geoms weigh nothing where it has colliders
(:mod:`~internutopia.core.backend.mujoco.usd_mass`).

What is loaded from USD
-----------------------
* ``UsdGeom.Cube``/``Sphere``/``Capsule``/``Cylinder`` (and ``Capsule_1``/``Cylinder_1`` with the
  larger of their radii) become MuJoCo primitives (a non-uniformly scaled sphere becomes an ellipsoid);
* ``UsdGeom.Plane`` becomes a MuJoCo plane (infinite in collision, as in PhysX), normal pointing up;
* ``UsdGeom.Mesh`` polygons are fan-triangulated (holes removed, winding fixed for ``leftHanded``
  meshes and mirroring transforms) into a mesh asset with baked vertices. A flat mesh on a prim whose
  name, or an ancestor's name, contains ``ground`` or ``plane`` (case-insensitive) and whose normal is
  within 25 degrees of vertical becomes a MuJoCo plane -- unless static colliding geometry reaches
  more than 5 cm below it (a plane is a half-space: a tabletop or ceiling under ``GroundFloor`` must
  stay finite; see :mod:`~internutopia.core.backend.mujoco.usd_ground`). Since MuJoCo collides a mesh by its convex
  hull, a colliding mesh made of several disconnected parts is split into one geom per part (up to
  256 parts). A colliding flat mesh that is not a ground becomes a thin box (MuJoCo cannot hull a flat
  mesh), 1 cm thick, behind the side its faces show (a tabletop quad facing up: the box's top is its
  surface), centred on a double-sided mesh; a visual-only flat mesh stays a mesh;
* colour: the ``displayColor``/``displayOpacity`` primvars (averaged when not constant), else the
  ``diffuseColor``/``opacity`` of a bound ``UsdPreviewSurface``, else grey;
* friction: ``dynamicFriction`` of a bound physics material (``UsdPhysics.MaterialAPI``);
* prims with ``UsdPhysics.RigidBodyAPI`` (enabled, not kinematic) become top-level bodies with a free
  joint, holding the geoms of their subtree (nested rigid bodies become bodies of their own); physics
  joints are not supported (warned) and kinematic or disabled rigid bodies are static.

Collision: if any prim of the stage has ``UsdPhysics.CollisionAPI``, only prims having it (or under a
prim having it, the nearest one's ``collisionEnabled`` deciding) collide, and every other geom is
visual only (``contype = conaffinity = 0``). A stage without any ``CollisionAPI`` collides everywhere.

Visibility: prims that are invisible (``visibility`` computed ``invisible``), have purpose ``guide``,
or have purpose ``proxy`` in a stage with ``render``-purpose geometry (the proxies are lightweight
twins of that geometry for interactive viewports, not drawn in final images) are skipped -- except colliders in a stage that uses ``CollisionAPI``: they still collide in Isaac
(e.g. the ``guide`` ``CollisionPlane`` of Isaac's ground planes), so they are kept as collision-only
geoms in geom group 3 (hidden by default in MuJoCo viewers). Geom groups: 0 visible colliders, 2
visual-only geoms, 3 hidden colliders.

Prims with non-finite transforms, points or sizes, and meshes whose ``faceVertexCounts`` do not add
up to their ``faceVertexIndices``, are skipped with a warning naming the file and the prim.
Prims of geometric types that are not supported (``Cone``, ``Points``, curves, point instancers, ...)
and physics joints are skipped with one :func:`warnings.warn` per type. Structural prims (``Xform``,
``Scope``, materials, shaders, cameras, lights, render settings, ...) are ignored silently. All root
prims of the stage are loaded (not only the default prim), instance proxies included.

MJCF scenes
-----------
``.xml`` files are loaded with :meth:`mujoco.MjSpec.from_file`. A non-identity transform wraps the
worldbody's children into one top-level frame (named ``scene_transform``) carrying ``position``,
``orientation_wxyz`` and ``scale`` -- MuJoCo's frame scaling with ``scaling="geometry"`` (lengths and
inertias scale, masses with volume, gains and stiffnesses keep their values). A non-uniform scale
needs shapes aligned with the scene axes (MuJoCo's rule for stretching); otherwise a ``ValueError``
is raised here rather than at world compile time.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import mujoco
import numpy as np

from internutopia.core.backend.mujoco.scene_scale import as_scale as _as_scale
from internutopia.core.backend.mujoco.scene_scale import effective_scene_scale

__all__ = [
    'MJCF_EXTENSIONS',
    'SUPPORTED_SCENE_EXTENSIONS',
    'USD_EXTENSIONS',
    'default_ground_spec',
    'effective_scene_scale',
    'mjcf_scene_to_spec',
    'scene_to_spec',
    'usd_scene_to_spec',
]

USD_EXTENSIONS = ('.usd', '.usda', '.usdc', '.usdz')
MJCF_EXTENSIONS = ('.xml',)
SUPPORTED_SCENE_EXTENSIONS = USD_EXTENSIONS + MJCF_EXTENSIONS


# ------------------------------------------------------------------------------------------------
# public entry points
def scene_to_spec(path: str | os.PathLike | None,
                  scale: float | Sequence[float] = (1.0, 1.0, 1.0),
                  position: Sequence[float] = (0.0, 0.0, 0.0),
                  orientation_wxyz: Sequence[float] = (1.0, 0.0, 0.0, 0.0),
                  *,
                  orientation: Sequence[float] | None = None) -> mujoco.MjSpec:
    """The scene at ``path`` as a standalone spec, dispatching on the file extension.

    ``None`` or an empty path gives :func:`default_ground_spec` (placed at ``position`` /
    ``orientation``; the scale of an infinite plane is moot). ``orientation`` is an alias of
    ``orientation_wxyz`` (quaternion w, x, y, z).

    Raises:
        ValueError: the extension is not one of :data:`SUPPORTED_SCENE_EXTENSIONS`, or the
            transform is invalid.
        FileNotFoundError: the file does not exist.
    """
    if orientation is not None:
        orientation_wxyz = orientation
    if path is None or str(path) == '':
        _, pos, quat = _check_transform(scale, position, orientation_wxyz)
        return default_ground_spec(position=pos, orientation_wxyz=quat)
    ext = _extension(path)
    if ext in USD_EXTENSIONS:
        return usd_scene_to_spec(path, scale, position, orientation_wxyz)
    if ext in MJCF_EXTENSIONS:
        return mjcf_scene_to_spec(path, scale, position, orientation_wxyz)
    raise _bad_extension(path)


def default_ground_spec(position: Sequence[float] | np.ndarray = (0.0, 0.0, 0.0),
                        orientation_wxyz: Sequence[float] | np.ndarray = (1.0, 0.0, 0.0, 0.0)) -> mujoco.MjSpec:
    """An infinite flat ground plane (geom ``ground``) with a checker texture, normal +z at ``position``."""
    _, pos, quat = _check_transform(1.0, position, orientation_wxyz)
    spec = mujoco.MjSpec.from_string("""
<mujoco model="default_ground">
  <asset>
    <texture name="groundplane" type="2d" builtin="checker" rgb1="0.2 0.3 0.4" rgb2="0.1 0.2 0.3"
             mark="edge" markrgb="0.8 0.8 0.8" width="300" height="300"/>
    <material name="groundplane" texture="groundplane" texuniform="true" texrepeat="5 5" reflectance="0.2"/>
  </asset>
  <worldbody>
    <geom name="ground" type="plane" size="0 0 0.05" material="groundplane"/>
  </worldbody>
</mujoco>""")
    geom = spec.geom('ground')
    geom.pos = pos.tolist()
    geom.quat = quat.tolist()
    return spec


def mjcf_scene_to_spec(path: str | os.PathLike,
                       scale: float | Sequence[float] = (1.0, 1.0, 1.0),
                       position: Sequence[float] = (0.0, 0.0, 0.0),
                       orientation_wxyz: Sequence[float] = (1.0, 0.0, 0.0, 0.0)) -> mujoco.MjSpec:
    """An MJCF scene (``.xml``) as a spec, its lights and keyframes removed and its file paths absolute.

    A non-identity transform puts every child of the worldbody into one top-level frame
    ``scene_transform`` (``pos``/``quat``/``scale``, ``scaling="geometry"``).

    Raises:
        ValueError: wrong extension, unparsable file, or contents MuJoCo cannot scale by ``scale``.
        FileNotFoundError: the file does not exist.
    """
    path = _existing(path, MJCF_EXTENSIONS)
    s, pos, quat = _check_transform(scale, position, orientation_wxyz)
    try:
        spec = mujoco.MjSpec.from_file(str(path))
    except Exception as exc:  # mujoco raises ValueError with the parser's message
        raise ValueError(f'failed to load MJCF scene {str(path)!r}: {exc}') from exc
    _absolutize_asset_paths(spec, path)
    for light in list(spec.lights):
        spec.delete(light)
    for key in list(spec.keys):
        spec.delete(key)
    identity = np.allclose(s, 1.0) and np.allclose(pos, 0.0) and np.allclose(quat, [1.0, 0.0, 0.0, 0.0])
    if not identity:
        _wrap_worldbody(spec, s, pos, quat)
        if not np.allclose(s, 1.0):  # fail here, not at world compile, if MuJoCo cannot scale the contents
            try:
                spec.copy().compile()
            except Exception as exc:
                raise ValueError(f'MJCF scene {str(path)!r} cannot be scaled by {tuple(s)}: {exc}') from exc
    return spec


def usd_scene_to_spec(path: str | os.PathLike,
                      scale: float | Sequence[float] = (1.0, 1.0, 1.0),
                      position: Sequence[float] = (0.0, 0.0, 0.0),
                      orientation_wxyz: Sequence[float] = (1.0, 0.0, 0.0, 0.0),
                      edit_stage: Callable[[Any], None] | None = None) -> mujoco.MjSpec:
    """A USD stage (``.usd``/``.usda``/``.usdc``/``.usdz``) as a spec of static geoms and free bodies.

    See the module docstring for the units rule, what is loaded and how collision is decided.
    ``edit_stage(stage)``, when given, runs on the opened stage before it is converted (to edit
    its session layer, say: the file itself is never written).
    """
    path = _existing(path, USD_EXTENSIONS)
    s, pos, quat = _check_transform(scale, position, orientation_wxyz)
    try:
        import_usd()
        from pxr import Usd
    except ImportError as exc:  # pragma: no cover - usd-core is a dependency
        raise ImportError('loading USD scenes needs the usd-core package (pxr)') from exc
    try:
        stage = Usd.Stage.Open(str(path), Usd.Stage.LoadAll)
    except Exception as exc:  # pxr raises Tf.ErrorException on unreadable layers
        raise ValueError(f'failed to open USD scene {str(path)!r}: {exc}') from exc
    if stage is None:
        raise ValueError(f'failed to open USD scene {str(path)!r}')
    if edit_stage is not None:
        edit_stage(stage)
    from internutopia.core.backend.mujoco.usd_builder import UsdSceneBuilder

    return UsdSceneBuilder(stage, str(path), s, pos, quat).build()  # warns at this function's caller


# ------------------------------------------------------------------------------------------------
# argument checks
#: The USD modules the scene builder uses (usd-core's ``pxr``).
USD_MODULES = ('pxr.Usd', 'pxr.UsdGeom', 'pxr.UsdPhysics', 'pxr.UsdShade', 'pxr.UsdLux')


def import_usd() -> None:
    """Import :data:`USD_MODULES` (once; later calls cost a dict lookup) with Ctrl-C held until
    they are in: USD's module loader runs Python as it post-processes each module and turns an
    exception raised there into a printed warning, so a Ctrl-C landing in the import (a few hundred
    milliseconds, the first time a USD scene loads) was swallowed and the run went on. A SIGINT
    that arrives meanwhile goes to the handler that was in place once the import is done (in the
    main thread; elsewhere signals are not delivered anyway)."""
    if USD_MODULES[-1] in sys.modules:
        return
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous is None:
        _import_usd_modules()
        return
    arrived: list[FrameType | None] = []
    signal.signal(signal.SIGINT, lambda signum, frame: arrived.append(frame))
    try:
        _import_usd_modules()
    finally:
        signal.signal(signal.SIGINT, previous)
    if arrived:
        if callable(previous):
            previous(signal.SIGINT, arrived[0])
        elif previous == signal.SIG_DFL:
            signal.raise_signal(signal.SIGINT)


def _import_usd_modules() -> None:
    import importlib

    for name in USD_MODULES:
        importlib.import_module(name)


def _extension(path: str | os.PathLike) -> str:
    return Path(os.fspath(path)).suffix.lower()


def _bad_extension(path: str | os.PathLike, allowed: Sequence[str] = SUPPORTED_SCENE_EXTENSIONS) -> ValueError:
    return ValueError(f'unsupported scene file {os.fspath(path)!r} (extension {_extension(path)!r}); '
                      f'supported extensions: {", ".join(allowed)}')


def _existing(path: str | os.PathLike, allowed: Sequence[str]) -> Path:
    if path is None or os.fspath(path) == '':
        raise ValueError('empty scene path')
    if _extension(path) not in allowed:
        raise _bad_extension(path, allowed)
    p = Path(os.fspath(path)).expanduser()
    if not p.is_file():
        raise FileNotFoundError(f'scene file not found: {os.fspath(path)!r}')
    return p.resolve()


def _check_transform(scale, position, orientation_wxyz) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s = _as_scale(scale)
    pos = np.asarray(position, dtype=float).reshape(-1)
    if pos.size != 3 or not np.all(np.isfinite(pos)):
        raise ValueError(f'scene position must be three finite numbers, got {position!r}')
    quat = np.asarray(orientation_wxyz, dtype=float).reshape(-1)
    norm = np.linalg.norm(quat) if quat.size == 4 else 0.0
    if quat.size != 4 or not np.isfinite(norm) or norm < 1e-9:
        raise ValueError(f'scene orientation must be a non-zero quaternion (w, x, y, z), got {orientation_wxyz!r}')
    return s, pos, quat / norm


# ------------------------------------------------------------------------------------------------
# MJCF helpers
def _resolve(base: str, sub: str, file: str) -> str:
    if not file or os.path.isabs(file):
        return file
    return os.path.normpath(os.path.join(base, sub or '', file))


def _absolutize_asset_paths(spec: mujoco.MjSpec, path: Path) -> None:
    base = spec.modelfiledir or str(path.parent)
    meshdir = spec.meshdir or ''
    texturedir = spec.texturedir or ''
    for mesh in spec.meshes:
        mesh.file = _resolve(base, meshdir, mesh.file)
    for hfield in spec.hfields:
        hfield.file = _resolve(base, meshdir, hfield.file)
    for skin in spec.skins:
        skin.file = _resolve(base, meshdir, skin.file)
    for tex in spec.textures:
        tex.file = _resolve(base, texturedir, tex.file)
        files = list(tex.cubefiles)
        if any(files):
            tex.cubefiles = [_resolve(base, texturedir, f) for f in files]
    spec.meshdir = ''
    spec.texturedir = ''


def _wrap_worldbody(spec: mujoco.MjSpec, s: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
    world = spec.worldbody
    children = []
    for kind in ('bodies', 'geoms', 'sites', 'cameras', 'frames', 'lights'):
        children += [e for e in getattr(world, kind) if e.frame is None]
    name = 'scene_transform'
    while spec.frame(name) is not None:
        name += '_'
    top = world.add_frame(name=name, pos=pos.tolist(), quat=quat.tolist())
    if not np.allclose(s, 1.0):
        top.scale = s.tolist()
        top.scaling = mujoco.mjtScaling.mjSCALING_GEOMETRY
    for element in children:
        element.set_frame(top)
