"""Scene loading for the MuJoCo backend: USD and MJCF scenes as attachable specs."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

pxr = pytest.importorskip('pxr')
from pxr import Gf, Usd, UsdGeom, UsdLux, UsdPhysics  # noqa: E402

from internutopia.core.backend.mujoco.scene_info import free_cells, obstacle_boxes  # noqa: E402
from internutopia.core.backend.mujoco.usd_scene import (  # noqa: E402
    default_ground_spec,
    effective_scene_scale,
    mjcf_scene_to_spec,
    scene_to_spec,
    usd_scene_to_spec,
)

SCENES = Path(__file__).resolve().parents[1] / 'internutopia' / 'assets' / 'scenes'
EMPTY = SCENES / 'empty.usd'
TWO_ROOMS = SCENES / 'two_rooms.usda'
OFFICE = SCENES / 'office.xml'

BOX, PLANE, MESH = mujoco.mjtGeom.mjGEOM_BOX, mujoco.mjtGeom.mjGEOM_PLANE, mujoco.mjtGeom.mjGEOM_MESH


# ------------------------------------------------------------------------------------------------
# helpers
def new_stage(path: Path, meters_per_unit: float = 1.0, up: str = 'Z') -> Usd.Stage:
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageMetersPerUnit(stage, meters_per_unit)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z if up == 'Z' else UsdGeom.Tokens.y)
    stage.SetDefaultPrim(UsdGeom.Xform.Define(stage, '/World').GetPrim())
    return stage


def world_with(*parts, offsets=None, degree=False) -> mujoco.MjSpec:
    """A world like the backend's: each part attached under ``env{i}/scene/`` into a frame."""
    world = mujoco.MjSpec()
    world.compiler.degree = degree
    world.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    for i, part in enumerate(parts):
        pos = [0.0, 0.0, 0.0] if offsets is None else list(offsets[i])
        frame = world.worldbody.add_frame(name=f'env{i}', pos=pos)
        world.attach(part, prefix=f'env{i}/scene/', frame=frame)
    return world


def add_ball(world: mujoco.MjSpec, pos, radius=0.1, name='ball'):
    body = world.worldbody.add_body(name=name, pos=list(pos))
    body.add_freejoint()
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[radius, 0, 0], density=500.0)
    return body


def compiled(spec: mujoco.MjSpec) -> tuple[mujoco.MjModel, mujoco.MjData]:
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


def simulate(model, data, seconds: float) -> None:
    for _ in range(int(seconds / model.opt.timestep)):
        mujoco.mj_step(model, data)


def geom_named(model, data, name):
    g = model.geom(name)
    return g.id, data.geom_xpos[g.id].copy(), model.geom_size[g.id].copy(), data.geom_xmat[g.id].reshape(3, 3).copy()


def rot_z(deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def quat_z(deg: float) -> tuple:
    return (math.cos(math.radians(deg) / 2), 0.0, 0.0, math.sin(math.radians(deg) / 2))


# ------------------------------------------------------------------------------------------------
# empty.usd and the scaling rule
def test_empty_usd_is_ascii_centimetre_ground_with_collision():
    assert EMPTY.read_text().startswith('#usda 1.0')
    stage = Usd.Stage.Open(str(EMPTY))
    assert UsdGeom.GetStageMetersPerUnit(stage) == pytest.approx(0.01)
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
    assert any(p.HasAPI(UsdPhysics.CollisionAPI) for p in stage.Traverse())


@pytest.mark.parametrize('scale', [(0.01, 0.01, 0.01), (1.0, 1.0, 1.0)])
def test_empty_usd_ground_holds_a_dropped_sphere(scale):
    scene = scene_to_spec(str(EMPTY), scale=scale)
    world = world_with(scene, offsets=[(10.0, 0.0, 0.0)])
    add_ball(world, (10.0, 0.0, 0.5))
    model, data = compiled(world)
    ground = model.geom('env0/scene/World/GroundPlane/CollisionMesh')
    assert ground.type[0] == PLANE
    assert data.geom_xpos[ground.id][2] == pytest.approx(0.0, abs=1e-9)
    assert model.geom_size[ground.id][0] == pytest.approx(50.0)  # 5000 cm half extent in metres
    simulate(model, data, 1.5)
    assert data.body('ball').xpos[2] == pytest.approx(0.1, abs=5e-3)
    assert np.linalg.norm(data.body('ball').cvel) < 1e-2


def test_effective_scale_rule():
    np.testing.assert_allclose(effective_scene_scale((1, 1, 1), 0.01), [0.01] * 3)
    np.testing.assert_allclose(effective_scene_scale(1.0, 1.0), [1.0] * 3)
    np.testing.assert_allclose(effective_scene_scale((0.01, 0.01, 0.01), 0.01), [0.01] * 3)
    np.testing.assert_allclose(effective_scene_scale((2, 2, 3), 1.0), [2, 2, 3])
    with pytest.raises(ValueError):
        effective_scene_scale((1, 0, 1), 1.0)


@pytest.mark.parametrize('mpu, scale, expected', [
    (1.0, (1, 1, 1), 1.0),  # metres, default scale: metres
    (0.01, (1, 1, 1), 0.01),  # centimetres, default scale: converted by metersPerUnit
    (0.01, (0.01, 0.01, 0.01), 0.01),  # centimetres, InternUtopia-style scale: the scale converts
    (1.0, (2, 2, 2), 2.0),  # metres, explicit scale: scaled
])
def test_units_rule_on_a_stage(tmp_path, mpu, scale, expected):
    stage = new_stage(tmp_path / 'units.usda', meters_per_unit=mpu)
    cube = UsdGeom.Cube.Define(stage, '/World/Box')
    cube.CreateSizeAttr(100.0)
    cube.AddTranslateOp().Set(Gf.Vec3d(300, 0, 50))
    stage.Save()
    model, data = compiled(usd_scene_to_spec(tmp_path / 'units.usda', scale=scale))
    _, pos, size, _ = geom_named(model, data, 'World/Box')
    np.testing.assert_allclose(pos, np.array([300, 0, 50]) * expected, atol=1e-9)
    np.testing.assert_allclose(size, [50 * expected] * 3, atol=1e-9)


# ------------------------------------------------------------------------------------------------
# transforms
def _cube_stage(tmp_path: Path) -> Path:
    stage = new_stage(tmp_path / 'cube.usda')
    parent = UsdGeom.Xform.Define(stage, '/World/Parent')
    parent.AddTranslateOp().Set(Gf.Vec3d(1, 2, 3))
    cube = UsdGeom.Cube.Define(stage, '/World/Parent/Cube')
    cube.CreateSizeAttr(2.0)
    cube.AddTranslateOp().Set(Gf.Vec3d(0.5, 0, 0))
    cube.AddRotateZOp().Set(90.0)
    cube.AddScaleOp().Set(Gf.Vec3f(1, 2, 3))
    stage.Save()
    return tmp_path / 'cube.usda'


def test_usd_cube_transform(tmp_path):
    model, data = compiled(usd_scene_to_spec(_cube_stage(tmp_path)))
    _, pos, size, xmat = geom_named(model, data, 'World/Parent/Cube')
    assert model.geom('World/Parent/Cube').type[0] == BOX
    np.testing.assert_allclose(pos, [1.5, 2, 3], atol=1e-9)
    np.testing.assert_allclose(size, [1, 2, 3], atol=1e-9)
    np.testing.assert_allclose(xmat, rot_z(90), atol=1e-9)


def test_usd_cube_transform_with_scene_pose(tmp_path):
    spec = usd_scene_to_spec(_cube_stage(tmp_path), scale=(2, 2, 2), position=(10, 0, 0), orientation_wxyz=quat_z(90))
    # attached with an offset like an env slot
    world = world_with(spec, offsets=[(0, 5, 0)])
    model, data = compiled(world)
    _, pos, size, xmat = geom_named(model, data, 'env0/scene/World/Parent/Cube')
    expected = np.array([10, 0, 0]) + rot_z(90) @ (2 * np.array([1.5, 2, 3])) + [0, 5, 0]
    np.testing.assert_allclose(pos, expected, atol=1e-9)
    np.testing.assert_allclose(size, [2, 4, 6], atol=1e-9)
    np.testing.assert_allclose(xmat, rot_z(180), atol=1e-9)


def test_usd_primitives_sizes_and_axes(tmp_path):
    stage = new_stage(tmp_path / 'prims.usda')
    sphere = UsdGeom.Sphere.Define(stage, '/World/Sphere')
    sphere.CreateRadiusAttr(0.5)
    sphere.AddTranslateOp().Set(Gf.Vec3d(0, 0, 1))
    ell = UsdGeom.Sphere.Define(stage, '/World/Ellipsoid')
    ell.CreateRadiusAttr(1.0)
    ell.AddScaleOp().Set(Gf.Vec3f(1, 2, 3))
    cap = UsdGeom.Capsule.Define(stage, '/World/Capsule')
    cap.CreateRadiusAttr(0.2)
    cap.CreateHeightAttr(1.0)
    cap.CreateAxisAttr('X')
    cyl = UsdGeom.Cylinder.Define(stage, '/World/Cylinder')
    cyl.CreateRadiusAttr(0.3)
    cyl.CreateHeightAttr(2.0)
    cyl.CreateAxisAttr('Y')
    cyl.AddScaleOp().Set(Gf.Vec3f(2, 3, 2))
    stage.Save()
    model, data = compiled(usd_scene_to_spec(tmp_path / 'prims.usda'))
    g = model.geom('World/Sphere')
    assert g.type[0] == mujoco.mjtGeom.mjGEOM_SPHERE and g.size[0] == pytest.approx(0.5)
    g = model.geom('World/Ellipsoid')
    assert g.type[0] == mujoco.mjtGeom.mjGEOM_ELLIPSOID
    np.testing.assert_allclose(g.size, [1, 2, 3])
    _, _, size, xmat = geom_named(model, data, 'World/Capsule')
    np.testing.assert_allclose(size[:2], [0.2, 0.5])
    np.testing.assert_allclose(np.abs(xmat[:, 2]), [1, 0, 0], atol=1e-9)  # capsule axis along x
    _, _, size, xmat = geom_named(model, data, 'World/Cylinder')
    np.testing.assert_allclose(size[:2], [0.6, 3.0])
    np.testing.assert_allclose(np.abs(xmat[:, 2]), [0, 1, 0], atol=1e-9)


def test_y_up_stage_is_converted_to_z_up(tmp_path):
    stage = new_stage(tmp_path / 'yup.usda', up='Y')
    cube = UsdGeom.Cube.Define(stage, '/World/Cube')
    cube.CreateSizeAttr(2.0)
    cube.AddTranslateOp().Set(Gf.Vec3d(1, 5, 2))  # 5 up, 2 towards the viewer
    cube.AddScaleOp().Set(Gf.Vec3f(1, 2, 3))
    ground = UsdGeom.Plane.Define(stage, '/World/Ground')
    ground.CreateAxisAttr('Y')
    stage.Save()
    model, data = compiled(usd_scene_to_spec(tmp_path / 'yup.usda'))
    _, pos, size, xmat = geom_named(model, data, 'World/Cube')
    np.testing.assert_allclose(pos, [1, -2, 5], atol=1e-9)  # (x, y, z)_Y-up -> (x, -z, y)_Z-up
    np.testing.assert_allclose(np.abs(xmat) @ size, [1, 3, 2], atol=1e-9)  # world half extents
    _, pos, _, xmat = geom_named(model, data, 'World/Ground')
    assert model.geom('World/Ground').type[0] == PLANE
    np.testing.assert_allclose(xmat[:, 2], [0, 0, 1], atol=1e-9)  # plane normal is up

    # and it holds a ball
    world = world_with(usd_scene_to_spec(tmp_path / 'yup.usda'))
    add_ball(world, (-3, 3, 0.4))
    model, data = compiled(world)
    simulate(model, data, 1.0)
    assert data.body('ball').xpos[2] == pytest.approx(0.1, abs=5e-3)


# ------------------------------------------------------------------------------------------------
# collision, visibility, warnings
def test_collision_api_decides_contype(tmp_path):
    stage = new_stage(tmp_path / 'coll.usda')
    a = UsdGeom.Cube.Define(stage, '/World/A')
    UsdPhysics.CollisionAPI.Apply(a.GetPrim())
    UsdGeom.Cube.Define(stage, '/World/B')
    group = UsdGeom.Xform.Define(stage, '/World/Group')
    UsdPhysics.CollisionAPI.Apply(group.GetPrim())
    UsdGeom.Sphere.Define(stage, '/World/Group/D')
    off = UsdGeom.Cube.Define(stage, '/World/Off')
    UsdPhysics.CollisionAPI.Apply(off.GetPrim()).CreateCollisionEnabledAttr(False)
    stage.Save()
    model = usd_scene_to_spec(tmp_path / 'coll.usda').compile()
    collide = {name: (int(model.geom(name).contype[0]), int(model.geom(name).conaffinity[0]))
               for name in ('World/A', 'World/B', 'World/Group/D', 'World/Off')}
    assert collide['World/A'] != (0, 0) and collide['World/Group/D'] != (0, 0)
    assert collide['World/B'] == (0, 0) and collide['World/Off'] == (0, 0)

    # without any CollisionAPI in the stage, everything collides
    stage = new_stage(tmp_path / 'nocoll.usda')
    UsdGeom.Cube.Define(stage, '/World/A')
    UsdGeom.Sphere.Define(stage, '/World/B')
    stage.Save()
    model = usd_scene_to_spec(tmp_path / 'nocoll.usda').compile()
    assert np.all(model.geom_contype != 0) and np.all(model.geom_conaffinity != 0)


def test_invisible_and_guide_prims(tmp_path):
    stage = new_stage(tmp_path / 'vis.usda')
    UsdGeom.Cube.Define(stage, '/World/Visible')
    UsdGeom.Cube.Define(stage, '/World/Hidden').MakeInvisible()
    hidden_parent = UsdGeom.Xform.Define(stage, '/World/HiddenParent')
    hidden_parent.MakeInvisible()
    UsdGeom.Cube.Define(stage, '/World/HiddenParent/Child')
    UsdGeom.Cube.Define(stage, '/World/Guide').CreatePurposeAttr(UsdGeom.Tokens.guide)
    stage.Save()
    model = usd_scene_to_spec(tmp_path / 'vis.usda').compile()
    assert [model.geom(i).name for i in range(model.ngeom)] == ['World/Visible']

    # a hidden collider in a stage using CollisionAPI still collides, hidden (group 3)
    stage = new_stage(tmp_path / 'vis2.usda')
    plane = UsdGeom.Plane.Define(stage, '/World/CollisionPlane')
    plane.CreatePurposeAttr(UsdGeom.Tokens.guide)
    UsdPhysics.CollisionAPI.Apply(plane.GetPrim())
    UsdGeom.Cube.Define(stage, '/World/HiddenVisual').MakeInvisible()
    stage.Save()
    model = usd_scene_to_spec(tmp_path / 'vis2.usda').compile()
    assert [model.geom(i).name for i in range(model.ngeom)] == ['World/CollisionPlane']
    assert model.geom('World/CollisionPlane').contype[0] != 0
    assert model.geom('World/CollisionPlane').group[0] == 3


def test_unsupported_prims_warn_once_per_type_and_lights_are_ignored(tmp_path):
    stage = new_stage(tmp_path / 'unsupported.usda')
    UsdGeom.Cone.Define(stage, '/World/Cone1')
    UsdGeom.Cone.Define(stage, '/World/Cone2')
    UsdGeom.Points.Define(stage, '/World/Points')
    UsdLux.DistantLight.Define(stage, '/World/Sun')
    UsdLux.SphereLight.Define(stage, '/World/Bulb')
    UsdGeom.Camera.Define(stage, '/World/Camera')
    UsdGeom.Cube.Define(stage, '/World/Cube')
    stage.Save()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        spec = usd_scene_to_spec(tmp_path / 'unsupported.usda')
    messages = [str(w.message) for w in caught]
    assert sum("'Cone'" in m for m in messages) == 1
    assert sum("'Points'" in m for m in messages) == 1
    assert not any('Light' in m or 'Camera' in m for m in messages)
    model = spec.compile()
    assert model.ngeom == 1 and model.nlight == 0


def test_display_color_becomes_rgba(tmp_path):
    stage = new_stage(tmp_path / 'color.usda')
    cube = UsdGeom.Cube.Define(stage, '/World/Red')
    cube.CreateDisplayColorAttr([Gf.Vec3f(1, 0, 0)])
    cube.CreateDisplayOpacityAttr([0.5])
    UsdGeom.Cube.Define(stage, '/World/Plain')
    stage.Save()
    model = usd_scene_to_spec(tmp_path / 'color.usda').compile()
    np.testing.assert_allclose(model.geom('World/Red').rgba, [1, 0, 0, 0.5])
    np.testing.assert_allclose(model.geom('World/Plain').rgba, [0.7, 0.7, 0.7, 1.0])


# ------------------------------------------------------------------------------------------------
# meshes
def test_mesh_quad_is_triangulated(tmp_path):
    stage = new_stage(tmp_path / 'quad.usda')
    collider = UsdGeom.Cube.Define(stage, '/World/Collider')  # the stage uses CollisionAPI ...
    UsdPhysics.CollisionAPI.Apply(collider.GetPrim())
    quad = UsdGeom.Mesh.Define(stage, '/World/Quad')  # ... so this flat quad is visual only
    quad.CreatePointsAttr([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)])
    quad.CreateFaceVertexCountsAttr([4])
    quad.CreateFaceVertexIndicesAttr([0, 1, 2, 3])
    pent = UsdGeom.Mesh.Define(stage, '/World/Pentagon')
    pent.CreatePointsAttr([(0, 0, 0), (1, 0, 0), (1.3, 1, 0), (0.5, 1.6, 0.2), (-0.3, 1, 0)])
    pent.CreateFaceVertexCountsAttr([5])
    pent.CreateFaceVertexIndicesAttr([0, 1, 2, 3, 4])
    stage.Save()
    spec = usd_scene_to_spec(tmp_path / 'quad.usda')
    faces = {m.name: np.asarray(m.userface).reshape(-1, 3) for m in spec.meshes}
    assert faces['World/Quad.mesh'].shape == (2, 3)
    assert sorted(map(tuple, np.sort(faces['World/Quad.mesh'], axis=1))) == [(0, 1, 2), (0, 2, 3)]
    assert faces['World/Pentagon.mesh'].shape == (3, 3)
    model = spec.compile()
    assert model.mesh('World/Quad.mesh').facenum[0] == 2
    assert model.geom('World/Quad').type[0] == MESH
    assert model.geom('World/Quad').contype[0] == 0


def test_mesh_vertices_carry_the_transform(tmp_path):
    stage = new_stage(tmp_path / 'meshxf.usda', meters_per_unit=0.01)
    mesh = UsdGeom.Mesh.Define(stage, '/World/Box')
    pts = [(x, y, z) for z in (0, 100) for y in (0, 100) for x in (0, 100)]
    mesh.CreatePointsAttr(pts)
    faces = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    mesh.CreateFaceVertexCountsAttr([4] * 6)
    mesh.CreateFaceVertexIndicesAttr([i for f in faces for i in f])
    mesh.AddTranslateOp().Set(Gf.Vec3d(200, 0, 0))
    mesh.AddScaleOp().Set(Gf.Vec3f(1, 2, 1))
    stage.Save()
    spec = scene_to_spec(tmp_path / 'meshxf.usda', position=(0, 0, 1))
    # the asset carries its vertices: attaching twice and deduplicating still compiles
    world = world_with(spec, spec.copy(), offsets=[(0, 0, 0), (20, 0, 0)])
    world.dedup_assets()
    model, data = compiled(world)
    assert model.nmesh == 1
    for i, x0 in enumerate((0.0, 20.0)):
        g = model.geom(f'env{i}/scene/World/Box')
        # MuJoCo re-centres meshes on their inertial frame: compare world-axis extents and centre
        xmat = data.geom_xmat[g.id].reshape(3, 3)
        aabb = model.geom_aabb[g.id]
        np.testing.assert_allclose(np.abs(xmat) @ aabb[3:], [0.5, 1.0, 0.5], atol=1e-6)
        np.testing.assert_allclose(data.geom_xpos[g.id] + xmat @ aabb[:3], [x0 + 2.5, 1.0, 1.5], atol=1e-6)


def test_flat_ground_mesh_becomes_plane_and_other_flat_colliders_thin_boxes(tmp_path):
    stage = new_stage(tmp_path / 'flat.usda')
    for path, z in (('/World/GroundPlane/Mesh', 0.0), ('/World/Shelf', 1.0)):
        mesh = UsdGeom.Mesh.Define(stage, path)
        mesh.CreatePointsAttr([(-1, -1, z), (1, -1, z), (1, 1, z), (-1, 1, z)])
        mesh.CreateFaceVertexCountsAttr([4])
        mesh.CreateFaceVertexIndicesAttr([0, 1, 2, 3])
    stage.Save()
    model, data = compiled(usd_scene_to_spec(tmp_path / 'flat.usda'))
    assert model.geom('World/GroundPlane/Mesh').type[0] == PLANE
    shelf = model.geom('World/Shelf')
    assert shelf.type[0] == BOX
    np.testing.assert_allclose(data.geom_xpos[shelf.id], [0, 0, 1], atol=1e-9)


def test_colliding_mesh_is_split_into_parts(tmp_path):
    stage = new_stage(tmp_path / 'parts.usda')
    mesh = UsdGeom.Mesh.Define(stage, '/World/TwoBoxes')
    pts, idx = [], []
    faces = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    for offset in (0, 3):  # two unit boxes 3 m apart: one hull would fill the gap
        base = len(pts)
        pts += [(x + offset, y, z) for z in (0, 1) for y in (0, 1) for x in (0, 1)]
        idx += [base + i for f in faces for i in f]
    mesh.CreatePointsAttr(pts)
    mesh.CreateFaceVertexCountsAttr([4] * 12)
    mesh.CreateFaceVertexIndicesAttr(idx)
    stage.Save()
    model = usd_scene_to_spec(tmp_path / 'parts.usda').compile()
    assert model.nmesh == 2 and model.ngeom == 2


def test_rigid_body_prim_becomes_free_body(tmp_path):
    stage = new_stage(tmp_path / 'rigid.usda')
    ground = UsdGeom.Plane.Define(stage, '/World/Ground')
    UsdPhysics.CollisionAPI.Apply(ground.GetPrim())
    crate = UsdGeom.Cube.Define(stage, '/World/Crate')
    crate.CreateSizeAttr(0.4)
    crate.AddTranslateOp().Set(Gf.Vec3d(1, 0, 1))
    UsdPhysics.CollisionAPI.Apply(crate.GetPrim())
    UsdPhysics.RigidBodyAPI.Apply(crate.GetPrim())
    UsdPhysics.MassAPI.Apply(crate.GetPrim()).CreateMassAttr(3.0)
    kin = UsdGeom.Cube.Define(stage, '/World/Kinematic')
    kin.AddTranslateOp().Set(Gf.Vec3d(-3, 0, 2))
    UsdPhysics.RigidBodyAPI.Apply(kin.GetPrim()).CreateKinematicEnabledAttr(True)
    stage.Save()
    world = world_with(usd_scene_to_spec(tmp_path / 'rigid.usda'))
    model, data = compiled(world)
    body = model.body('env0/scene/World/Crate')
    assert body.mass[0] == pytest.approx(3.0)
    assert model.body('env0/scene/World/Crate').jntnum[0] == 1
    assert model.geom('env0/scene/World/Kinematic').bodyid[0] == 0  # kinematic: static
    simulate(model, data, 1.5)
    np.testing.assert_allclose(data.xpos[body.id], [1, 0, 0.2], atol=5e-3)


# ------------------------------------------------------------------------------------------------
# bundled scenes
def _wall_names(model):
    return [model.geom(i).name for i in range(model.ngeom) if 'wall' in model.geom(i).name.lower()]


@pytest.mark.parametrize('path', [TWO_ROOMS, OFFICE])
def test_bundled_scenes_compile_with_walls(path):
    spec = scene_to_spec(path)
    model, data = compiled(spec)
    walls = _wall_names(model)
    assert len(walls) >= 6
    for name in walls:
        g = model.geom(name)
        assert g.contype[0] != 0 and g.conaffinity[0] != 0
        assert model.geom_size[g.id][2] >= 1.0  # tall
    assert model.nlight == 0
    planes = np.flatnonzero(model.geom_type == PLANE)
    assert len(planes) == 1 and data.geom_xpos[planes[0]][2] == pytest.approx(0.0)
    # roughly 8 m x 8 m
    boxes = obstacle_boxes(model)
    np.testing.assert_allclose(boxes[:, :2].min(axis=0), [-4, -4], atol=1e-6)
    np.testing.assert_allclose(boxes[:, 2:].max(axis=0), [4, 4], atol=1e-6)


def test_two_rooms_has_visual_rug_and_rigid_crate():
    model = scene_to_spec(TWO_ROOMS).compile()
    assert model.geom('World/Decor/Rug').contype[0] == 0
    crate = model.body('World/Props/Crate')
    assert crate.mass[0] == pytest.approx(2.0)


@pytest.mark.parametrize('path, start, velocity, wall_face', [
    (TWO_ROOMS, (-1.5, 0.0), (-4.0, 0.0), -3.85),  # west room, rolling west
    (OFFICE, (-1.0, 1.8), (0.0, 4.0), 3.85),  # open office, rolling north
])
def test_ball_rolled_into_a_wall_is_stopped(path, start, velocity, wall_face):
    offset = np.array([30.0, -20.0, 0.0])
    world = world_with(scene_to_spec(path), offsets=[offset])
    add_ball(world, (start[0] + offset[0], start[1] + offset[1], 0.1))
    model, data = compiled(world)
    dof = model.jnt_dofadr[model.body('ball').jntadr[0]]
    data.qvel[dof:dof + 2] = velocity
    axis = 0 if velocity[0] else 1
    sign = np.sign(velocity[axis])
    reached = -np.inf
    for _ in range(int(3.0 / model.opt.timestep)):
        mujoco.mj_step(model, data)
        reached = max(reached, sign * (data.body('ball').xpos[axis] - offset[axis]))
    # it got to the wall but never past the wall's inner face (minus its radius, a little penetration allowed)
    assert sign * wall_face - 0.1 - 0.05 <= reached <= sign * wall_face - 0.1 + 0.02
    assert sign * (data.body('ball').xpos[axis] - offset[axis]) < sign * wall_face - 0.1 + 0.02
    assert abs(data.body('ball').xpos[2] - 0.1) < 0.02  # still on the floor


# ------------------------------------------------------------------------------------------------
# MJCF specifics
def test_mjcf_lights_and_keys_removed_and_paths_absolute(tmp_path):
    (tmp_path / 'meshes').mkdir()
    (tmp_path / 'meshes' / 'tet.obj').write_text('v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n')
    (tmp_path / 'scene.xml').write_text("""
<mujoco>
  <compiler meshdir="meshes"/>
  <asset><mesh name="tet" file="tet.obj"/></asset>
  <worldbody>
    <light name="lamp" pos="0 0 3"/>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <geom name="tet" type="mesh" mesh="tet" pos="1 0 0"/>
    <body name="box" pos="0 0 1"><freejoint/><geom type="box" size="0.1 0.1 0.1"/><light name="torch"/></body>
  </worldbody>
  <keyframe><key name="start" qpos="0 0 1 1 0 0 0"/></keyframe>
</mujoco>""")
    spec = mjcf_scene_to_spec(tmp_path / 'scene.xml')
    assert len(spec.lights) == 0 and len(spec.keys) == 0
    assert Path(spec.meshes[0].file).is_absolute()
    world = world_with(spec, spec.copy(), offsets=[(0, 0, 0), (10, 0, 0)])
    world.dedup_assets()
    model = world.compile()
    assert model.nlight == 0 and model.nmesh == 1


def test_mjcf_transform_and_scale():
    plain_model, plain_data = compiled(mjcf_scene_to_spec(OFFICE))
    spec = mjcf_scene_to_spec(OFFICE, scale=(2, 2, 2), position=(1, 2, 0), orientation_wxyz=quat_z(90))
    model, data = compiled(world_with(spec, degree=False))
    for name in ('wall_east', 'desk_4', 'plant_leaves'):
        _, p0, s0, m0 = geom_named(plain_model, plain_data, name)
        _, p1, s1, m1 = geom_named(model, data, f'env0/scene/{name}')
        np.testing.assert_allclose(p1, [1, 2, 0] + rot_z(90) @ (2 * p0), atol=1e-9)
        np.testing.assert_allclose(s1, 2 * s0, atol=1e-9)
        np.testing.assert_allclose(m1, rot_z(90) @ m0, atol=1e-9)


def test_mjcf_anisotropic_scale_of_rotated_shapes_fails_clearly():
    with pytest.raises(ValueError, match='office.xml'):
        mjcf_scene_to_spec(OFFICE, scale=(1, 2, 1))  # desk_4 is turned 30 degrees


# ------------------------------------------------------------------------------------------------
# errors and the default ground
@pytest.mark.parametrize('name', ['scene.obj', 'scene.txt', 'scene'])
def test_unsupported_extension_raises_value_error(tmp_path, name):
    path = tmp_path / name
    path.write_text('v 0 0 0\n')
    with pytest.raises(ValueError) as info:
        scene_to_spec(path)
    message = str(info.value)
    assert str(path) in message
    for ext in ('.usd', '.usda', '.usdc', '.xml'):
        assert ext in message


@pytest.mark.parametrize('name', ['missing.usd', 'missing.usda', 'missing.xml'])
def test_missing_file_raises_file_not_found(tmp_path, name):
    with pytest.raises(FileNotFoundError, match=name):
        scene_to_spec(tmp_path / name)


def test_bad_transform_raises_value_error():
    with pytest.raises(ValueError):
        scene_to_spec(EMPTY, scale=(1, -1, 1))
    with pytest.raises(ValueError):
        scene_to_spec(EMPTY, orientation_wxyz=(0, 0, 0, 0))


@pytest.mark.parametrize('path', [None, ''])
def test_default_ground(path):
    spec = scene_to_spec(path, position=(0, 0, 0.5))
    model, data = compiled(spec)
    g = model.geom('ground')
    assert g.type[0] == PLANE and data.geom_xpos[g.id][2] == pytest.approx(0.5)
    assert model.ntex == 1 and model.nmat == 1
    assert model.tex_width[0] > 0
    model2 = default_ground_spec().compile()
    assert model2.ngeom == 1


# ------------------------------------------------------------------------------------------------
# attaching many copies
@pytest.mark.parametrize('path', [EMPTY, TWO_ROOMS, OFFICE, None])
def test_attach_two_copies_then_dedup(path):
    scene = scene_to_spec(path, scale=(0.01,) * 3 if path == EMPTY else (1, 1, 1))
    world = mujoco.MjSpec()
    frames = [world.worldbody.add_frame(pos=[10.0 * i, 0, 0]) for i in (1, 2)]
    for i, frame in zip((1, 2), frames, strict=True):
        world.attach(scene.copy(), prefix=f'env{i}/scene/', frame=frame)
    model = world.compile()
    single = scene.copy().compile()
    assert model.ngeom == 2 * single.ngeom
    world.dedup_assets()
    model = world.compile()
    assert model.ntex == single.ntex and model.nmesh == single.nmesh
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    for i in range(single.ngeom):
        name = single.geom(i).name
        a, b = model.geom(f'env1/scene/{name}').id, model.geom(f'env2/scene/{name}').id
        np.testing.assert_allclose(data.geom_xpos[b] - data.geom_xpos[a], [10, 0, 0], atol=1e-9)


# ------------------------------------------------------------------------------------------------
# free cells
@pytest.mark.parametrize('path', [TWO_ROOMS, OFFICE])
def test_free_cells_avoid_walls(path):
    spec = scene_to_spec(path)
    radius = 0.3
    cells = free_cells(spec, (-4, -4, 4, 4), resolution=0.25, robot_radius=radius)
    assert cells.ndim == 2 and cells.shape[1] == 2 and len(cells) > 100
    model, data = compiled(spec)
    for name in _wall_names(model):
        g = model.geom(name).id
        xmat = data.geom_xmat[g].reshape(3, 3)
        half = (np.abs(xmat) @ model.geom_size[g])[:2]
        centre = data.geom_xpos[g][:2]
        d = np.maximum(np.abs(cells - centre) - half, 0.0)
        assert np.all(np.hypot(d[:, 0], d[:, 1]) >= radius - 1e-9), name
    # the scene is in bounds, and no free cell is outside them
    assert np.all(np.abs(cells) <= 4 - 0.15 - radius + 1e-9)


def test_free_cells_pass_the_two_rooms_door():
    cells = free_cells(scene_to_spec(TWO_ROOMS), (-4, -4, 4, 4), resolution=0.25, robot_radius=0.3)
    door = cells[np.abs(cells[:, 0]) < 1e-9]
    np.testing.assert_allclose(door, [[0.0, 0.0]])  # only the middle of the 1 m gap fits a 0.6 m robot
    # west and east rooms both have space
    assert np.any(cells[:, 0] < -1) and np.any(cells[:, 0] > 1)


def test_free_cells_accepts_models_and_ignores_visual_and_dynamic_geoms():
    model = scene_to_spec(TWO_ROOMS).compile()
    rug_centre = np.array([2.0, -0.5])
    cells = free_cells(model, (1.5, -1.0, 2.5, 0.0), resolution=0.25, robot_radius=0.3)
    assert np.any(np.all(np.isclose(cells, rug_centre), axis=1))  # the rug does not block
    cells = free_cells(model, (2.8, 0.8, 2.8, 0.8), robot_radius=0.1)
    assert len(cells) == 1  # the movable crate does not block by default
    cells = free_cells(model, (2.8, 0.8, 2.8, 0.8), robot_radius=0.1, include_dynamic=True)
    assert len(cells) == 0


def test_unparsable_files_raise_value_error(tmp_path):
    (tmp_path / 'bad.usda').write_text('#usda 1.0\n(\n garbage {{{\n')
    (tmp_path / 'bad.xml').write_text('<mujoco><worldbody><geom type="nope"/></worldbody></mujoco>')
    for name in ('bad.usda', 'bad.xml'):
        with pytest.raises(ValueError, match=name):
            scene_to_spec(tmp_path / name)


def test_free_cells_bounds_forms_and_arguments():
    model = scene_to_spec(OFFICE).compile()
    flat = free_cells(model, (-4, -4, 4, 4), resolution=0.5)
    nested = free_cells(model, ((-4, -4), (4, 4)), resolution=0.5)
    auto = free_cells(model, None, resolution=0.5)
    np.testing.assert_array_equal(flat, nested)
    np.testing.assert_array_equal(flat, auto)  # the walls span exactly [-4, 4]^2
    with pytest.raises(ValueError):
        free_cells(model, (-4, -4, 4), resolution=0.5)
    with pytest.raises(ValueError):
        free_cells(model, (-4, -4, 4, 4), resolution=0.0)
