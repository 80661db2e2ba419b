"""Scene loading for the MuJoCo backend, USD scenes as attachable specs: empty.usd and the scaling
rule, transforms, collision and visibility, meshes. Bundled scenes, MJCF, errors, copies and free
cells are in ``test_scenes_bundled.py``; shared helpers in ``scene_helpers.py``."""

from __future__ import annotations

import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

pxr = pytest.importorskip('pxr')
from pxr import Gf, Usd, UsdGeom, UsdLux, UsdPhysics  # noqa: E402

from internutopia.core.backend.mujoco.usd_scene import (  # noqa: E402
    effective_scene_scale,
    scene_to_spec,
    usd_scene_to_spec,
)
from tests.scene_helpers import (  # noqa: E402
    BOX,
    EMPTY,
    MESH,
    PLANE,
    add_ball,
    compiled,
    geom_named,
    new_stage,
    quat_z,
    rot_z,
    simulate,
    world_with,
)


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
    # the box lies behind the quad's front (its winding faces up): its top is the shelf's surface
    np.testing.assert_allclose(data.geom_xpos[shelf.id], [0, 0, 1 - shelf.size[2]], atol=1e-9)
    assert data.geom_xpos[shelf.id][2] + shelf.size[2] == pytest.approx(1.0, abs=1e-9)


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
