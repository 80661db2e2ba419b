"""The USD half of scene loading: one stage's prims turned into bodies, geoms and meshes of an ``MjSpec``.

:func:`internutopia.core.backend.mujoco.usd_scene.usd_scene_to_spec` opens the stage and hands it to
:class:`UsdSceneBuilder`; the units, frames, collision and mass rules it follows are described in
that module's docstring.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from internutopia.core.backend.mujoco.mesh_geometry import (
    connected_components,
    flatness,
    front_side,
    mat_to_quat,
    mesh_volume,
    polar_decomposition,
    primitive_volume,
    quat_to_mat,
    triangulate,
)
from internutopia.core.backend.mujoco.render.semantics import add_semantics_text, usd_prim_label
from internutopia.core.backend.mujoco.scene_scale import effective_scene_scale
from internutopia.core.backend.mujoco.usd_ground import emit_plane, ground_like, settle_grounds
from internutopia.core.backend.mujoco.usd_mass import mass_props, weigh_body
from internutopia.core.util.caller import caller_stacklevel

__all__ = ['GROUP_COLLIDER', 'GROUP_HIDDEN_COLLIDER', 'GROUP_VISUAL', 'UsdSceneBuilder']

#: Geom groups used for the geoms built here.
GROUP_COLLIDER = 0
GROUP_VISUAL = 2
GROUP_HIDDEN_COLLIDER = 3

_DEFAULT_RGBA = (0.7, 0.7, 0.7, 1.0)
_MAX_MESH_PARTS = 256
_THIN_BOX_HALF = 0.005  # metres: half thickness of the box replacing a colliding flat mesh
_GROUND_MAX_TILT_COS = math.cos(math.radians(25.0))
_Y_UP_TO_Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


class UsdSceneBuilder:
    """Builds one standalone ``MjSpec`` from an opened USD stage (see :mod:`usd_scene` for the rules)."""

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
        top[:3, :3] = quat_to_mat(quat) @ np.diag(self.eff) @ up_rot
        top[:3, 3] = pos
        self.top = top  # stage world (stage units, stage up axis) -> scene frame (metres, z up)
        prims = list(Usd.PrimRange(stage.GetPseudoRoot(), Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)))
        self.has_collision_api = any(p.HasAPI(UsdPhysics.CollisionAPI) for p in prims)
        #: Whether some geometry has purpose ``render``: its ``proxy`` twins (lightweight stand-ins
        #: for interactive viewports) are then not drawn, as a renderer of final images leaves them out.
        self.has_render_purpose = any(p.IsA(UsdGeom.Gprim) and UsdGeom.Imageable(p).ComputePurpose() == UsdGeom.Tokens.render
                                      for p in prims)
        self.body_geoms: dict[str, list] = {}  # body name -> [(geom, volume, prim path)]
        self.body_mass: dict[str, tuple[str, float]] = {}  # body name -> ('mass' | 'density', value)
        self.prim_mass: dict[str, tuple[str, float]] = {}  # MassAPI of the colliders in bodies, likewise
        #: Semantic label and labelled prim of each geom under a prim with USD semantics (kept in the spec).
        self.geom_labels: dict[str, tuple[str, str]] = {}
        self._prim_labels: dict[str, tuple[str, str] | None] = {}
        #: Flat ground-named meshes, made planes or not once the whole stage is in (``usd_ground``).
        self.ground_candidates: list[tuple] = []

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
        settle_grounds(self)
        for type_name, example in self.unsupported.items():
            self._warn(f'skipping unsupported USD prim type {type_name!r} (e.g. {example})')
        for body in list(self.spec.worldbody.bodies):
            geoms = self.body_geoms.get(body.name, [])
            if not geoms:
                self._warn(f'rigid body {body.name!r} has no loadable geometry; dropped')
                self.spec.delete(body)
                continue
            weigh_body(geoms, self.body_mass.get(body.name, (None, 0.0)), self.prim_mass)
        add_semantics_text(self.spec, self.geom_labels)
        for message in self.messages:  # reported at the caller of usd_scene_to_spec
            warnings.warn(f'{self.path}: {message}', stacklevel=caller_stacklevel())
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
        purpose = imageable.ComputePurpose()
        hidden = (imageable.ComputeVisibility(self.time) == UsdGeom.Tokens.invisible or purpose == UsdGeom.Tokens.guide
                  or (purpose == UsdGeom.Tokens.proxy and self.has_render_purpose))
        if hidden and not (collides and self.has_collision_api):
            return body, collision
        world = self._world(prim)
        if world is None:
            return body, collision
        style = self._style(prim, collides, hidden)
        if body is None:
            parent, rel = self.spec.worldbody, world
        else:
            parent, body_inv = body
            rel = body_inv @ world
        getattr(self, f'_emit_{kind}')(prim, parent, rel, style, body is not None)
        return body, collision

    def _world(self, prim) -> np.ndarray | None:
        """The prim's transform into the scene frame, or ``None`` (warned) when it is not finite."""
        world = self.top @ np.array(self.xform_cache.GetLocalToWorldTransform(prim), dtype=float).T
        if np.all(np.isfinite(world)):
            return world
        self._warn(f'prim {prim.GetPath()} has a non-finite transform; skipped')
        return None

    def _is_dynamic(self, prim) -> bool:
        from pxr import UsdPhysics

        api = UsdPhysics.RigidBodyAPI(prim)
        enabled = api.GetRigidBodyEnabledAttr().Get(self.time)
        kinematic = api.GetKinematicEnabledAttr().Get(self.time)
        return (enabled is None or bool(enabled)) and not bool(kinematic)

    def _rigid_body(self, prim):
        world = self._world(prim)
        if world is None:
            return None
        rot, _ = self._rotation_scale(world[:3, :3])
        pos = world[:3, 3]
        body = self.spec.worldbody.add_body(name=self._name(str(prim.GetPath()), 'body'), pos=pos.tolist(),
                                            quat=mat_to_quat(rot).tolist())
        body.add_freejoint()
        mass = self._mass_props(prim)
        if mass is not None:
            self.body_mass[body.name] = mass
        inv = np.eye(4)
        inv[:3, :3] = rot.T
        inv[:3, 3] = -rot.T @ pos
        return body, inv

    def _mass_props(self, prim) -> tuple[str, float] | None:
        """``('mass', kg)`` or ``('density', kg/m^3)`` from the prim's ``UsdPhysics.MassAPI``, if any."""
        return mass_props(prim, self.time, self.kg_per_unit, self.eff)

    # -- appearance / physics properties ------------------------------------------------------
    def _style(self, prim, collides: bool, hidden: bool) -> dict[str, Any]:
        style: dict[str, Any] = {'rgba': self._color(prim)}
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
        if not all(np.all(np.isfinite(kwargs.get(key, 0.0))) for key in ('size', 'pos', 'quat')):
            self._warn(f'prim {prim.GetPath()} has a non-finite size or placement; skipped')
            return None
        geom = parent.add_geom(name=self._name(str(prim.GetPath()) + suffix), **style, **kwargs)
        labelled = self._semantics(prim)
        if labelled is not None:
            self.geom_labels[geom.name] = labelled
        if parent.name != 'world':  # a free body: remember its geoms for its mass
            size = np.asarray(kwargs.get('size', [0, 0, 0]), dtype=float)
            if volume is None:
                volume = primitive_volume(kwargs['type'], size)
            path = str(prim.GetPath())
            self.body_geoms.setdefault(parent.name, []).append((geom, volume, path))
            mass = self._mass_props(prim) if path not in self.prim_mass else None
            if mass is not None:
                self.prim_mass[path] = mass
        return geom

    def _semantics(self, prim) -> tuple[str, str] | None:
        """``(label, prim path)`` of the nearest prim at or above ``prim`` with USD semantics."""
        path = str(prim.GetPath())
        if path not in self._prim_labels:
            label = usd_prim_label(prim)
            parent = prim.GetParent()
            if label is not None:
                self._prim_labels[path] = (label, path.lstrip('/'))
            elif parent and not parent.IsPseudoRoot():
                self._prim_labels[path] = self._semantics(parent)
            else:
                self._prim_labels[path] = None
        return self._prim_labels[path]

    def _place(self, rel: np.ndarray, local_rot: np.ndarray | None = None) -> tuple[list, list, np.ndarray]:
        rot, s = self._rotation_scale(rel[:3, :3])
        if local_rot is not None:
            rot = rot @ local_rot
        return rel[:3, 3].tolist(), mat_to_quat(rot).tolist(), s

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

    def _emit_plane(self, prim, parent, rel, style, dynamic) -> int:
        return emit_plane(self, prim, parent, rel, style, dynamic)

    def _emit_mesh(self, prim, parent, rel, style, dynamic, ground: bool = True) -> int:
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
        if not np.all(np.isfinite(points)):
            self._warn(f'mesh {prim.GetPath()} has non-finite points; skipped')
            return 0
        if int(np.sum(counts)) != indices.size:
            self._warn(f'mesh {prim.GetPath()} has faceVertexCounts not matching its faceVertexIndices; skipped')
            return 0
        tris = triangulate(counts, indices, api.GetHoleIndicesAttr().Get(self.time))
        if len(tris) == 0:
            return 0
        linear, offset = rel[:3, :3], rel[:3, 3]
        left = api.GetOrientationAttr().Get(self.time) == UsdGeom.Tokens.leftHanded
        if left != (np.linalg.det(linear) < 0):
            tris = tris[:, [0, 2, 1]]
        # linear = rot @ stretch: the rotation goes to the geom's quat (instances of a mesh which differ
        # only by a rigid motion share their vertices, so dedup_assets can merge them), the stretch
        # (scale, shear, mirroring) is baked into the vertices
        rot, stretch = polar_decomposition(linear)
        verts = points @ stretch.T
        quat = mat_to_quat(rot).tolist()
        collides = style.get('contype', 1) != 0

        # ground: a flat mesh named like a ground plane (a plane if nothing lies below: usd_ground)
        if ground and not dynamic and ground_like(prim):
            used = verts[np.unique(tris)] @ rot.T
            flat, centre, axes, half = flatness(used)
            if flat and abs(axes[2, 2]) >= _GROUND_MAX_TILT_COS:
                self.ground_candidates.append((prim, parent, rel, style, centre + offset, axes, half))
                return 1

        parts = [tris]
        if collides:
            labels = connected_components(tris, len(verts))
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
            flat, centre, axes, half = flatness(part_verts)
            if flat and collides:  # MuJoCo cannot hull a flat mesh: a thin box instead
                half_t = _THIN_BOX_HALF
                # (behind the face: its front, the side its winding faces, is the surface things
                # touch, so a cup rests on a tabletop quad and not 5 mm above it)
                centre = centre - half_t * front_side(part_verts, part_tris, axes[:, 2]) * axes[:, 2]
                self._add_geom(parent, prim, style, suffix, type=mujoco.mjtGeom.mjGEOM_BOX,
                               size=[max(half[0], half_t), max(half[1], half_t), half_t],
                               pos=(rot @ centre + offset).tolist(), quat=mat_to_quat(rot @ axes).tolist())
                count += 1
                continue
            mesh_name = self._name(str(prim.GetPath()) + suffix + '.mesh', 'mesh')
            mesh = self.spec.add_mesh(name=mesh_name, uservert=part_verts.astype(np.float32).reshape(-1).tolist(),
                                      userface=part_tris.astype(np.int32).reshape(-1).tolist())
            if flat or not dynamic:
                mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
            self._add_geom(parent, prim, style, suffix, volume=mesh_volume(part_verts, part_tris),
                           type=mujoco.mjtGeom.mjGEOM_MESH, meshname=mesh_name, pos=offset.tolist(), quat=quat)
            count += 1
        return count
