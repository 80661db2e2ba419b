"""Level of detail for rendering: visual meshes decimated to a triangle budget, cached on disk.

Mesa's CPU rasterizer is bound by vertex work when a detailed robot is in view (the Menagerie H1
has 286k mesh triangles; a frame of it costs tens of milliseconds at any image size). Rendering
contexts are therefore built from a *copy* of a pack's model whose meshes above
:data:`FACE_BUDGET` triangles are decimated (edge collapses ordered by quadric error, by zeux's
``meshoptimizer`` from PyPI). Physics never sees the copy: collisions, contacts and inertias use
the pack's own model. Without ``meshoptimizer`` (a platform it does not build on) meshes are drawn
at full detail, with one warning.

The copy keeps every mesh at its address and only shortens it (``mesh_vertnum``, ``mesh_facenum``,
...), so it has the same geoms, bodies and sizes as the original and any ``MjData`` of the original
renders with it. Decimated meshes are stored under :func:`cache_dir` by a hash of their content
(vertices, faces, budget and the library's version), so a second start decimates nothing.
"""

from __future__ import annotations

import copy
import hashlib
import os
import tempfile
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from internutopia.core.util.caller import caller_stacklevel

#: Triangles a mesh may keep; larger meshes are decimated to this many (for rendering only). The
#: H1 then draws 10k of its 286k triangles, and its third-person frame stays within about 38 dB
#: PSNR of the full-detail frame (``docs/rendering.md``).
FACE_BUDGET = 500
#: Bumped when the decimation or the stored format changes (old cache files are then ignored).
_FORMAT = 1
_MEMORY_SIZE = 256
_memory: OrderedDict[str, Decimated] = OrderedDict()
_memory_lock = threading.Lock()


@dataclass(frozen=True)
class Decimated:
    """A decimated mesh: ``vertices (n, 3)`` float32, ``faces (m, 3)`` int32 and smooth
    ``normals (n, 3)`` float32 (area-weighted vertex normals)."""

    vertices: np.ndarray
    faces: np.ndarray
    normals: np.ndarray


@dataclass(frozen=True)
class LodReport:
    """What :func:`lod_model` did: meshes decimated, triangles before and after (over all meshes)."""

    meshes: int
    faces_before: int
    faces_after: int


def cache_dir() -> Path:
    """Where decimated meshes are kept: ``$INTERNUTOPIA_CACHE_DIR/lod``, else
    ``$XDG_CACHE_HOME/internutopia/lod``, else ``~/.cache/internutopia/lod``."""
    root = os.environ.get('INTERNUTOPIA_CACHE_DIR')
    if root:
        return Path(root) / 'lod'
    xdg = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return Path(xdg) / 'internutopia' / 'lod'


def _library_version() -> str:
    try:
        from importlib.metadata import version

        return version('meshoptimizer')
    except Exception:  # noqa: BLE001 - any failure: the key just names no version
        return 'unknown'


def content_key(vertices: np.ndarray, faces: np.ndarray, target: int) -> str:
    """The cache key of decimating ``vertices``/``faces`` to ``target`` triangles."""
    digest = hashlib.sha256()
    digest.update(f'lod{_FORMAT}:{_library_version()}:{int(target)}:{len(vertices)}:{len(faces)}'.encode())
    digest.update(np.ascontiguousarray(vertices, dtype=np.float32).tobytes())
    digest.update(np.ascontiguousarray(faces, dtype=np.int32).tobytes())
    return digest.hexdigest()


_AVAILABLE: bool | None = None


def available() -> bool:
    """Whether the decimation library imports (warns once when it does not)."""
    global _AVAILABLE
    if _AVAILABLE is None:
        try:
            import meshoptimizer  # noqa: F401
            _AVAILABLE = True
        except Exception as error:  # noqa: BLE001 - any failure: render at full detail
            warnings.warn(f'meshoptimizer does not import ({type(error).__name__}: {error}); cameras draw meshes at full '
                          "detail (slower). Install it with \"pip install 'internutopia[lod]'\" (it builds from source: needs a C++ "
                          'compiler).', RuntimeWarning, stacklevel=caller_stacklevel())
            _AVAILABLE = False
    return _AVAILABLE


def _vertex_normals(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    v = vertices.astype(np.float64)
    face_normals = np.cross(v[faces[:, 1]] - v[faces[:, 0]], v[faces[:, 2]] - v[faces[:, 0]])  # length: 2x area
    normals = np.zeros_like(v)
    for corner in range(3):
        np.add.at(normals, faces[:, corner], face_normals)
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.divide(normals, length, out=np.zeros_like(normals), where=length > 0)
    normals[length[:, 0] == 0] = (0.0, 0.0, 1.0)
    return normals.astype(np.float32)


def _simplify(vertices: np.ndarray, faces: np.ndarray, target: int) -> Decimated:
    from meshoptimizer import simplifier

    points = np.ascontiguousarray(vertices, dtype=np.float32)
    indices = np.ascontiguousarray(faces, dtype=np.uint32).reshape(-1)
    out = np.zeros_like(indices)
    # Edge collapses ordered by quadric error, down to `target` triangles whatever the error
    # (target_error 1 is the whole mesh's extent): the budget, not a tolerance, decides.
    count = simplifier.simplify(out, indices, points, target_index_count=3 * int(target), target_error=1.0)
    triangles = out[:count].astype(np.int32).reshape(-1, 3)
    # Keep the vertices the remaining faces use, renumbered in order.
    used = np.unique(triangles)
    remap = np.full(len(points), -1, dtype=np.int32)
    remap[used] = np.arange(len(used), dtype=np.int32)
    points, triangles = points[used], remap[triangles]
    return Decimated(points, triangles, _vertex_normals(points, triangles))


def _load(path: Path) -> Decimated | None:
    """The mesh stored at ``path``; ``None`` when it is missing or not a whole, consistent mesh
    (a file cut short or overwritten is then decimated again and replaced)."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            mesh = Decimated(stored['vertices'], stored['faces'], stored['normals'])
    except Exception:  # noqa: BLE001 - missing, truncated (BadZipFile, EOFError), junk: all mean "not cached"
        return None
    vertices, faces, normals = mesh.vertices, mesh.faces, mesh.normals
    if (vertices.dtype != np.float32 or vertices.ndim != 2 or vertices.shape[1] != 3 or normals.shape != vertices.shape
            or normals.dtype != np.float32 or faces.dtype != np.int32 or faces.ndim != 2 or faces.shape[1] != 3
            or not len(faces) or faces.min() < 0 or faces.max() >= len(vertices)
            or not np.isfinite(vertices).all()):
        return None
    return mesh


def _store(path: Path, mesh: Decimated) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written whole under a temporary name, then renamed: a reader in another process never
        # sees half a file.
        handle, temp = tempfile.mkstemp(dir=path.parent, suffix='.tmp')
        with os.fdopen(handle, 'wb') as stream:
            np.savez(stream, vertices=mesh.vertices, faces=mesh.faces, normals=mesh.normals)
        os.replace(temp, path)
    except OSError:
        pass  # a read-only or full disk only costs the next start a decimation


def decimate(vertices: np.ndarray, faces: np.ndarray, target: int, use_disk: bool = True) -> Decimated:
    """``vertices (n, 3)`` and ``faces (m, 3)`` decimated to about ``target`` triangles,
    from the memory or disk cache when this mesh was decimated before."""
    key = content_key(vertices, faces, target)
    with _memory_lock:
        hit = _memory.get(key)
        if hit is not None:
            _memory.move_to_end(key)
            return hit
    path = cache_dir() / key[:2] / f'{key}.npz'
    mesh = _load(path) if use_disk else None
    if mesh is None:
        mesh = _simplify(vertices, faces, target)
        if use_disk:
            _store(path, mesh)
    with _memory_lock:
        _memory[key] = mesh
        while len(_memory) > _MEMORY_SIZE:
            _memory.popitem(last=False)
    return mesh


def apply_lod(model: mujoco.MjModel, budget: int = FACE_BUDGET, use_disk: bool = True) -> LodReport:
    """Decimate, in place, every mesh of ``model`` with more than ``budget`` triangles.

    Meant for a copy made for rendering (see :func:`lod_model`). Each mesh keeps its addresses
    and frame; only its counts shrink. Meshes with texture coordinates are left as they are.
    """
    if budget < 4:
        raise ValueError(f'LOD triangle budget must be >= 4; got {budget}')
    decimated = 0
    before = int(model.mesh_facenum.sum())
    if not available():
        return LodReport(0, before, before)
    for mesh in range(model.nmesh):
        face_count = int(model.mesh_facenum[mesh])
        if face_count <= budget or model.mesh_texcoordadr[mesh] >= 0:
            continue
        vert_adr, vert_count = int(model.mesh_vertadr[mesh]), int(model.mesh_vertnum[mesh])
        face_adr, normal_adr = int(model.mesh_faceadr[mesh]), int(model.mesh_normaladr[mesh])
        result = decimate(model.mesh_vert[vert_adr:vert_adr + vert_count],
                          model.mesh_face[face_adr:face_adr + face_count], budget, use_disk)
        count = len(result.vertices)
        if not len(result.faces) or len(result.faces) >= face_count or count > vert_count \
                or count > model.mesh_normalnum[mesh]:
            continue  # nothing gained, or it would not fit the mesh's slots
        model.mesh_vert[vert_adr:vert_adr + count] = result.vertices
        model.mesh_vertnum[mesh] = count
        model.mesh_normal[normal_adr:normal_adr + count] = result.normals
        model.mesh_normalnum[mesh] = count
        model.mesh_face[face_adr:face_adr + len(result.faces)] = result.faces
        model.mesh_facenormal[face_adr:face_adr + len(result.faces)] = result.faces
        model.mesh_facenum[mesh] = len(result.faces)
        model.mesh_graphadr[mesh] = -1  # its convex hull indexes the old vertices: never drawn from the copy
        decimated += 1
    return LodReport(decimated, before, int(model.mesh_facenum.sum()))


def lod_model(model: mujoco.MjModel, budget: int = FACE_BUDGET, use_disk: bool = True) -> mujoco.MjModel:
    """A copy of ``model`` whose meshes above ``budget`` triangles are decimated (for rendering only)."""
    out = copy.copy(model)
    apply_lod(out, budget, use_disk)
    return out


__all__ = ['FACE_BUDGET', 'Decimated', 'LodReport', 'apply_lod', 'available', 'cache_dir', 'content_key', 'decimate', 'lod_model']
