"""The Warp backend (``SimConfig(backend='warp')``) keeps the env's contract, on Warp's CPU device.

The same promises as on the MuJoCo backend: resets of any subset of slots, ``None`` for slots
without an episode, one record per episode, a diverged slot ending only its own episode; plus
the Warp backend's own: state arrays of the documented shapes on the host, buffer overflows
reported, features MuJoCo Warp lacks refused when a slot is placed. Agreement of trajectories
with the MuJoCo backend is in ``tests/test_warp_backend_agreement.py``.

The models are kept to two structures (a Jetbot with a cube, an H1) so Warp compiles its kernels
for few models: about a minute each the first time on a CPU, seconds once Warp's kernel cache
holds them (CI keeps the cache, see ``.ci/run``).
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

pytest.importorskip('mujoco_warp', reason="the warp extra is not installed (pip install 'internutopia[warp]'; Python >= 3.11)")

from internutopia.core.backend import interface  # noqa: E402
from internutopia.core.backend.state import OUTPUT_FIELDS, STATE_FIELDS  # noqa: E402
from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.objects import DynamicCubeCfg  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402

pytestmark = pytest.mark.slow
#: The device the Jetbot-and-cube tests step on: Warp's CPU device here; a GPU machine runs them with
#: ``INTERNUTOPIA_TEST_WARP_DEVICE=cuda:0`` (docs/backend.md, "On a GPU").
WARP_DEVICE = os.environ.get('INTERNUTOPIA_TEST_WARP_DEVICE', 'cpu')
DRIVE = {'jetbot': {'move_by_speed': [0.4, 0.8]}}


def assert_same_run(got, expected, err_msg: str = '') -> None:
    """Two runs of the same steps: equal to the bit on Warp's CPU device. On a GPU MuJoCo Warp's
    sums (atomic adds, in no fixed order) leave the last bits to chance: a Jetbot's position after
    ten steps differed by 2e-12 m between two envs on an H200; there, equal to 1e-6."""
    if WARP_DEVICE == 'cpu':
        np.testing.assert_array_equal(got, expected, err_msg=err_msg)
    else:
        np.testing.assert_allclose(got, expected, rtol=0.0, atol=1e-6, err_msg=err_msg)


def jetbot_cube_task(max_steps: int = 1000, x: float = 0.0) -> FiniteStepTaskCfg:
    """The one structure of these tests: a Jetbot and a cube ahead of it."""
    return FiniteStepTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg(position=(x, 0.0, 0.0))],
                             objects=[DynamicCubeCfg(name='cube', position=(x + 0.3, 0.0, 0.05), scale=(0.1, 0.1, 0.1))])


def warp_config(tasks, env_num: int = 3, backend: str = 'warp', **kw) -> Config:
    kw.setdefault('metrics_save_path', 'none')
    return Config(simulator=SimConfig(physics_dt=1 / 240, backend=backend, device=WARP_DEVICE), env_num=env_num,
                  env_offset_size=5.0, task_configs=list(tasks), **kw)


@pytest.fixture(scope='module')
def env():
    with Env(warp_config([jetbot_cube_task(x=0.05 * k) for k in range(3)], env_num=3)) as env:
        env.reset()
        for _ in range(5):
            env.step([DRIVE] * 3)
        yield env


def test_the_world_is_a_warp_world_with_every_member_of_the_interface(env):
    world = env.runner.world
    pack = world.pack(0)
    assert type(world).__name__ == 'WarpWorld' and world.device == WARP_DEVICE
    assert pack.wdata.nworld == 3 and pack is world.pack(2)  # one Warp model and data for the structure's slots
    members = [m for m in dir(interface.Pack) if not m.startswith('_')] + list(interface.Pack.__annotations__)
    assert [m for m in members if not hasattr(pack, m)] == []
    assert [m for m in dir(interface.World) if not m.startswith('_') and not hasattr(world, m)] == []


def test_state_arrays_are_float64_host_arrays_of_the_documented_shapes(env):
    pack = env.runner.world.pack(0)
    data, lookup = pack.data, pack.lookup
    shapes = {'time': (3,), 'qpos': (3, lookup.nq), 'qvel': (3, lookup.nv), 'act': (3, lookup.na), 'ctrl': (3, lookup.nu),
              'qfrc_applied': (3, lookup.nv), 'xfrc_applied': (3, lookup.nbody, 6), 'mocap_pos': (3, lookup.nmocap, 3),
              'mocap_quat': (3, lookup.nmocap, 4), 'sensordata': (3, lookup.nsensordata)}
    assert set(shapes) == {*STATE_FIELDS, *OUTPUT_FIELDS}
    assert {name: getattr(data, name).shape for name in shapes} == shapes
    assert all(getattr(data, name).dtype == np.float64 for name in shapes)
    assert pack.field('xmat').shape == (3, lookup.nbody, 9) and pack.field('cvel').shape == (3, lookup.nbody, 6)
    # The bound field is the poses at the slot's current state after a forward pass: the rotations are rotations.
    rotations = pack.data.xmat[0].reshape(-1, 3, 3)
    np.testing.assert_allclose(rotations @ rotations.transpose(0, 2, 1), np.broadcast_to(np.eye(3), rotations.shape), atol=1e-5)


def test_the_robots_move_and_the_simulated_time_advances(env):
    pack = env.runner.world.pack(0)
    before, time = pack.data.qpos.copy(), pack.data.time.copy()
    obs, *_ = env.step([DRIVE, None, DRIVE])
    assert np.all(pack.data.time == time + 1 / 240)
    moved = np.abs(pack.data.qpos - before).max(axis=1)
    assert np.all(moved > 0) and np.all(np.isfinite(pack.data.qpos))
    assert obs[0]['jetbot']['position'][0] > 0.0  # driven forward from x = 0


def test_a_reset_of_some_slots_leaves_the_others_untouched_on_the_device(make_config):
    # Two identical runs; the second resets slots 2 and 0 halfway: slot 1 goes on as in the first
    # (bit-identical on the CPU device) and the reset slots start over exactly as a fresh episode does.
    tasks = [jetbot_cube_task() for _ in range(5)]
    with Env(warp_config(tasks)) as plain, Env(warp_config(tasks)) as reset:
        plain.reset()
        first = reset.reset()[0]
        for _ in range(6):
            expected = plain.step([DRIVE] * 3)[0]
            got = reset.step([DRIVE] * 3)[0]
        state_before = reset.runner.world.slot_state(1)
        obs, info = reset.reset([2, 0])
        assert len(obs) == len(info) == 2 and obs[1] is not None
        np.testing.assert_array_equal(obs[0]['jetbot']['position'], first[2]['jetbot']['position'])
        for name, value in reset.runner.world.slot_state(1).items():
            np.testing.assert_array_equal(value, state_before[name], err_msg=name)
        for _ in range(4):
            expected = plain.step([DRIVE] * 3)[0]
            got = reset.step([DRIVE] * 3)[0]
        assert_same_run(got[1]['jetbot']['position'], expected[1]['jetbot']['position'])
        # The reset slots drove 4 steps from the start: as slot 1 of the first run did after its first 4.
        assert got[0]['jetbot']['position'][0] < expected[1]['jetbot']['position'][0]


def test_a_structure_is_uploaded_to_the_device_once_however_many_slots_take_it(monkeypatch):
    # MuJoCo Warp's put_model is an upload to the device: checking the model (features MuJoCo Warp
    # lacks) once per slot made 4,096 Jetbots start in 110 s on an H100; now once per structure.
    import mujoco_warp

    uploads: list[int] = []
    put_model = mujoco_warp.put_model
    monkeypatch.setattr(mujoco_warp, 'put_model', lambda model: uploads.append(model.nbody) or put_model(model))
    with Env(warp_config([jetbot_cube_task() for _ in range(12)], env_num=6)) as env:
        env.reset()
        assert len(uploads) == 2  # the feature check and the pack's own model
        env.step([DRIVE] * 6)
        env.reset([0, 3, 5])  # new episodes of the same structure: nothing more goes up
        assert len(uploads) == 2
        obs = env.step([DRIVE] * 6)[0]
        assert all(o is not None and np.isfinite(o['jetbot']['position']).all() for o in obs)


def test_slots_without_an_episode_are_none_and_every_episode_has_one_record(tmp_path):
    path = tmp_path / 'results.jsonl'
    with Env(warp_config([jetbot_cube_task(max_steps=3) for _ in range(2)], metrics_save_path=str(path))) as env:
        obs, info = env.reset()
        assert obs[2] is None and info[2] is None and obs[0] is not None
        for _ in range(3):
            obs, reward, terminated, truncated, info = env.step([DRIVE] * 3)
        assert terminated == [True, True, True] and truncated[:2] == [True, True]
        assert obs[2] is None and reward[2] is None and obs[0] is not None
        obs, *_ = env.step([DRIVE] * 3)
        assert obs == [None, None, None]
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert sorted(r['slot'] for r in records) == [0, 1] and all(r['steps'] == 3 for r in records)


def test_a_diverged_slot_ends_its_own_episode_found_on_the_device(tmp_path):
    path = tmp_path / 'results.jsonl'
    tasks = [jetbot_cube_task(max_steps=50) for _ in range(3)]
    with Env(warp_config(tasks, metrics_save_path=str(path))) as env, Env(warp_config(tasks)) as clean:
        env.reset()
        clean.reset()
        env.step([DRIVE] * 3)
        clean.step([DRIVE] * 3)
        env.runner.world.pack(1).data.qvel[1, :] = 1e30  # a blow-up
        obs, reward, terminated, truncated, info = env.step([DRIVE] * 3)
        expected = clean.step([DRIVE] * 3)[0]
        assert terminated[1] is True and info[1]['diverged'] is True and reward[1] == 0.0
        assert 'diverged' not in info[0] and 'diverged' not in info[2]
        for slot in (0, 2):
            np.testing.assert_array_equal(obs[slot]['jetbot']['position'], expected[slot]['jetbot']['position'])
        assert np.all(np.isfinite(env.runner.world.pack(1).data.qpos[1]))  # put back to rest, not left at NaN
        obs, *_ = env.step([DRIVE] * 3)
        assert obs[1] is None and obs[0] is not None
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r.get('outcome') for r in records if r['slot'] == 1] == ['diverged']


def test_buffers_are_sized_from_the_scene_and_hold_its_contacts(env):
    import mujoco

    pack = env.runner.world.pack(0)
    model = pack.model
    moving_colliders = sum(1 for g in range(model.ngeom) if model.body_weldid[model.geom_bodyid[g]] != 0
                           and (model.geom_contype[g] or model.geom_conaffinity[g]))
    assert moving_colliders >= 4 and pack.buffers.nconmax >= 6 * moving_colliders
    assert pack.wdata.naconmax == pack.buffers.nconmax * 3 and pack.wdata.njmax == pack.buffers.njmax
    rest = mujoco.MjData(model)
    mujoco.mj_forward(model, rest)
    assert pack.buffers.njmax >= 2 * rest.nefc
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)  # an overflow would be reported as one
        env.step([DRIVE] * 3)
    assert pack.wdata.nacon.numpy()[0] > 0 and not pack.wdata.overflow.numpy().any()  # contacts, and all fit


def test_a_buffer_overflow_is_reported_ends_the_slots_it_hit_and_grows_the_buffers(monkeypatch):
    from internutopia.core.backend.warp import pack as warp_pack
    from internutopia.core.backend.warp.buffers import Buffers

    # Room for 2 contacts per world: the Jetbot's wheels and caster on the floor need more.
    monkeypatch.setattr(warp_pack, 'size_buffers', lambda model: Buffers(nconmax=2, njmax=64))
    with Env(warp_config([jetbot_cube_task() for _ in range(2)], env_num=2)) as env:
        env.reset()
        with pytest.warns(RuntimeWarning, match=r'env\(s\) \[0, 1\] overflowed .*\(nconmax\).*nconmax=2, njmax=64 per world.*doubled'):
            for _ in range(3):
                obs, reward, terminated, truncated, info = env.step([DRIVE] * 2)
                if any(terminated):
                    break
        assert terminated == [True, True] and info[0]['diverged'] is True
        assert env.runner.world.pack(0).buffers.nconmax >= 4


def test_a_feature_warp_lacks_fails_at_build_naming_it_and_the_slot():
    import mujoco

    from internutopia.core.backend.parts import SlotPart
    from internutopia.core.backend.warp.pack import UnsupportedFeature
    from internutopia.core.backend.warp.world import WarpWorld

    def parts(slot: int) -> list[SlotPart]:
        # An actuator computed by a plugin (MuJoCo's PID controller): MuJoCo Warp runs no plugins.
        spec = mujoco.MjSpec.from_string(
            '<mujoco><extension><plugin plugin="mujoco.pid"><instance name="pid"><config key="kp" value="10"/></instance>'
            '</plugin></extension><worldbody><body name="arm"><joint name="hinge"/><geom size=".1"/></body></worldbody>'
            '<actuator><plugin joint="hinge" plugin="mujoco.pid" instance="pid"/></actuator></mujoco>')
        return [SlotPart(prefix='arm/', spec=spec)]

    world = WarpWorld(SimConfig(backend='warp', device='cpu'), env_num=2, env_offset_size=1.0)
    with pytest.raises(UnsupportedFeature, match=r"env 1 cannot run on the warp backend: .* MuJoCo Warp lacks "
                                                 r"\(Actuator plugins not supported\); run it with SimConfig\(backend='mujoco'\)"):
        world.place({1: 'pid'}, parts)
    assert world.pack(0) is None and world.pack(1) is None and not world.packs


def test_a_user_scene_using_a_feature_warp_lacks_fails_at_reset_naming_the_feature_the_part_and_the_episode(tmp_path):
    from internutopia.core.runner.failures import EPISODE_ATTRIBUTE

    # A swing door driven by MuJoCo's PID actuator plugin: fine on CPU MuJoCo, MuJoCo Warp runs no plugins.
    (tmp_path / 'door.xml').write_text(
        '<mujoco><extension><plugin plugin="mujoco.pid"><instance name="pid"><config key="kp" value="10"/></instance>'
        '</plugin></extension><worldbody><geom type="plane" size="5 5 .1"/><body name="door" pos="2 0 .5">'
        '<joint name="hinge"/><geom type="box" size=".05 .5 .5"/></body></worldbody>'
        '<actuator><plugin joint="hinge" plugin="mujoco.pid" instance="pid"/></actuator></mujoco>')
    door = FiniteStepTaskCfg(max_steps=10, scene_asset_path=str(tmp_path / 'door.xml'), robots=[JetbotRobotCfg()])
    with Env(warp_config([jetbot_cube_task(), door], env_num=2)) as env:
        with pytest.raises(ValueError, match=r"cannot run on the warp backend: its part\(s\) 'scene/' use a MuJoCo feature "
                                             r"MuJoCo Warp lacks \(Actuator plugins not supported\); run it with "
                                             r"SimConfig\(backend='mujoco'\)") as raised:
            env.reset()
        assert getattr(raised.value, EPISODE_ATTRIBUTE) == 1  # the episode it came from: task_configs[1]


@pytest.mark.parametrize('device', ['gpu', 'cuda:x', 'CPU'])
def test_a_bad_device_name_is_refused_naming_the_valid_ones(device):
    with pytest.raises(ValueError, match=r"device must be 'cpu', 'cuda' or 'cuda:N'"):
        SimConfig(backend='warp', device=device)


def test_a_gpu_this_machine_lacks_is_refused_naming_the_devices_it_has():
    import warp

    if warp.get_cuda_device_count() >= 8:
        pytest.skip('this machine has 8 GPUs')
    with pytest.raises(ValueError, match=r"device='cuda:7': this machine has no such device; Warp sees \['cpu'"):
        Env(Config(simulator=SimConfig(backend='warp', device='cuda:7'), env_num=1, task_configs=[jetbot_cube_task()],
                   metrics_save_path='none'))


def test_cameras_draw_the_same_pixels_as_on_the_mujoco_backend():
    # On the Warp backend cameras are drawn by the CPU renderer from the host copy of each slot's state.
    from internutopia_extension.configs.robots.jetbot import jetbot_camera_cfg

    camera = jetbot_camera_cfg.update(resolution=(80, 60), depth=True, camera_params=True)
    task = FiniteStepTaskCfg(max_steps=1000, robots=[JetbotRobotCfg(position=(0.0, 0.0, 0.0), sensors=[camera])],
                             objects=[DynamicCubeCfg(name='cube', position=(0.6, 0.0, 0.1), scale=(0.2, 0.2, 0.2), color=(0.9, 0.1, 0.1))])
    frames = {}
    for backend in ('mujoco', 'warp'):
        config = warp_config([task] * 2, env_num=2, backend=backend)
        config.simulator.rendering_dt = config.simulator.physics_dt
        with Env(config) as env:
            env.reset()
            for _ in range(10):
                obs, *_ = env.step([None, None])
            frames[backend] = [obs[slot]['jetbot']['sensors']['camera'] for slot in range(2)]
            frames[f'{backend} overview'] = env.render(width=160, height=120)
    overview, cpu_overview = frames['warp overview'], frames['mujoco overview']
    assert overview.shape == (120, 160, 3) and np.abs(overview.astype(int) - cpu_overview.astype(int)).mean() < 1.0
    for slot in range(2):
        warp_frame, cpu_frame = frames['warp'][slot], frames['mujoco'][slot]
        assert warp_frame['rgba'].shape == (60, 80, 4) and warp_frame['rgba'].std() > 5.0
        assert np.abs(warp_frame['rgba'].astype(int) - cpu_frame['rgba'].astype(int)).mean() < 1.0
        # Depth agrees where the view is not grazing (the floor near the horizon magnifies the
        # float32 rounding of the Jetbot's pitch: a 1e-4 rad tilt moves a 9 m floor point by decimetres).
        near = cpu_frame['depth'] < 1.0
        assert near.mean() > 0.2
        np.testing.assert_allclose(warp_frame['depth'][near], cpu_frame['depth'][near], rtol=1e-2)
        # The cube's face, 0.5 m ahead of the Jetbot's origin, straight ahead of the camera: red, at its distance.
        expected = 0.5 - warp_frame['camera_params']['pose']['position'][0]
        assert abs(float(np.median(warp_frame['depth'][28:32, 38:42])) - expected) < 0.02 * expected + 0.01
        red, green, blue = warp_frame['rgba'][30, 40, :3].astype(int)
        assert red > green + 40 and red > blue + 40


def test_the_array_api_steps_the_warp_world(env):
    pack = env.runner.world.pack(0)
    before = pack.data.qpos[:, :3].copy()
    out = env.step_arrays({'jetbot': {'move_by_speed': np.tile([0.4, 0.8], (3, 1))}})
    assert out.diverged == () and out.active.all()
    positions = out.obs['jetbot']['position']
    assert positions.shape == (3, 3) and np.all(np.linalg.norm(positions - before, axis=1) > 0)


def test_a_slot_changing_structure_moves_between_warp_packs_and_back():
    # The H1 and Jetbot-with-cube structures of tests/test_warp_backend_agreement.py: no new compile.
    from internutopia_extension.configs.robots.h1 import H1_JOINT_NAMES, H1RobotCfg, move_by_speed_cfg
    from internutopia_extension.robots.h1_locomotion.gait import STANDING_POSE

    H1_STANDING = np.array([STANDING_POSE.get(name, 0.0) for name in H1_JOINT_NAMES])

    h1 = FiniteStepTaskCfg(max_steps=1000, robots=[H1RobotCfg(controllers=[move_by_speed_cfg])])
    tasks = [jetbot_cube_task(), jetbot_cube_task(), h1, jetbot_cube_task()]
    with Env(warp_config(tasks, env_num=2)) as env:
        env.reset()
        jetbots = env.runner.world.pack(0)
        for _ in range(3):
            env.step([DRIVE] * 2)
        slot1 = env.runner.world.slot_state(1)
        obs, _ = env.reset([0])  # slot 0 takes the H1 episode: a second pack
        assert 'h1' in obs[0] and env.runner.world.pack(0) is not jetbots and env.runner.world.pack(1) is jetbots
        for name, value in env.runner.world.slot_state(1).items():
            np.testing.assert_array_equal(value, slot1[name], err_msg=name)
        for _ in range(60):  # a quarter of a second: the walking H1's legs start their first stride
            obs, *_ = env.step([{'h1': {'move_by_speed': [0.5, 0.0, 0.0]}}, DRIVE])
        assert np.abs(obs[0]['h1']['joint_positions'] - H1_STANDING).max() > 0.05
        assert np.all(np.isfinite(obs[1]['jetbot']['position']))
        obs, _ = env.reset([0])  # back to a Jetbot: the parked pack is taken up again, from rest
        assert env.runner.world.pack(0) is jetbots and 'jetbot' in obs[0]
        np.testing.assert_allclose(obs[0]['jetbot']['position'], [0.0, 0.0, 0.0], atol=0.05)


@pytest.mark.xdist_group('ray')  # one Ray cluster at a time (see conftest.py)
def test_ray_runners_step_warp_worlds():
    pytest.importorskip('ray')
    from internutopia.core.config.distribution import RayDistributionCfg

    tasks = [jetbot_cube_task(max_steps=2) for _ in range(4)]
    # One Ray runner: a second would compile the same kernels at the same time on a cold kernel cache.
    with Env(warp_config(tasks, env_num=2).distribute(RayDistributionCfg(proc_num=1))) as env:
        obs, _ = env.reset()
        finished = 0
        # The state lives in the runner's process: no view of it here.
        assert env.array_device == 'cpu'
        with pytest.raises(RuntimeError, match=r"state_arrays\(\) views the world in this process; a Ray-distributed"):
            env.state_arrays()
        while not env.finished:
            obs, _, terminated, _, info = env.step([DRIVE] * env.env_num)
            finished += sum(1 for slot, done in enumerate(terminated) if done and obs[slot] is not None)
            ended = [slot for slot, done in enumerate(terminated) if done]
            if ended:
                env.reset(ended)
        assert finished == 4


def test_without_the_extra_the_error_names_what_to_install(monkeypatch):
    import sys

    from internutopia.core.backend.warp.engine import load_engine

    monkeypatch.setitem(sys.modules, 'mujoco_warp', None)  # as if it were not installed
    with pytest.raises(RuntimeError, match=r"backend='warp'\) needs MuJoCo Warp.*pip install 'internutopia\[warp\]'"):
        load_engine()
