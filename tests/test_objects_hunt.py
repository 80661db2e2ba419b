"""Scene objects as InternUtopia places them (a defect hunt): a USD object's top prim at the
configured pose, whatever transform the file gives it; what weighs in a moving USD object; unit
orientations; object names; colours in a camera image of several slots."""

from __future__ import annotations

import os

os.environ.setdefault('MUJOCO_GL', 'egl')

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.per_slot.scene import SlotScene  # noqa: E402
from internutopia_extension import import_extensions  # noqa: E402
from internutopia_extension.configs.objects import DynamicCubeCfg, UsdObjCfg, VisualCubeCfg  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg  # noqa: E402
from internutopia_extension.configs.sensors import RepCameraCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg, PointNavTaskCfg  # noqa: E402
from internutopia_extension.sensors.rep_camera import forward_camera_quat  # noqa: E402

import_extensions()

CUBE_POINTS = ('[(-0.1, -0.1, -0.1), (0.1, -0.1, -0.1), (-0.1, 0.1, -0.1), (0.1, 0.1, -0.1), '
               '(-0.1, -0.1, 0.1), (0.1, -0.1, 0.1), (-0.1, 0.1, 0.1), (0.1, 0.1, 0.1)]')
CUBE_FACES = ('int[] faceVertexCounts = [4, 4, 4, 4, 4, 4]\n'
              '        int[] faceVertexIndices = [0, 1, 3, 2, 4, 6, 7, 5, 0, 4, 5, 1, 2, 3, 7, 6, 0, 2, 6, 4, 1, 5, 7, 3]')

#: A default prim moved 3 m, turned 90 degrees and doubled by its own transform, with a red cube
#: 0.5 m along its x and a green mesh 0.5 m along its y; a sphere in another root prim.
MOVED = f'''#usda 1.0
(
    DEFAULT_PRIM
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "Thing"
{{
    double3 xformOp:translate = (3, 2, 0)
    float3 xformOp:rotateXYZ = (0, 0, 90)
    float3 xformOp:scale = (2, 2, 2)
    uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:rotateXYZ", "xformOp:scale"]
    def Cube "A"
    {{
        double size = 0.2
        double3 xformOp:translate = (0.5, 0, 0)
        uniform token[] xformOpOrder = ["xformOp:translate"]
        color3f[] primvars:displayColor = [(1, 0, 0)]
    }}
    def Mesh "B"
    {{
        {CUBE_FACES}
        point3f[] points = {CUBE_POINTS}
        double3 xformOp:translate = (0, 0.5, 0)
        uniform token[] xformOpOrder = ["xformOp:translate"]
        color3f[] primvars:displayColor = [(0, 1, 0)]
    }}
}}
OTHER_ROOTS
'''
OTHER = '''def Xform "Other"
{
    def Sphere "S"
    {
        double radius = 0.3
    }
}
def Scope "Looks"
{
}'''

#: A 0.2 m box: a collider cube (guide purpose, not drawn), a visual mesh of the same size, and a
#: flat visual label on one face.
LABELLED_BOX = f'''#usda 1.0
(
    defaultPrim = "Box"
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "Box"
{{
    def Cube "Collider" (prepend apiSchemas = ["PhysicsCollisionAPI"])
    {{
        double size = 0.2
        token purpose = "guide"
    }}
    def Mesh "Visual"
    {{
        {CUBE_FACES}
        point3f[] points = {CUBE_POINTS}
        color3f[] primvars:displayColor = [(0, 0, 1)]
    }}
    def Mesh "Label"
    {{
        int[] faceVertexCounts = [4]
        int[] faceVertexIndices = [0, 1, 2, 3]
        point3f[] points = [(0.101, -0.05, -0.05), (0.101, 0.05, -0.05), (0.101, 0.05, 0.05), (0.101, -0.05, 0.05)]
        color3f[] primvars:displayColor = [(1, 1, 0)]
    }}
}}
'''


def moved_usda(default_prim: bool, other: bool) -> str:
    """:data:`MOVED` with or without its ``defaultPrim`` and its other root prims."""
    return MOVED.replace('DEFAULT_PRIM', 'defaultPrim = "Thing"' if default_prim else '').replace('OTHER_ROOTS', OTHER if other else '')


def make_env(tasks, env_num, offset=10.0, **sim):
    return Env(Config(simulator=SimConfig(physics_dt=1 / 240, **sim), env_num=env_num, env_offset_size=offset,
                      metrics_save_path='none', task_configs=list(tasks)))


def nav_task(objects, **kw):
    kw.setdefault('max_steps', 1000)
    return PointNavTaskCfg(goal=(9.0, 9.0, 0.0), robots=[JetbotRobotCfg(position=(-3.0, -3.0, 0.0))], objects=objects, **kw)


def geom_centres(env, slot, name):
    """``{geom name below the object's content: env-local centre}`` of object ``name`` in ``slot``
    (the files here have no ``CollisionAPI``: every geom collides, so the physics model has it)."""
    pack = env.runner.world.pack(slot)
    model, data = pack.model, pack.mjdata(slot)
    prefix = f'{name}/content/'
    out = {}
    for g in range(model.ngeom):
        geom = model.geom(g).name
        if geom.startswith(prefix):
            body = model.geom_bodyid[g]
            out[geom[len(prefix):]] = data.xpos[body] + data.xmat[body].reshape(3, 3) @ model.geom_pos[g]
    return out


@pytest.fixture
def moved_file(tmp_path):
    def write(default_prim=True, other=True):
        path = tmp_path / f'moved_{int(default_prim)}{int(other)}.usda'
        path.write_text(moved_usda(default_prim, other))
        return str(path)

    return write


def test_usd_object_top_prim_is_placed_at_the_config_pose_in_every_slot(moved_file):
    # InternUtopia references the file's default prim and sets its translate, orient and scale
    # to the config's: the file's own transform of that prim is replaced, its children's kept.
    path = moved_file()
    positions = [(1.0, 0.0, 0.5), (-2.0, 1.0, 0.25)]
    tasks = [nav_task([UsdObjCfg(name='thing', usd_path=path, position=p)]) for p in positions]
    env = make_env(tasks, env_num=2)
    with pytest.warns(UserWarning, match=r'/Other left out: an object is its file\'s default prim /Thing'):
        obs, _ = env.reset()
    for slot, position in enumerate(positions):
        assert obs[slot]['objects']['thing']['position'] == pytest.approx(position)
        centres = geom_centres(env, slot, 'thing')
        assert sorted(centres) == ['Thing/A', 'Thing/B']  # the sphere of /Other is no part of the object
        np.testing.assert_allclose(centres['Thing/A'], np.add(position, (0.5, 0.0, 0.0)), atol=1e-9)
        body = SlotScene(env.runner.view, slot).get('thing')
        np.testing.assert_allclose(body.get_world_pose()[0], env.runner.view.origin(slot) + position, atol=1e-12)
    model = env.runner.world.pack(0).model
    cube = model.geom('thing/content/Thing/A').id
    np.testing.assert_allclose(model.geom_size[cube], [0.1, 0.1, 0.1])  # the file's 2x scale is replaced too
    env.close()


def test_usd_object_config_orientation_and_scale_replace_the_files(moved_file):
    turn = (np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4))  # 90 degrees about z
    task = nav_task([UsdObjCfg(name='thing', usd_path=moved_file(other=False), position=(1.0, 0.0, 0.5),
                               orientation=turn, scale=(3.0, 3.0, 3.0))])
    env = make_env([task], env_num=1)
    env.reset()
    centres = geom_centres(env, 0, 'thing')
    np.testing.assert_allclose(centres['Thing/A'], [1.0, 1.5, 0.5], atol=1e-9)  # 0.5 m x 3 along the turned x
    np.testing.assert_allclose(centres['Thing/B'], [-0.5, 0.0, 0.5], atol=1e-9)
    model = env.runner.world.pack(0).model
    np.testing.assert_allclose(model.geom_size[model.geom('thing/content/Thing/A').id], [0.3, 0.3, 0.3])
    env.close()


def test_usd_object_top_prim_of_a_file_without_default_prim(moved_file):
    # One root prim: it is the top prim. Several: nothing tells which, the file loads as a whole.
    env = make_env([nav_task([UsdObjCfg(name='one', usd_path=moved_file(default_prim=False, other=False), position=(1.0, 0.0, 0.5)),
                              UsdObjCfg(name='all', usd_path=moved_file(default_prim=False), position=(0.0, 0.0, 0.5))])],
                   env_num=1)
    env.reset()
    np.testing.assert_allclose(geom_centres(env, 0, 'one')['Thing/A'], [1.5, 0.0, 0.5], atol=1e-9)
    everything = geom_centres(env, 0, 'all')
    assert sorted(everything) == ['Other/S', 'Thing/A', 'Thing/B']
    np.testing.assert_allclose(everything['Thing/A'], [3.0, 3.0, 0.5], atol=1e-9)  # (3, 2) + 2 x (0, 0.5)
    env.close()


def test_moving_usd_object_weighs_its_colliders_alone(tmp_path):
    # PhysX weighs a rigid body by its colliders: a visual twin mesh and a flat label weigh nothing
    # (MuJoCo gave the open label mesh hundreds of kilograms).
    path = tmp_path / 'labelled_box.usda'
    path.write_text(LABELLED_BOX)
    task = nav_task([UsdObjCfg(name='box', usd_path=str(path), position=(0.0, 0.0, 0.5), dynamic=True),
                     UsdObjCfg(name='light', usd_path=str(path), position=(1.0, 0.0, 0.5), dynamic=True, mass=0.5)])
    env = make_env([task], env_num=1)
    env.reset()
    model = env.runner.world.pack(0).model
    assert model.body_subtreemass[model.body('box/body').id] == pytest.approx(8.0)  # 0.2 m cube, 1000 kg/m^3
    np.testing.assert_allclose(model.body_inertia[model.body('box/body').id], [8.0 * 0.08 / 12] * 3, rtol=1e-6)
    assert model.body_subtreemass[model.body('light/body').id] == pytest.approx(0.5)
    for _ in range(240):
        obs, *_ = env.step([None])
    assert obs[0]['objects']['box']['position'][2] == pytest.approx(0.1, abs=2e-3)  # at rest on its collider
    env.close()


def test_object_orientations_are_unit_quaternions():
    # A config's quaternion need not be a unit one (InternUtopia's physics normalizes it); what a
    # reset or a teleport writes, and so what is read back, is.
    task = nav_task([DynamicCubeCfg(name='cube', position=(0.0, 0.0, 0.5), orientation=(2.0, 0.0, 0.0, 0.0)),
                     VisualCubeCfg(name='marker', position=(1.0, 0.0, 0.5), orientation=(0.0, 0.0, 0.0, 3.0))])
    env = make_env([task], env_num=1)
    obs, _ = env.reset()
    np.testing.assert_allclose(obs[0]['objects']['cube']['orientation'], [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(obs[0]['objects']['marker']['orientation'], [0.0, 0.0, 0.0, 1.0])
    scene = SlotScene(env.runner.view, 0)
    for name in ('cube', 'marker'):
        body = scene.get(name)
        body.set_pose([0.5, 0.5, 0.5], [0.0, 0.0, 0.0, 5.0])
        np.testing.assert_allclose(body.get_pose()[1], [0.0, 0.0, 0.0, 1.0])
        with pytest.raises(ValueError, match=rf"'{name}' in env 0: orientation must be a non-zero wxyz quaternion"):
            body.set_pose(orientation=[0.0, 0.0, 0.0, 0.0])
        np.testing.assert_allclose(body.get_pose()[1], [0.0, 0.0, 0.0, 1.0])  # unchanged
    obs, *_ = env.step([None])
    np.testing.assert_allclose(obs[0]['objects']['cube']['orientation'], [0.0, 0.0, 0.0, 1.0], atol=1e-9)
    env.close()


@pytest.mark.parametrize('name', ['', 'shelf/box'])
def test_object_names_without_slash(name):
    # The model names an object's parts '<name>/<part>' and camera annotations read the name back
    # up to the first '/': 'shelf/box' was unlabelled in segmentation (or labelled 'shelf').
    # Refused when the config is built (and so by `internutopia validate`), naming the field.
    with pytest.raises(ValueError, match=rf"name\n  Value error, an object's name must be non-empty and hold no '/' .*got {name!r}"):
        VisualCubeCfg(name=name)
    with pytest.raises(ValueError, match=rf"a robot's name must be non-empty and hold no '/' .*got {name!r}"):
        JetbotRobotCfg(name=name)
    cube = VisualCubeCfg(name='box')
    with pytest.raises(ValueError, match="an object's name must be non-empty"):
        cube.name = name  # (assignment is validated too)
    assert cube.name == 'box'


def test_object_colours_and_places_in_a_camera_image_of_each_slot(tmp_path):
    # Slots 10 m apart, each with its own object 1.2 m ahead of the camera (a USD object whose file
    # moves its top prim 3.6 m away), seen in its colour at its depth; resetting another slot
    # leaves them.
    path = tmp_path / 'moved.usda'
    path.write_text(moved_usda(True, False))
    camera = RepCameraCfg(name='cam', prim_path='chassis/cam', resolution=(64, 48), depth=True,
                          position=(0.0, 0.0, 0.3), orientation=forward_camera_quat(0.0))

    def task(obj):
        return FiniteStepTaskCfg(max_steps=50, robots=[JetbotRobotCfg(sensors=[camera])], objects=[obj])

    tasks = [task(DynamicCubeCfg(name='o', position=(1.5, 0.0, 0.3), scale=(0.6, 0.6, 0.6), color=(1.0, 0.0, 0.0))),
             task(VisualCubeCfg(name='o', position=(1.5, 0.0, 0.3), scale=(0.6, 0.6, 0.6), color=(0.0, 0.0, 1.0))),
             task(UsdObjCfg(name='o', usd_path=str(path), position=(0.0, 0.0, 0.3), scale=(3.0, 3.0, 3.0))),
             task(VisualCubeCfg(name='o', position=(1.5, 0.0, 0.3), scale=(0.6, 0.6, 0.6), color=(0.0, 1.0, 0.0)))]
    env = make_env(tasks, env_num=3, rendering_dt=1 / 240)
    env.reset()
    obs, *_ = env.step([None] * 3)
    readings = [obs[s]['jetbot']['sensors']['cam'] for s in range(3)]
    for slot, channel in enumerate((0, 2, 0)):
        pixel = readings[slot]['rgba'][24, 32, :3].astype(int)
        assert pixel[channel] > 150 and np.delete(pixel, channel).max() < 100, (slot, pixel)
        # the cube's near face 1.2 m ahead: 1.5 - 0.3 (the USD cube's: 3 x (0.5 - 0.1))
        assert readings[slot]['depth'][24, 32] == pytest.approx(1.2, abs=0.02)
    env.reset([1])
    obs, *_ = env.step([None] * 3)
    assert obs[1]['jetbot']['sensors']['cam']['rgba'][24, 32, 1] > 150  # slot 1's next episode: green
    for slot, channel in ((0, 0), (2, 0)):
        assert obs[slot]['jetbot']['sensors']['cam']['rgba'][24, 32, channel] > 150
        assert obs[slot]['jetbot']['sensors']['cam']['depth'][24, 32] == pytest.approx(1.2, abs=0.02)
    env.close()
