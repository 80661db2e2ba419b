"""USD scene loading, as a user sees it: grounds, broken prims, collider masses."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

pytest.importorskip('pxr')
from pxr import UsdGeom, UsdPhysics  # noqa: E402

from internutopia.core.backend.mujoco.usd_scene import usd_scene_to_spec  # noqa: E402
from tests.scene_helpers import BOX, PLANE, add_ball, compiled, new_stage, simulate, world_with  # noqa: E402


def _quad(stage, path, z, half):
    mesh = UsdGeom.Mesh.Define(stage, path)
    mesh.CreatePointsAttr([(-half, -half, z), (half, -half, z), (half, half, z), (-half, half, z)])
    mesh.CreateFaceVertexCountsAttr([4])
    mesh.CreateFaceVertexIndicesAttr([0, 1, 2, 3])
    return mesh


def test_ground_named_group_keeps_tabletop_and_ceiling_finite(tmp_path):
    # A storey grouped as ``GroundFloor``: only its floor may become an infinite plane. A tabletop or
    # a ceiling made a plane (a half-space) would throw everything below it out of the scene.
    stage = new_stage(tmp_path / 'house.usda')
    _quad(stage, '/World/GroundFloor/Floor', 0.0, 5.0)
    _quad(stage, '/World/GroundFloor/Kitchen/Table/Top', 0.75, 0.5)
    _quad(stage, '/World/GroundFloor/Ceiling', 2.5, 5.0)
    stage.Save()
    world = world_with(usd_scene_to_spec(tmp_path / 'house.usda'))
    add_ball(world, (3.0, 3.0, 1.0), radius=0.1, name='far')  # beside the table, under the ceiling
    add_ball(world, (0.0, 0.0, 1.0), radius=0.1, name='on_table')
    model, data = compiled(world)
    assert model.geom('env0/scene/World/GroundFloor/Floor').type[0] == PLANE
    for name, z in (('Kitchen/Table/Top', 0.75), ('Ceiling', 2.5)):
        geom = model.geom(f'env0/scene/World/GroundFloor/{name}')
        assert geom.type[0] == BOX  # (its top face on the quad, which faces up)
        assert data.geom_xpos[geom.id][2] + geom.size[2] == pytest.approx(z, abs=1e-9)
    simulate(model, data, 2.0)
    assert data.body('far').xpos[2] == pytest.approx(0.1, abs=2e-3)  # on the floor
    assert data.body('on_table').xpos[2] == pytest.approx(0.75 + 0.1, abs=2e-3)  # on the top's surface


def test_ground_mesh_with_geometry_resting_on_it_is_still_a_plane(tmp_path):
    stage = new_stage(tmp_path / 'ground.usda')
    _quad(stage, '/World/GroundPlane/Mesh', 0.0, 5.0)
    box = UsdGeom.Cube.Define(stage, '/World/Crate')
    box.CreateSizeAttr(1.0)
    box.AddTranslateOp().Set((1.0, 0.0, 0.49))  # 1 cm into the ground: within the tolerance
    stage.Save()
    model, _ = compiled(usd_scene_to_spec(tmp_path / 'ground.usda'))
    assert model.geom('World/GroundPlane/Mesh').type[0] == PLANE


def test_non_finite_and_inconsistent_prims_are_skipped_with_a_warning_naming_them(tmp_path):
    path = tmp_path / 'broken.usda'
    stage = new_stage(path)
    tet = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
    faces = [0, 1, 2, 0, 1, 3, 1, 2, 3, 2, 0, 3]
    nan_mesh = UsdGeom.Mesh.Define(stage, '/World/NanMesh')
    nan_mesh.CreatePointsAttr([*tet[:3], (0, 0, math.nan)])
    nan_mesh.CreateFaceVertexCountsAttr([3] * 4)
    nan_mesh.CreateFaceVertexIndicesAttr(faces)
    bad_counts = UsdGeom.Mesh.Define(stage, '/World/BadCounts')
    bad_counts.CreatePointsAttr(tet)
    bad_counts.CreateFaceVertexCountsAttr([3] * 5)  # 15 indices announced, 12 given
    bad_counts.CreateFaceVertexIndicesAttr(faces)
    UsdGeom.Cube.Define(stage, '/World/NanPlace').AddTranslateOp().Set((0.0, 0.0, math.nan))
    UsdGeom.Sphere.Define(stage, '/World/InfBall').CreateRadiusAttr(math.inf)
    body = UsdGeom.Xform.Define(stage, '/World/NanBody')
    body.AddTranslateOp().Set((math.nan, 0.0, 0.0))
    UsdPhysics.RigidBodyAPI.Apply(body.GetPrim())
    UsdGeom.Cube.Define(stage, '/World/NanBody/Geom')
    UsdGeom.Cube.Define(stage, '/World/Good').AddTranslateOp().Set((3.0, 0.0, 1.0))
    stage.Save()
    with pytest.warns(UserWarning) as record:
        spec = usd_scene_to_spec(path)
    messages = ' | '.join(str(w.message) for w in record)
    for prim in ('/World/NanMesh', '/World/BadCounts', '/World/NanPlace', '/World/InfBall', '/World/NanBody'):
        assert prim in messages
    assert str(path) in messages
    model, data = compiled(spec)
    assert [model.geom(i).name for i in range(model.ngeom)] == ['World/Good']
    np.testing.assert_allclose(data.geom_xpos[0], [3.0, 0.0, 1.0], atol=1e-9)
    assert np.all(np.isfinite(model.geom_aabb))


def _rigid(stage, path, pos):
    body = UsdGeom.Xform.Define(stage, path)
    body.AddTranslateOp().Set(pos)
    UsdPhysics.RigidBodyAPI.Apply(body.GetPrim())
    return body.GetPrim()


def test_mass_api_on_colliders_sets_the_body_mass(tmp_path):
    stage = new_stage(tmp_path / 'masses.usda', meters_per_unit=0.01)  # centimetres, kilograms
    # MassAPI on the collider only (as many asset libraries author it): 2 kg
    _rigid(stage, '/World/A', (0, 0, 50))
    cube = UsdGeom.Cube.Define(stage, '/World/A/Geom')
    cube.CreateSizeAttr(10.0)
    UsdPhysics.MassAPI.Apply(cube.GetPrim()).CreateMassAttr(2.0)
    # a collider mesh of two disjoint boxes (split into two geoms) weighing 3 kg, plus a plain
    # 10 cm cube at the body's density 0.002 kg/cm^3 (2000 kg/m^3): 2 kg
    prim = _rigid(stage, '/World/B', (100, 0, 50))
    UsdPhysics.MassAPI.Apply(prim).CreateDensityAttr(0.002)
    mesh = UsdGeom.Mesh.Define(stage, '/World/B/Parts')
    pts, idx = [], []
    box_faces = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    for x0 in (0, 30):
        base = len(pts)
        pts += [(x + x0, y, z) for z in (0, 10) for y in (0, 10) for x in (0, 10)]
        idx += [base + i for f in box_faces for i in f]
    mesh.CreatePointsAttr(pts)
    mesh.CreateFaceVertexCountsAttr([4] * 12)
    mesh.CreateFaceVertexIndicesAttr(idx)
    UsdPhysics.MassAPI.Apply(mesh.GetPrim()).CreateMassAttr(3.0)
    UsdGeom.Cube.Define(stage, '/World/B/Plain').CreateSizeAttr(10.0)
    # the body's own mass wins over its colliders'
    prim = _rigid(stage, '/World/C', (200, 0, 50))
    UsdPhysics.MassAPI.Apply(prim).CreateMassAttr(5.0)
    cube = UsdGeom.Cube.Define(stage, '/World/C/Geom')
    cube.CreateSizeAttr(10.0)
    UsdPhysics.MassAPI.Apply(cube.GetPrim()).CreateMassAttr(1.0)
    stage.Save()
    model = usd_scene_to_spec(tmp_path / 'masses.usda').compile()
    assert model.body('World/A').mass[0] == pytest.approx(2.0)
    assert model.body('World/B').mass[0] == pytest.approx(3.0 + 2.0)
    assert model.body('World/C').mass[0] == pytest.approx(5.0)
    parts = [i for i in range(model.ngeom) if model.geom(i).name.startswith('World/B/Parts')]
    assert len(parts) == 2
    assert model.geom_type[parts[0]] == mujoco.mjtGeom.mjGEOM_MESH


def test_a_flat_colliders_box_lies_behind_the_side_its_faces_show(tmp_path):
    # A ceiling quad wound to face down gets its box above it (its surface is the box's bottom);
    # a double-sided quad (both windings) keeps its box centred on it.
    stage = new_stage(tmp_path / 'sides.usda')
    ceiling = _quad(stage, '/World/Ceiling', 2.0, 1.0)
    ceiling.CreateFaceVertexIndicesAttr([0, 3, 2, 1])  # (faces -z)
    both = _quad(stage, '/World/Sign', 1.0, 0.5)
    both.GetPointsAttr().Set([(4 + x, y, z) for x, y, z in both.GetPointsAttr().Get()])
    both.CreateFaceVertexCountsAttr([4, 4])
    both.CreateFaceVertexIndicesAttr([0, 1, 2, 3, 0, 3, 2, 1])
    stage.Save()
    world = world_with(usd_scene_to_spec(tmp_path / 'sides.usda'))
    model, data = compiled(world)
    ceiling_geom = model.geom('env0/scene/World/Ceiling')
    assert data.geom_xpos[ceiling_geom.id][2] - ceiling_geom.size[2] == pytest.approx(2.0, abs=1e-9)
    sign = model.geom('env0/scene/World/Sign')
    assert data.geom_xpos[sign.id][2] == pytest.approx(1.0, abs=1e-9)


def test_a_rigid_bodys_visual_only_geometry_weighs_nothing(tmp_path):
    # A 20 cm collider cube with a 1 m visual sphere around it (a detailed mesh, a decal): PhysX
    # weighs the collider alone, 8 kg at water's density; MuJoCo weighed both (4.2 t). A body with
    # no collider at all keeps its geoms' masses (something has to weigh).
    stage = new_stage(tmp_path / 'weigh.usda')
    body = UsdGeom.Xform.Define(stage, '/World/Crate')
    UsdPhysics.RigidBodyAPI.Apply(body.GetPrim())
    cube = UsdGeom.Cube.Define(stage, '/World/Crate/Box')
    cube.CreateSizeAttr(0.2)
    UsdPhysics.CollisionAPI.Apply(cube.GetPrim())
    UsdGeom.Sphere.Define(stage, '/World/Crate/Look').CreateRadiusAttr(1.0)
    ghost = UsdGeom.Xform.Define(stage, '/World/Ghost')
    ghost.AddTranslateOp().Set((5.0, 0.0, 0.0))
    UsdPhysics.RigidBodyAPI.Apply(ghost.GetPrim())
    UsdGeom.Cube.Define(stage, '/World/Ghost/Box').CreateSizeAttr(0.2)
    stage.Save()
    model, _ = compiled(usd_scene_to_spec(tmp_path / 'weigh.usda'))
    assert model.body('World/Crate').mass[0] == pytest.approx(1000 * 0.2 ** 3, rel=1e-6)
    assert model.geom('World/Crate/Look').contype[0] == 0  # (drawn, weightless)
    assert model.body('World/Ghost').mass[0] == pytest.approx(1000 * 0.2 ** 3, rel=1e-6)
