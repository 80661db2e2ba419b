"""Scene loading for the MuJoCo backend: the bundled scenes, MJCF specifics, errors and the default
ground, attaching many copies, free cells (helpers in ``scene_helpers.py``)."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

pxr = pytest.importorskip('pxr')

from internutopia.core.backend.mujoco.scene_info import free_cells, obstacle_boxes  # noqa: E402
from internutopia.core.backend.mujoco.usd_scene import (  # noqa: E402
    default_ground_spec,
    mjcf_scene_to_spec,
    scene_to_spec,
)
from tests.scene_helpers import (  # noqa: E402
    EMPTY,
    OFFICE,
    PLANE,
    TWO_ROOMS,
    add_ball,
    compiled,
    geom_named,
    quat_z,
    rot_z,
    world_with,
)


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
