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
by the effective length scale.

What is loaded from USD
-----------------------
* ``UsdGeom.Cube``/``Sphere``/``Capsule``/``Cylinder`` (and ``Capsule_1``/``Cylinder_1`` with the
  larger of their radii) become MuJoCo primitives (a non-uniformly scaled sphere becomes an ellipsoid);
* ``UsdGeom.Plane`` becomes a MuJoCo plane (infinite in collision, as in PhysX), normal pointing up;
* ``UsdGeom.Mesh`` polygons are fan-triangulated (holes removed, winding fixed for ``leftHanded``
  meshes and mirroring transforms) into a mesh asset with baked vertices. A flat mesh on a prim whose
  name, or an ancestor's name, contains ``ground`` or ``plane`` (case-insensitive) and whose normal is
  within 25 degrees of vertical becomes a MuJoCo plane. Since MuJoCo collides a mesh by its convex
  hull, a colliding mesh made of several disconnected parts is split into one geom per part (up to
  256 parts). A colliding flat mesh that is not a ground becomes a thin box (MuJoCo cannot hull a flat
  mesh); a visual-only flat mesh stays a mesh;
* colour: the ``displayColor``/``displayOpacity`` primvars (averaged when not constant), else the
  ``diffuseColor``/``opacity`` of a bound ``UsdPreviewSurface``, else grey;
* friction: ``dynamicFriction`` of a bound physics material (``UsdPhysics.MaterialAPI``);
* prims with ``UsdPhysics.RigidBodyAPI`` (enabled, not kinematic) become top-level bodies with a free
  joint, holding the geoms of their subtree (nested rigid bodies become bodies of their own); physics
  joints are not supported (warned) and kinematic or disabled rigid bodies are static.

Collision: if any prim of the stage has ``UsdPhysics.CollisionAPI``, only prims having it (or under a
prim having it, the nearest one's ``collisionEnabled`` deciding) collide, and every other geom is
visual only (``contype = conaffinity = 0``). A stage without any ``CollisionAPI`` collides everywhere.

Visibility: prims that are invisible (``visibility`` computed ``invisible``) or have purpose ``guide``
are skipped -- except colliders in a stage that uses ``CollisionAPI``: they still collide in Isaac
(e.g. the ``guide`` ``CollisionPlane`` of Isaac's ground planes), so they are kept as collision-only
geoms in geom group 3 (hidden by default in MuJoCo viewers). Geom groups: 0 visible colliders, 2
visual-only geoms, 3 hidden colliders.

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

import math
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import mujoco
import numpy as np

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

#: Geom groups used for the geoms built here.
GROUP_COLLIDER = 0
GROUP_VISUAL = 2
GROUP_HIDDEN_COLLIDER = 3

_DEFAULT_RGBA = (0.7, 0.7, 0.7, 1.0)
_GROUND_WORDS = ('ground', 'plane')
_MAX_MESH_PARTS = 256
_FLAT_REL_TOL = 1e-5  # thickness / extent below which a mesh counts as flat
_THIN_BOX_HALF = 0.005  # metres: half thickness of the box replacing a colliding flat mesh
_GROUND_MAX_TILT_COS = math.cos(math.radians(25.0))
_Y_UP_TO_Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


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


def default_ground_spec(position: Sequence[float] = (0.0, 0.0, 0.0),
                        orientation_wxyz: Sequence[float] = (1.0, 0.0, 0.0, 0.0)) -> mujoco.MjSpec:
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


def effective_scene_scale(scale: float | Sequence[float], meters_per_unit: float) -> np.ndarray:
    """Per-axis factor from stage units to metres: ``scale`` unless it is (1, 1, 1), else ``meters_per_unit``."""
    s = _as_scale(scale)
    if np.allclose(s, 1.0, rtol=0.0, atol=1e-12):
        return np.full(3, float(meters_per_unit))
    return s


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
                      orientation_wxyz: Sequence[float] = (1.0, 0.0, 0.0, 0.0)) -> mujoco.MjSpec:
    """A USD stage (``.usd``/``.usda``/``.usdc``/``.usdz``) as a spec of static geoms and free bodies.

    See the module docstring for the units rule, what is loaded and how collision is decided.
    """
    path = _existing(path, USD_EXTENSIONS)
    s, pos, quat = _check_transform(scale, position, orientation_wxyz)
    try:
        from pxr import Usd
    except ImportError as exc:  # pragma: no cover - usd-core is a dependency
        raise ImportError('loading USD scenes needs the usd-core package (pxr)') from exc
    try:
        stage = Usd.Stage.Open(str(path), Usd.Stage.LoadAll)
    except Exception as exc:  # pxr raises Tf.ErrorException on unreadable layers
        raise ValueError(f'failed to open USD scene {str(path)!r}: {exc}') from exc
    if stage is None:
        raise ValueError(f'failed to open USD scene {str(path)!r}')
    return _UsdSceneBuilder(stage, str(path), s, pos, quat).build()  # warns at this function's caller


# ------------------------------------------------------------------------------------------------
# argument checks
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


def _as_scale(scale: float | Sequence[float]) -> np.ndarray:
    s = np.asarray(scale, dtype=float).reshape(-1)
    if s.size == 1:
        s = np.repeat(s, 3)
    if s.size != 3 or not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise ValueError(f'scene scale must be one or three finite positive numbers, got {scale!r}')
    return s


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


def _quat_to_mat(quat: np.ndarray) -> np.ndarray:
    mat = np.zeros(9)
    mujoco.mju_quat2Mat(mat, np.asarray(quat, dtype=float))
    return mat.reshape(3, 3)


def _mat_to_quat(mat: np.ndarray) -> np.ndarray:
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(mat, dtype=float).reshape(9))
    return quat


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


# ------------------------------------------------------------------------------------------------
# mesh helpers
def _triangulate(counts: np.ndarray, indices: np.ndarray, holes: np.ndarray | None = None) -> np.ndarray:
    """Fan-triangulate polygons given as face vertex counts and flat indices: (m, 3) int array."""
    counts = np.asarray(counts, dtype=np.int64).reshape(-1)
    indices = np.asarray(indices, dtype=np.int64).reshape(-1)
    if counts.size == 0 or counts.sum() != indices.size:
        return np.zeros((0, 3), dtype=np.int64)
    starts = np.cumsum(counts) - counts
    ntri = np.maximum(counts - 2, 0)
    if holes is not None and len(holes):
        keep = np.ones(counts.size, dtype=bool)
        holes = np.asarray(holes, dtype=np.int64)
        keep[holes[(holes >= 0) & (holes < counts.size)]] = False
        ntri = np.where(keep, ntri, 0)
    total = int(ntri.sum())
    if total == 0:
        return np.zeros((0, 3), dtype=np.int64)
    face_start = np.repeat(starts, ntri)
    offsets = np.arange(total) - np.repeat(np.cumsum(ntri) - ntri, ntri) + 1  # 1 .. n-2 within each face
    return np.stack([indices[face_start], indices[face_start + offsets], indices[face_start + offsets + 1]], axis=1)


def _components(tris: np.ndarray, nvert: int) -> np.ndarray:
    """Connected-component label of every vertex (by shared indices)."""
    labels = np.arange(nvert)
    while True:
        tri_min = labels[tris].min(axis=1)
        new = labels.copy()
        for k in range(3):
            np.minimum.at(new, tris[:, k], tri_min)
        new = new[new]
        while True:  # pointer jumping
            nxt = new[new]
            if np.array_equal(nxt, new):
                break
            new = nxt
        if np.array_equal(new, labels):
            return labels
        labels = new


def _flatness(verts: np.ndarray) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray]:
    """(is_flat, centre, axes (columns u, v, n), half extents along the axes) of a point set."""
    lo, hi = verts.min(axis=0), verts.max(axis=0)
    centre = (lo + hi) / 2
    centred = verts - centre
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    axes = vt.T
    if axes.shape[1] < 3:  # fewer than 3 points
        axes = np.eye(3)
    if np.linalg.det(axes) < 0:
        axes[:, 2] *= -1
    # In-plane axes: the principal ones, or the scene's x axis projected into the plane when that gives
    # a smaller bounding rectangle (principal axes of a square are arbitrary).
    n = axes[:, 2]
    u = np.array([1.0, 0.0, 0.0]) - n[0] * n
    if np.linalg.norm(u) > 1e-6:
        u /= np.linalg.norm(u)
        candidate = np.stack([u, np.cross(n, u), n], axis=1)
        extent_pca = np.ptp(centred @ axes, axis=0)
        extent_x = np.ptp(centred @ candidate, axis=0)
        if extent_x[0] * extent_x[1] <= extent_pca[0] * extent_pca[1] * (1 + 1e-9):
            axes = candidate
    proj = centred @ axes
    plo, phi = proj.min(axis=0), proj.max(axis=0)
    extent = phi - plo
    flat = extent[2] <= _FLAT_REL_TOL * max(extent.max(), 1e-12) + 1e-12
    centre = centre + axes @ ((plo + phi) / 2)
    return bool(flat), centre, axes, extent / 2


def _polar(linear: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``linear = rot @ stretch`` with ``rot`` a proper rotation (``stretch`` symmetric up to a mirror)."""
    u, sigma, vt = np.linalg.svd(linear)
    rot = u @ vt
    if np.linalg.det(rot) < 0:
        u = u.copy()
        u[:, 2] *= -1
        rot = u @ vt
    stretch = rot.T @ linear
    stretch[np.abs(stretch) < 1e-12] = 0.0
    if np.allclose(stretch, np.eye(3), atol=1e-9):
        stretch = np.eye(3)
    return rot, stretch


def _mesh_volume(verts: np.ndarray, tris: np.ndarray) -> float:
    """Enclosed volume of a closed triangle mesh; its bounding box volume when it is open or flat."""
    a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    volume = abs(float(np.einsum('ij,ij->i', a, np.cross(b, c)).sum()) / 6.0)
    box = float(np.prod(verts.max(axis=0) - verts.min(axis=0)))
    return volume if volume > 1e-3 * box else box


def _primitive_volume(geom_type, size: np.ndarray) -> float:
    if geom_type == mujoco.mjtGeom.mjGEOM_BOX:
        return 8.0 * float(np.prod(size))
    if geom_type == mujoco.mjtGeom.mjGEOM_SPHERE:
        return 4.0 / 3.0 * math.pi * size[0] ** 3
    if geom_type == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
        return 4.0 / 3.0 * math.pi * float(np.prod(size))
    if geom_type == mujoco.mjtGeom.mjGEOM_CAPSULE:
        return math.pi * size[0] ** 2 * (2 * size[1] + 4.0 / 3.0 * size[0])
    if geom_type == mujoco.mjtGeom.mjGEOM_CYLINDER:
        return math.pi * size[0] ** 2 * 2 * size[1]
    return 0.0


# ------------------------------------------------------------------------------------------------
# USD
class _UsdSceneBuilder:
    def __init__(self, stage, path: str, scale: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
        from pxr import Usd, UsdGeom, UsdPhysics

        self.stage = stage
        self.path = path
        self.time = Usd.TimeCode.EarliestTime()
        self.xform_cache = UsdGeom.XformCache(self.time)
        self.spec = mujoco.MjSpec()
        self.spec.modelname = Path(path).stem
        self.names: dict[str, set[str]] = {'body': {'world'}, 'geom': set(), 'mesh': set()}
        self.unsupported: dict[str, str] = {}
        self.messages: list[str] = []

        mpu = UsdGeom.GetStageMetersPerUnit(stage) if stage.HasAuthoredMetadata('metersPerUnit') else 1.0
        kpu = UsdPhysics.GetStageKilogramsPerUnit(stage) if stage.HasAuthoredMetadata('kilogramsPerUnit') else 1.0
        up = UsdGeom.GetStageUpAxis(stage) if stage.HasAuthoredMetadata('upAxis') else UsdGeom.Tokens.z
        self.eff = effective_scene_scale(scale, mpu)
        self.kg_per_unit = kpu
        up_rot = _Y_UP_TO_Z_UP if up == UsdGeom.Tokens.y else np.eye(3)
        top = np.eye(4)
        top[:3, :3] = _quat_to_mat(quat) @ np.diag(self.eff) @ up_rot
        top[:3, 3] = pos
        self.top = top  # stage world (stage units, stage up axis) -> scene frame (metres, z up)
        self.has_collision_api = any(
            p.HasAPI(UsdPhysics.CollisionAPI)
            for p in Usd.PrimRange(stage.GetPseudoRoot(), Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)))
        self.body_geoms: dict[str, list] = {}  # body name -> [(geom, volume)]
        self.body_mass: dict[str, tuple[str, float]] = {}  # body name -> ('mass' | 'density', value)

    # -- names --------------------------------------------------------------------------------
    def _name(self, base: str, kind: str = 'geom') -> str:
        """A name unique among the ``kind`` elements (bodies, geoms, meshes) of the spec."""
        taken = self.names[kind]
        base = base.lstrip('/') or 'prim'
        name, k = base, 1
        while name in taken:
            name = f'{base}#{k}'
            k += 1
        taken.add(name)
        return name

    # -- traversal ----------------------------------------------------------------------------
    def build(self) -> mujoco.MjSpec:
        from pxr import Usd

        predicate = Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)
        stack = [(p, None, None) for p in reversed(self.stage.GetPseudoRoot().GetFilteredChildren(predicate))]
        while stack:
            prim, body, collision = stack.pop()
            body, collision = self._visit(prim, body, collision)
            for child in reversed(prim.GetFilteredChildren(predicate)):
                stack.append((child, body, collision))
        for type_name, example in self.unsupported.items():
            self._warn(f'skipping unsupported USD prim type {type_name!r} (e.g. {example})')
        for body in list(self.spec.worldbody.bodies):
            geoms = self.body_geoms.get(body.name, [])
            if not geoms:
                self._warn(f'rigid body {body.name!r} has no loadable geometry; dropped')
                self.spec.delete(body)
                continue
            kind, value = self.body_mass.get(body.name, (None, 0.0))
            if kind == 'mass':  # one density for the body's geoms so that they add up to the mass
                volume = sum(v for _, v in geoms)
                for geom, _ in geoms:
                    geom.density = value / max(volume, 1e-12)
            elif kind == 'density':
                for geom, _ in geoms:
                    geom.density = value
        for message in self.messages:  # reported at the caller of usd_scene_to_spec
            warnings.warn(f'{self.path}: {message}', stacklevel=3)
        return self.spec

    def _warn(self, message: str) -> None:
        if message not in self.messages:
            self.messages.append(message)

    def _visit(self, prim, body, collision):
        """Handle one prim; return the (body, collision state) its children inherit."""
        from pxr import UsdGeom, UsdLux, UsdPhysics, UsdShade

        if prim.HasAPI(UsdPhysics.CollisionAPI):
            enabled = UsdPhysics.CollisionAPI(prim).GetCollisionEnabledAttr().Get(self.time)
            collision = True if enabled is None else bool(enabled)
        if prim.HasAPI(UsdPhysics.RigidBodyAPI):
            body = self._rigid_body(prim) if self._is_dynamic(prim) else None

        kind = None
        for schema, label in ((UsdGeom.Plane, 'plane'), (UsdGeom.Cube, 'cube'), (UsdGeom.Sphere, 'sphere'),
                              (UsdGeom.Capsule, 'capsule'), (UsdGeom.Cylinder, 'cylinder'),
                              (getattr(UsdGeom, 'Capsule_1', None), 'capsule1'),
                              (getattr(UsdGeom, 'Cylinder_1', None), 'cylinder1'), (UsdGeom.Mesh, 'mesh')):
            if schema is not None and prim.IsA(schema):
                kind = label
                break
        if kind is None:
            type_name = str(prim.GetTypeName())
            geometric = prim.IsA(UsdGeom.Boundable) and not prim.IsA(UsdLux.BoundableLightBase)
            joint = type_name.startswith('Physics') and type_name.endswith('Joint')
            if (geometric or joint) and not prim.IsA(UsdShade.Material):
                self.unsupported.setdefault(type_name, str(prim.GetPath()))
            return body, collision

        collides = bool(collision) if self.has_collision_api else True
        imageable = UsdGeom.Imageable(prim)
        hidden = (imageable.ComputeVisibility(self.time) == UsdGeom.Tokens.invisible
                  or imageable.ComputePurpose() == UsdGeom.Tokens.guide)
        if hidden and not (collides and self.has_collision_api):
            return body, collision
        style = self._style(prim, collides, hidden)
        world = self.top @ self._world_matrix(prim)
        if body is None:
            parent, rel = self.spec.worldbody, world
        else:
            parent, body_inv = body
            rel = body_inv @ world
        getattr(self, f'_emit_{kind}')(prim, parent, rel, style, body is not None)
        return body, collision

    def _world_matrix(self, prim) -> np.ndarray:
        return np.array(self.xform_cache.GetLocalToWorldTransform(prim), dtype=float).T

    def _is_dynamic(self, prim) -> bool:
        from pxr import UsdPhysics

        api = UsdPhysics.RigidBodyAPI(prim)
        enabled = api.GetRigidBodyEnabledAttr().Get(self.time)
        kinematic = api.GetKinematicEnabledAttr().Get(self.time)
        return (enabled is None or bool(enabled)) and not bool(kinematic)

    def _rigid_body(self, prim):
        from pxr import UsdPhysics

        world = self.top @ self._world_matrix(prim)
        rot, _ = self._rotation_scale(world[:3, :3])
        pos = world[:3, 3]
        body = self.spec.worldbody.add_body(name=self._name(str(prim.GetPath()), 'body'), pos=pos.tolist(),
                                            quat=_mat_to_quat(rot).tolist())
        body.add_freejoint()
        if prim.HasAPI(UsdPhysics.MassAPI):
            mass_api = UsdPhysics.MassAPI(prim)
            mass = mass_api.GetMassAttr().Get(self.time)
            density = mass_api.GetDensityAttr().Get(self.time)
            length = float(np.prod(self.eff)) ** (1.0 / 3.0)
            if mass is not None and mass > 0:
                self.body_mass[body.name] = ('mass', float(mass) * self.kg_per_unit)
            elif density is not None and density > 0:
                self.body_mass[body.name] = ('density', float(density) * self.kg_per_unit / length ** 3)
        inv = np.eye(4)
        inv[:3, :3] = rot.T
        inv[:3, 3] = -rot.T @ pos
        return body, inv

    # -- appearance / physics properties ------------------------------------------------------
    def _style(self, prim, collides: bool, hidden: bool) -> dict:
        style = {'rgba': self._color(prim)}
        if not collides:
            style.update(contype=0, conaffinity=0, group=GROUP_VISUAL)
        else:
            style['group'] = GROUP_HIDDEN_COLLIDER if hidden else GROUP_COLLIDER
            friction = self._friction(prim)
            if friction is not None:
                style['friction'] = [friction, 0.005, 0.0001]
        return style

    def _color(self, prim) -> list[float]:
        from pxr import UsdGeom, UsdShade

        rgb, alpha = None, None
        api = UsdGeom.PrimvarsAPI(prim)
        for name in ('displayColor', 'displayOpacity'):
            primvar = api.FindPrimvarWithInheritance(name)
            if not primvar or not primvar.HasValue():
                continue
            value = primvar.Get(self.time)
            if value is None or len(value) == 0:
                continue
            arr = np.asarray(value, dtype=float)
            if name == 'displayColor':
                rgb = arr.reshape(-1, 3).mean(axis=0)
            else:
                alpha = float(arr.reshape(-1).mean())
        if rgb is None:
            try:
                material, _ = UsdShade.MaterialBindingAPI(prim).ComputeBoundMaterial()
                if material:
                    shader = material.ComputeSurfaceSource()[0]
                    if shader:
                        diffuse = shader.GetInput('diffuseColor')
                        if diffuse and diffuse.Get(self.time) is not None:
                            rgb = np.asarray(diffuse.Get(self.time), dtype=float)
                        opacity = shader.GetInput('opacity')
                        if alpha is None and opacity and opacity.Get(self.time) is not None:
                            alpha = float(opacity.Get(self.time))
            except Exception:  # materials are best-effort
                pass
        rgba = list(_DEFAULT_RGBA) if rgb is None else [*np.clip(rgb, 0, 1).tolist(), 1.0]
        if alpha is not None:
            rgba[3] = float(np.clip(alpha, 0, 1))
        return rgba

    def _friction(self, prim) -> float | None:
        from pxr import UsdPhysics, UsdShade

        try:
            material, _ = UsdShade.MaterialBindingAPI(prim).ComputeBoundMaterial('physics')
            if material and material.GetPrim().HasAPI(UsdPhysics.MaterialAPI):
                value = UsdPhysics.MaterialAPI(material.GetPrim()).GetDynamicFrictionAttr().Get(self.time)
                if value is not None and value > 0:
                    return float(value)
        except Exception:
            pass
        return None

    # -- geometry -----------------------------------------------------------------------------
    def _rotation_scale(self, linear: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rotation and per-local-axis scale of a linear map (exact without shear)."""
        s = np.linalg.norm(linear, axis=0)
        s = np.where(s < 1e-12, 1e-12, s)
        normalized = linear / s
        u, _, vt = np.linalg.svd(normalized)
        rot = u @ vt
        if np.linalg.det(rot) < 0:  # mirrored: flip one axis, the shapes are symmetric
            rot[:, 2] *= -1
            normalized = normalized.copy()
            normalized[:, 2] *= -1
        if np.abs(normalized - rot).max() > 1e-4:
            self._warn('sheared transforms (non-uniform scale above rotated prims) are approximated for '
                       'primitive shapes')
        return rot, s

    def _add_geom(self, parent, prim, style: dict, suffix: str = '', volume: float | None = None, **kwargs):
        geom = parent.add_geom(name=self._name(str(prim.GetPath()) + suffix), **style, **kwargs)
        if parent.name != 'world':  # a free body: remember its geoms for its mass
            size = np.asarray(kwargs.get('size', [0, 0, 0]), dtype=float)
            if volume is None:
                volume = _primitive_volume(kwargs['type'], size)
            self.body_geoms.setdefault(parent.name, []).append((geom, volume))
        return geom

    def _place(self, rel: np.ndarray, local_rot: np.ndarray | None = None) -> tuple[list, list, np.ndarray]:
        rot, s = self._rotation_scale(rel[:3, :3])
        if local_rot is not None:
            rot = rot @ local_rot
        return rel[:3, 3].tolist(), _mat_to_quat(rot).tolist(), s

    @staticmethod
    def _axis_perm(axis: str) -> tuple[np.ndarray, int, tuple[int, int]]:
        """Rotation taking MuJoCo's local z onto the USD ``axis``, that axis' index and the others'."""
        if axis == 'X':
            return np.array([[0.0, 0, 1], [1, 0, 0], [0, 1, 0]]), 0, (1, 2)
        if axis == 'Y':
            return np.array([[0.0, 1, 0], [0, 0, 1], [1, 0, 0]]), 1, (2, 0)
        return np.eye(3), 2, (0, 1)

    def _emit_cube(self, prim, parent, rel, style, dynamic) -> int:
        from pxr import UsdGeom

        size = UsdGeom.Cube(prim).GetSizeAttr().Get(self.time)
        size = 2.0 if size is None else float(size)
        pos, quat, s = self._place(rel)
        half = np.maximum(np.abs(size) / 2 * s, 1e-6)
        self._add_geom(parent, prim, style, type=mujoco.mjtGeom.mjGEOM_BOX, size=half.tolist(), pos=pos, quat=quat)
        return 1

    def _emit_sphere(self, prim, parent, rel, style, dynamic) -> int:
        from pxr import UsdGeom

        radius = UsdGeom.Sphere(prim).GetRadiusAttr().Get(self.time)
        radius = 1.0 if radius is None else abs(float(radius))
        pos, quat, s = self._place(rel)
        if np.allclose(s, s[0], rtol=1e-6):
            self._add_geom(parent, prim, style, type=mujoco.mjtGeom.mjGEOM_SPHERE,
                           size=[max(radius * s[0], 1e-6), 0, 0], pos=pos, quat=quat)
        else:
            self._add_geom(parent, prim, style, type=mujoco.mjtGeom.mjGEOM_ELLIPSOID,
                           size=np.maximum(radius * s, 1e-6).tolist(), pos=pos, quat=quat)
        return 1

    def _round_shape(self, prim, parent, rel, style, schema, radius_attrs, geom_type) -> int:
        api = schema(prim)
        radius = max(abs(float(getattr(api, a)().Get(self.time) or 0.0)) for a in radius_attrs)
        height = api.GetHeightAttr().Get(self.time)
        height = 0.0 if height is None else abs(float(height))
        axis = str(api.GetAxisAttr().Get(self.time) or 'Z')
        perm, ax, others = self._axis_perm(axis)
        pos, quat, s = self._place(rel, perm)
        r = radius * float(np.mean(s[list(others)]))
        half = height / 2 * s[ax]
        self._add_geom(parent, prim, style, type=geom_type, size=[max(r, 1e-6), max(half, 1e-6), 0],
                       pos=pos, quat=quat)
        return 1

    def _emit_capsule(self, prim, parent, rel, style, dynamic) -> int:
        from pxr import UsdGeom

        return self._round_shape(prim, parent, rel, style, UsdGeom.Capsule, ('GetRadiusAttr',),
                                 mujoco.mjtGeom.mjGEOM_CAPSULE)

    def _emit_capsule1(self, prim, parent, rel, style, dynamic) -> int:
        from pxr import UsdGeom

        return self._round_shape(prim, parent, rel, style, UsdGeom.Capsule_1,
                                 ('GetRadiusTopAttr', 'GetRadiusBottomAttr'), mujoco.mjtGeom.mjGEOM_CAPSULE)

    def _emit_cylinder(self, prim, parent, rel, style, dynamic) -> int:
        from pxr import UsdGeom

        return self._round_shape(prim, parent, rel, style, UsdGeom.Cylinder, ('GetRadiusAttr',),
                                 mujoco.mjtGeom.mjGEOM_CYLINDER)

    def _emit_cylinder1(self, prim, parent, rel, style, dynamic) -> int:
        from pxr import UsdGeom

        return self._round_shape(prim, parent, rel, style, UsdGeom.Cylinder_1,
                                 ('GetRadiusTopAttr', 'GetRadiusBottomAttr'), mujoco.mjtGeom.mjGEOM_CYLINDER)

    def _plane_geom(self, parent, prim, style, centre, axes, half) -> None:
        axes = np.array(axes, dtype=float)
        if axes[2, 2] < 0:  # normal (third column) pointing down: turn over about u
            axes[:, 1:] *= -1
        self._add_geom(parent, prim, style, type=mujoco.mjtGeom.mjGEOM_PLANE,
                       size=[max(float(half[0]), 0.0), max(float(half[1]), 0.0), 0.5],
                       pos=np.asarray(centre).tolist(), quat=_mat_to_quat(axes).tolist())

    def _emit_plane(self, prim, parent, rel, style, dynamic) -> int:
        from pxr import UsdGeom

        if dynamic:
            self._warn(f'plane {prim.GetPath()} is in a rigid body; MuJoCo planes must be static, skipped')
            return 0
        api = UsdGeom.Plane(prim)
        width = abs(float(api.GetWidthAttr().Get(self.time) or 0.0))
        length = abs(float(api.GetLengthAttr().Get(self.time) or 0.0))
        axis = str(api.GetAxisAttr().Get(self.time) or 'Z')
        # (u, v, n) in the prim's frame and the USD extents along u and v
        if axis == 'X':
            local, extents = np.array([[0.0, 0, 1], [1, 0, 0], [0, 1, 0]]), (length, width)
        elif axis == 'Y':
            local, extents = np.array([[0.0, 1, 0], [0, 0, 1], [1, 0, 0]]), (length, width)
        else:
            local, extents = np.eye(3), (width, length)
        linear = rel[:3, :3] @ local
        lengths = np.linalg.norm(linear, axis=0)
        u = linear[:, 0] / max(lengths[0], 1e-12)
        n = np.cross(linear[:, 0], linear[:, 1])
        n = n / max(np.linalg.norm(n), 1e-12)
        v = np.cross(n, u)
        self._plane_geom(parent, prim, style, rel[:3, 3], np.stack([u, v, n], axis=1),
                         (extents[0] / 2 * lengths[0], extents[1] / 2 * lengths[1]))
        return 1

    def _emit_mesh(self, prim, parent, rel, style, dynamic) -> int:
        from pxr import UsdGeom

        api = UsdGeom.Mesh(prim)
        points = api.GetPointsAttr().Get(self.time)
        counts = api.GetFaceVertexCountsAttr().Get(self.time)
        indices = api.GetFaceVertexIndicesAttr().Get(self.time)
        if points is None or counts is None or indices is None or len(points) < 3:
            return 0
        points = np.asarray(points, dtype=float).reshape(-1, 3)
        indices = np.asarray(indices, dtype=np.int64)
        if indices.size and (indices.min() < 0 or indices.max() >= len(points)):
            self._warn(f'mesh {prim.GetPath()} has out-of-range face indices; skipped')
            return 0
        tris = _triangulate(counts, indices, api.GetHoleIndicesAttr().Get(self.time))
        if len(tris) == 0:
            return 0
        linear, offset = rel[:3, :3], rel[:3, 3]
        left = api.GetOrientationAttr().Get(self.time) == UsdGeom.Tokens.leftHanded
        if left != (np.linalg.det(linear) < 0):
            tris = tris[:, [0, 2, 1]]
        # linear = rot @ stretch: the rotation goes to the geom's quat (instances of a mesh which differ
        # only by a rigid motion share their vertices, so dedup_assets can merge them), the stretch
        # (scale, shear, mirroring) is baked into the vertices
        rot, stretch = _polar(linear)
        verts = points @ stretch.T
        quat = _mat_to_quat(rot).tolist()
        collides = style.get('contype', 1) != 0

        # ground: a flat mesh named like a ground plane
        if not dynamic and self._ground_like(prim):
            used = verts[np.unique(tris)] @ rot.T
            flat, centre, axes, half = _flatness(used)
            if flat and abs(axes[2, 2]) >= _GROUND_MAX_TILT_COS:
                self._plane_geom(parent, prim, style, centre + offset, axes, half)
                return 1

        parts = [tris]
        if collides:
            labels = _components(tris, len(verts))
            roots, tri_label = np.unique(labels[tris[:, 0]], return_inverse=True)
            if 1 < len(roots) <= _MAX_MESH_PARTS:
                parts = [tris[tri_label == k] for k in range(len(roots))]
            elif len(roots) > _MAX_MESH_PARTS:
                self._warn(f'mesh {prim.GetPath()} has {len(roots)} parts (more than {_MAX_MESH_PARTS}); it '
                           'collides as the convex hull of the whole mesh')
        count = 0
        for k, part in enumerate(parts):
            suffix = '' if len(parts) == 1 else f'#part{k}'
            used, local = np.unique(part, return_inverse=True)
            part_verts = verts[used]
            part_tris = local.reshape(-1, 3)
            flat, centre, axes, half = _flatness(part_verts)
            if flat and collides:  # MuJoCo cannot hull a flat mesh: a thin box instead
                half_t = _THIN_BOX_HALF
                self._add_geom(parent, prim, style, suffix, type=mujoco.mjtGeom.mjGEOM_BOX,
                               size=[max(half[0], half_t), max(half[1], half_t), half_t],
                               pos=(rot @ centre + offset).tolist(), quat=_mat_to_quat(rot @ axes).tolist())
                count += 1
                continue
            mesh_name = self._name(str(prim.GetPath()) + suffix + '.mesh', 'mesh')
            mesh = self.spec.add_mesh(name=mesh_name, uservert=part_verts.astype(np.float32).reshape(-1).tolist(),
                                      userface=part_tris.astype(np.int32).reshape(-1).tolist())
            if flat or not dynamic:
                mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
            self._add_geom(parent, prim, style, suffix, volume=_mesh_volume(part_verts, part_tris),
                           type=mujoco.mjtGeom.mjGEOM_MESH, meshname=mesh_name, pos=offset.tolist(), quat=quat)
            count += 1
        return count

    @staticmethod
    def _ground_like(prim) -> bool:
        p = prim
        while p and not p.IsPseudoRoot():
            name = p.GetName().lower()
            if any(word in name for word in _GROUND_WORDS):
                return True
            p = p.GetParent()
        return False
