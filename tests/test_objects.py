"""Objects: DynamicCube, VisualCube, UsdObject -- building, placing, physics, observations."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from internutopia.core.config import strict_config
from internutopia.core.vec_env import Env
from internutopia_extension.configs.objects import DynamicCubeCfg, UsdObjCfg, VisualCubeCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import PointNavTaskCfg

USDA_BOX = '''#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "Box" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])
{
    float physics:mass = 3
    def Cube "Geom" (prepend apiSchemas = ["PhysicsCollisionAPI"])
    {
        double size = 0.2
        color3f[] primvars:displayColor = [(0.2, 0.3, 0.9)]
    }
}
'''

MJCF_WALL = '''<mujoco><worldbody><body name="wall">
  <geom name="slab" type="box" size="0.05 1.0 0.25" pos="0 0 0.25"/>
</body></worldbody></mujoco>'''


def nav_task(objects, goal=(4.0, 4.0, 0.0), robot_xy=(-1.5, -1.5), **kw):
    kw.setdefault('max_steps', 10_000)
    return PointNavTaskCfg(goal=goal, robots=[JetbotRobotCfg(position=(*robot_xy, 0.0))], objects=objects, **kw)


def geoms_of(env, slot, name, drawn=False):
    pack = env.runner.world.pack(slot)
    model = pack.drawn_model if drawn else pack.model
    prefix = f'{name}/'
    return [g for g in range(model.ngeom) if model.body(model.geom_bodyid[g]).name.startswith(prefix)]


def contact_geoms(env, slot=0):
    data = env.runner.world.pack(slot).mjdata(slot, contacts=True)
    return set(data.contact.geom[:data.ncon].ravel().tolist())


def test_dynamic_cube_falls_and_rests_on_the_ground(make_config):
    sizes = [0.2, 0.1]
    tasks = [nav_task([DynamicCubeCfg(name='cube', position=(0.5, 0.3, 0.6), scale=(s, s, s), mass=0.4, color=(1.0, 0.0, 0.0))])
             for s in sizes]
    env = Env(make_config(tasks, env_num=2))
    obs, _ = env.reset()
    for slot in range(2):
        cube = obs[slot]['objects']['cube']
        np.testing.assert_allclose(cube['position'], [0.5, 0.3, 0.6], atol=1e-9)  # env-local, as configured
        np.testing.assert_allclose(cube['orientation'], [1, 0, 0, 0], atol=1e-9)
        assert set(cube) == {'position', 'orientation', 'linear_velocity', 'angular_velocity'}
    falling = None
    for step in range(480):
        obs, *_ = env.step([None, None])
        if step == 60:
            falling = obs[0]['objects']['cube']['linear_velocity'][2]
    assert falling < -0.5  # it was falling (m/s, world z)
    model = env.runner.world.pack(0).model
    assert model.body_mass[model.body('cube/body').id] == pytest.approx(0.4)
    for slot, size in enumerate(sizes):
        cube = obs[slot]['objects']['cube']
        assert cube['position'][2] == pytest.approx(size / 2, abs=2e-3)
        np.testing.assert_allclose(cube['position'][:2], [0.5, 0.3], atol=1e-3)
        np.testing.assert_allclose(np.abs(cube['orientation']), [1, 0, 0, 0], atol=1e-3)
        assert np.linalg.norm(cube['linear_velocity']) < 1e-3 and np.linalg.norm(cube['angular_velocity']) < 1e-2
    env.close()


def test_visual_cube_never_touches_anything_and_stays_put(make_config):
    # Overlapping the robot and sunk into the ground: still no contact, and it does not move.
    cube = VisualCubeCfg(name='marker', position=(-1.5, -1.5, 0.0), scale=(0.5, 0.5, 0.5), color=(0.0, 1.0, 0.0, 0.5))
    env = Env(make_config([nav_task([cube])], env_num=1))
    obs, _ = env.reset()
    # Drawn, it is a geom that collides with nothing; the headless physics leaves it out altogether
    # (internutopia.core.backend.mujoco.visuals), keeping its body, whose pose is mocap state.
    drawn = env.runner.world.pack(0).drawn_model
    marker = geoms_of(env, 0, 'marker', drawn=True)
    assert marker and all(drawn.geom_contype[g] == 0 and drawn.geom_conaffinity[g] == 0 for g in marker)
    assert geoms_of(env, 0, 'marker') == []
    model = env.runner.world.pack(0).model
    assert model.body_mocapid[model.body('marker/body').id] >= 0  # static: its pose is mocap state
    for _ in range(50):
        obs, *_ = env.step([{'jetbot': {'move_by_speed': [0.3, 0.0]}}])
        assert all(model.body(model.geom_bodyid[g]).name != 'marker/body' for g in contact_geoms(env))
    assert set(obs[0]['objects']['marker']) == {'position', 'orientation'}
    np.testing.assert_allclose(obs[0]['objects']['marker']['position'], [-1.5, -1.5, 0.0], atol=1e-12)
    env.close()


def test_static_object_pose_is_state_not_structure(make_config):
    tasks = [nav_task([VisualCubeCfg(name='marker', position=(x, 1.0, 0.05), orientation=(0.0, 0.0, 0.0, 1.0))], max_steps=2)
             for x in (0.0, 1.0, 2.0)]
    env = Env(make_config(tasks, env_num=1))
    obs, _ = env.reset()
    compiles = env.runner.world.compile_count
    for x in (1.0, 2.0):
        env.step([None])
        env.step([None])
        obs, _ = env.reset([0])
        np.testing.assert_allclose(obs[0]['objects']['marker']['position'], [x, 1.0, 0.05], atol=1e-12)
        np.testing.assert_allclose(np.abs(obs[0]['objects']['marker']['orientation']), [0, 0, 0, 1], atol=1e-12)
    assert env.runner.world.compile_count == compiles  # same structure: no rebuild
    env.close()


def test_usd_object_from_usda_and_mjcf(make_config, tmp_path):
    usda = tmp_path / 'box.usda'
    usda.write_text(USDA_BOX)
    xml = tmp_path / 'wall.xml'
    xml.write_text(MJCF_WALL)
    objects = [
        UsdObjCfg(name='box', usd_path=str(usda), position=(1.0, 0.0, 0.5), dynamic=True, mass=2.0),
        UsdObjCfg(name='wall', usd_path=str(xml), position=(0.0, 1.0, 0.0)),
        UsdObjCfg(name='ghost', usd_path=str(xml), position=(0.0, -1.0, 0.0), collider=False),
    ]
    env = Env(make_config([nav_task(objects)], env_num=1))
    obs, _ = env.reset()
    model = env.runner.world.pack(0).model
    box = model.body('box/body').id
    assert model.body_subtreemass[box] == pytest.approx(2.0)  # the file says 3 kg; mass rescales it
    assert model.body_mocapid[model.body('wall/body').id] >= 0
    assert all(model.geom_contype[g] == 0 for g in geoms_of(env, 0, 'ghost'))
    assert all(model.geom_contype[g] != 0 for g in geoms_of(env, 0, 'wall'))
    for _ in range(480):
        obs, *_ = env.step([None])
    objects_obs = obs[0]['objects']
    assert objects_obs['box']['position'][2] == pytest.approx(0.1, abs=2e-3)  # a 0.2 m cube at rest
    np.testing.assert_allclose(objects_obs['wall']['position'], [0.0, 1.0, 0.0], atol=1e-12)
    assert set(objects_obs) == {'box', 'wall', 'ghost'}
    env.close()


def test_object_config_errors():
    with pytest.raises(ValidationError, match='color'):
        DynamicCubeCfg(name='c', color=(2.0, 0.0, 0.0))
    with pytest.raises(ValidationError, match='scale'):
        VisualCubeCfg(name='v', scale=(0.1, 0.0, 0.1))
    with pytest.raises(ValidationError, match='mass'):
        DynamicCubeCfg(name='c', mass=0.0)
    with pytest.raises(ValidationError, match='usd_path'):
        UsdObjCfg(name='u', usd_path='thing.obj')
    with strict_config(), pytest.raises(ValidationError, match="'colr' of DynamicCubeCfg; did you mean 'color'"):
        DynamicCubeCfg(name='c', colr=(1.0, 0.0, 0.0))


def test_missing_object_file_fails_cleanly(make_config, tmp_path):
    good = nav_task([DynamicCubeCfg(name='cube', position=(0.5, 0.0, 0.05))], max_steps=3)
    bad = nav_task([UsdObjCfg(name='thing', usd_path=str(tmp_path / 'missing.usda'))])
    env = Env(make_config([good, bad], env_num=1))
    env.reset()
    for _ in range(3):
        env.step([None])
    state = env.runner.world.slot_state(0)
    with pytest.raises(ValueError, match=r'task_configs\[1\]\.objects\[0\]\.usd_path: object file not found: .*missing.usda'):
        env.reset([0])
    assert len(env.runner.queue) == 1  # the episode went back to the queue
    for key, value in env.runner.world.slot_state(0).items():
        assert np.array_equal(value, state[key])
    env.close()
