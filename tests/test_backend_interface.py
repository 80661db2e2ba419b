"""The backend interface (``internutopia/core/backend/interface.py``, ``docs/backend.md``) on the MuJoCo
backend: the pack's typed state arrays, its model lookup's records, and its computations, each
against MuJoCo's own answer."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from internutopia.core.backend import interface
from internutopia.core.backend.model import GeomType, JointType, ServoKind, UnknownName
from internutopia.core.backend.state import ON_REQUEST_FIELDS, OUTPUT_FIELDS, STATE_FIELDS, StateArrays
from internutopia.core.util.math import quat_conjugate, quat_multiply, rotate
from internutopia.core.vec_env import Env
from internutopia_extension.configs.objects import DynamicCubeCfg
from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_by_speed_cfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


@pytest.fixture(scope='module')
def env():
    from internutopia.core.config import Config, SimConfig

    task = FiniteStepTaskCfg(max_steps=10_000, robots=[JetbotRobotCfg(position=(0.0, 0.0, 0.0))],
                             objects=[DynamicCubeCfg(name='cube', position=(0.18, 0.0, 0.05), scale=(0.1, 0.1, 0.1))])  # 0.09 m ahead of the chassis
    config = Config(simulator=SimConfig(physics_dt=1 / 240), env_num=2, env_offset_size=5.0, task_configs=[task] * 2,
                    metrics_save_path='none')
    with Env(config) as env:
        env.reset()
        for _ in range(30):
            env.step([{'jetbot': {'move_by_speed': [0.4, 0.5]}}] * 2)
        yield env


def test_the_pack_has_every_member_of_the_interface(env):
    pack = env.runner.world.pack(0)
    members = [name for name in dir(interface.Pack) if not name.startswith('_')]
    members += list(interface.Pack.__annotations__)
    assert [m for m in members if not hasattr(pack, m)] == []
    lookup_members = [name for name in dir(interface.ModelLookup) if not name.startswith('_')]
    lookup_members += list(interface.ModelLookup.__annotations__)
    assert [m for m in lookup_members if not hasattr(pack.lookup, m)] == []
    world_members = [name for name in dir(interface.World) if not name.startswith('_')]
    assert [m for m in world_members if not hasattr(env.runner.world, m)] == []


def test_state_arrays_are_plain_attributes_of_the_engine_arrays(env):
    pack = env.runner.world.pack(1)
    data, lookup = pack.data, pack.lookup
    assert isinstance(data, StateArrays) and not hasattr(data, '__dict__')
    assert data.qpos is data.qpos  # the same array every read: no property, no copy
    shapes = {'time': (2,), 'qpos': (2, lookup.nq), 'qvel': (2, lookup.nv), 'act': (2, lookup.na), 'ctrl': (2, lookup.nu),
              'qfrc_applied': (2, lookup.nv), 'xfrc_applied': (2, lookup.nbody, 6), 'mocap_pos': (2, lookup.nmocap, 3),
              'mocap_quat': (2, lookup.nmocap, 4), 'sensordata': (2, lookup.nsensordata)}
    assert set(shapes) == {*STATE_FIELDS, *OUTPUT_FIELDS}
    assert {name: getattr(data, name).shape for name in shapes} == shapes
    # A write is the slot's state: the world's own copy of the slot sees it.
    before = data.qvel[1].copy()
    data.qvel[1, 0] += 0.25
    assert env.runner.world.slot_state(1)['qvel'][0] == before[0] + 0.25
    data.qvel[1] = before


@pytest.mark.parametrize('name', ON_REQUEST_FIELDS)
def test_every_on_request_field_binds_with_its_documented_shape(env, name):
    pack = env.runner.world.pack(0)
    sizes = {'xpos': ('nbody', 3), 'xquat': ('nbody', 4), 'xmat': ('nbody', 9), 'xipos': ('nbody', 3), 'ximat': ('nbody', 9),
             'site_xpos': ('nsite', 3), 'site_xmat': ('nsite', 9), 'geom_xpos': ('ngeom', 3), 'geom_xmat': ('ngeom', 9),
             'cam_xpos': ('ncam', 3), 'cam_xmat': ('ncam', 9), 'subtree_com': ('nbody', 3), 'cvel': ('nbody', 6),
             'cfrc_ext': ('nbody', 6), 'qacc': ('nv',), 'qfrc_actuator': ('nv',), 'actuator_force': ('nu',)}
    expected = (2, *(getattr(pack.lookup, s) if isinstance(s, str) else s for s in sizes[name]))
    array = pack.field(name)
    assert array.shape == expected and getattr(pack.data, name) is array and pack.data.bound(name) is array


def test_lookup_records_match_the_model(env):
    pack = env.runner.world.pack(0)
    model, lookup = pack.model, pack.lookup
    body = lookup.body('jetbot/chassis')
    joint = model.body_jntadr[body.id]
    assert body.id == model.body('jetbot/chassis').id and body.parent == 0 and body.mocap == -1 and not body.static
    assert (body.root_qposadr, body.root_dofadr) == (model.jnt_qposadr[joint], model.jnt_dofadr[joint])
    assert body.mass == pytest.approx(model.body_mass[body.id])
    names = [n for n in lookup.names('joint') if n.startswith('jetbot/') and 'wheel' in n]
    joints = lookup.joints(names)
    assert joints.names == tuple(names) and set(joints.type.tolist()) == {JointType.HINGE}
    assert joints.qposadr.tolist() == [model.joint(n).qposadr[0] for n in names]
    assert joints.dofadr.tolist() == [model.joint(n).dofadr[0] for n in names]
    actuators = lookup.actuators()
    assert actuators.ids.tolist() == list(range(model.nu)) and actuators.names == lookup.names('actuator')
    assert actuators.joint.tolist() == model.actuator_trnid[:, 0].tolist()
    assert set(actuators.kind.tolist()) <= {int(k) for k in ServoKind}
    sensor = lookup.sensor('jetbot/contacts')
    assert (sensor.adr, sensor.dim) == (model.sensor('jetbot/contacts').adr[0], model.sensor('jetbot/contacts').dim[0])
    geoms = lookup.geoms()
    assert geoms.body.tolist() == model.geom_bodyid.tolist() and geoms.type.tolist() == model.geom_type.tolist()
    assert GeomType.PLANE in geoms.type.tolist() and geoms.static[geoms.type == GeomType.PLANE].all()
    assert lookup.timestep == model.opt.timestep
    with pytest.raises(ValueError, match='read-only'):
        joints.qposadr[0] = 0  # records are frozen, arrays too


def test_unknown_names_name_the_kind_and_the_known_ones(env):
    lookup = env.runner.world.pack(0).lookup
    with pytest.raises(UnknownName, match=r"the model has no joint 'jetbot/elbow'; joints under 'jetbot/': \['jetbot/"):
        lookup.id('joint', 'jetbot/elbow')
    with pytest.raises(KeyError):
        lookup.body('nobody')
    with pytest.raises(ValueError, match="unknown kind of model element 'tendon'"):
        lookup.id('tendon', 'x')
    assert lookup.find('body', 'nobody') == -1


def test_contacts_and_the_per_step_summary(env):
    pack = env.runner.world.pack(0)
    contacts = pack.contacts(0)
    data = pack.mjdata(0, contacts=True)
    n = data.ncon
    assert n and contacts.geom.shape == (n, 2) and contacts.normal.shape == (n, 3)
    np.testing.assert_array_equal(contacts.geom, data.contact.geom[:n])
    np.testing.assert_array_equal(contacts.normal, data.contact.frame[:n, :3])
    readings = pack.contact_readings('jetbot/', np.array([0, 1]))
    assert readings.count.shape == readings.static_count.shape == (2,) and readings.normal.shape[::2] == (2, 3)
    assert (readings.count >= readings.static_count).all() and (readings.static_count > 0).all()  # on the floor
    floor = readings.normal[:, :min(int(readings.count.min()), readings.normal.shape[1])]
    assert np.allclose(np.abs(floor[..., 2]), 1.0, atol=0.05)  # wheels on a flat floor


def test_body_poses_and_velocity_match_mujoco(env):
    pack = env.runner.world.pack(0)
    model, body = pack.model, pack.lookup.id('body', 'jetbot/chassis')
    position, orientation = pack.body_poses(1)
    data = mujoco.MjData(model)
    pack.batch.get_data(1, data)
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(position, data.xpos, atol=1e-12)
    np.testing.assert_allclose(orientation, data.xquat, atol=1e-12)
    expected = np.zeros(6)
    mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, body, expected, 0)
    velocity = pack.body_velocity(1, body)
    np.testing.assert_allclose(velocity, expected, atol=1e-12)
    assert np.linalg.norm(velocity) > 0.01  # it is driving


def test_servo_gains_are_written_for_the_whole_pack(make_config):
    h1 = H1RobotCfg(position=(0.0, 0.0, 1.05), controllers=[move_by_speed_cfg])
    with Env(make_config([FiniteStepTaskCfg(max_steps=100, robots=[h1])], env_num=1)) as env:
        env.reset()
        pack = env.runner.world.pack(0)
        servos = pack.lookup.actuators()
        position = servos.ids[servos.kind == ServoKind.POSITION][:2]
        pack.set_servo_gains(position, kp=np.array([11.0, 12.0]), kv=np.array([1.5, 2.5]))
        after = pack.lookup.actuators([servos.names[i] for i in position])
        assert after.gain.tolist() == after.kp.tolist() == [11.0, 12.0] and after.kv.tolist() == [1.5, 2.5]
        assert (after.kind == ServoKind.POSITION).all()


def test_quaternion_helpers_agree_with_mujoco():
    """``rotate`` and ``quat_conjugate`` to the bit; ``quat_multiply`` to rounding (MuJoCo's build
    fuses some of its multiply-adds)."""
    rng = np.random.default_rng(0)
    quats = rng.normal(size=(200, 4))
    quats /= np.linalg.norm(quats, axis=1, keepdims=True)
    vecs, others = rng.normal(size=(200, 3)), rng.normal(size=(200, 4))
    rotated, negated, product = np.zeros((200, 3)), np.zeros((200, 4)), np.zeros((200, 4))
    for i in range(200):
        mujoco.mju_rotVecQuat(rotated[i], vecs[i], quats[i])
        mujoco.mju_negQuat(negated[i], quats[i])
        mujoco.mju_mulQuat(product[i], quats[i], others[i])
    np.testing.assert_array_equal(rotate(quats, vecs), rotated)
    np.testing.assert_array_equal(quat_conjugate(quats), negated)
    np.testing.assert_allclose(quat_multiply(quats, others), product, rtol=0, atol=1e-14)
