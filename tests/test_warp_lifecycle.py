"""A Warp pack over its life (Warp's CPU device here; a GPU with ``INTERNUTOPIA_TEST_WARP_DEVICE=cuda:0``):
slots diverging together, buffers growing under held views, slots leaving the pack, the pack
parked, the env closed.

- Slots that diverge (or overflow a buffer) on one step are put back at their start states with
  one forward pass for them all, with the states one pass per slot gave (a pass per slot ran a
  pass over every world each: 256 diverging slots took 16.9 s on Warp's CPU device).
- ``state_arrays()`` views taken before a buffer overflow follow the steps after it.
- The world of a slot that left a pack idles at rest: its row does not move.
- A parked pack is counted at the bytes it holds on the device and the host.
- ``Env.close()`` frees the device data while the env is still held.

The structure is ``tests/test_warp_backend.py``'s Jetbot with a cube, whose kernels Warp's cache
already holds there.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib.util
import os
import warnings
import weakref

import numpy as np
import pytest

from internutopia.core.backend.arrays import DEVICE_STATE_FIELDS
from internutopia.core.backend.state import ON_REQUEST_FIELDS, OUTPUT_FIELDS, STATE_FIELDS
from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia_extension.configs.objects import DynamicCubeCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

pytestmark = pytest.mark.slow
HAS_WARP = importlib.util.find_spec('mujoco_warp') is not None
needs_warp = pytest.mark.skipif(not HAS_WARP, reason="the warp extra is not installed (pip install 'internutopia[warp]'; Python >= 3.11)")
WARP_DEVICE = os.environ.get('INTERNUTOPIA_TEST_WARP_DEVICE', 'cpu')
DRIVE = {'jetbot': {'move_by_speed': [0.4, 0.8]}}
BACKENDS = ['mujoco', pytest.param('warp', marks=needs_warp)]


def jetbot_cube_task(max_steps: int = 1000, x: float = 0.0) -> FiniteStepTaskCfg:
    return FiniteStepTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg(position=(x, 0.0, 0.0))],
                             objects=[DynamicCubeCfg(name='cube', position=(x + 0.3, 0.0, 0.05), scale=(0.1, 0.1, 0.1))])


def config(tasks, env_num: int, backend: str = 'warp', **kw) -> Config:
    kw.setdefault('metrics_save_path', 'none')
    sim = SimConfig(physics_dt=1 / 240, backend=backend, device=WARP_DEVICE if backend == 'warp' else None)
    return Config(simulator=sim, env_num=env_num, env_offset_size=5.0, task_configs=list(tasks), **kw)


def assert_same(got, expected, backend: str, err_msg: str = '') -> None:
    """Equal to the bit, but on a GPU (MuJoCo Warp's atomic sums there): to 1e-6."""
    if backend == 'warp' and WARP_DEVICE != 'cpu':
        np.testing.assert_allclose(got, expected, rtol=0.0, atol=1e-6, err_msg=err_msg)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=err_msg)


@pytest.mark.parametrize('backend', BACKENDS)
def test_slots_diverging_on_one_step_are_restored_with_one_forward_pass_as_one_at_a_time(backend):
    tasks = [jetbot_cube_task(max_steps=50, x=0.05 * k) for k in range(8)]
    with Env(config(tasks, 4, backend)) as together, Env(config(tasks, 4, backend)) as alone:
        ends = alone.runner.ends
        # The restore as it was: each slot's start state, then its own forward pass.
        ends.restore_start_states = lambda slots: [type(ends).restore_start_states(ends, [s]) for s in slots]
        forwards: list[list[int]] = []
        world_forward = together.runner.world.forward
        together.runner.world.forward = lambda slots=None: forwards.append(list(slots)) or world_forward(slots)
        for env in (together, alone):
            env.reset()
            for _ in range(3):
                env.step([DRIVE] * 4)
            env.runner.world.pack(0).data.qvel[[0, 1, 3], :] = 1e30  # three slots blow up on the next step
        forwards.clear()
        got = together.step([DRIVE] * 4)
        expected = alone.step([DRIVE] * 4)
        assert forwards == [[0, 1, 3]]  # one pass for the three (one each before)
        assert [i.get('diverged', False) for i in got[4]] == [True, True, False, True]
        assert got[0][2] is not None and got[1] == expected[1]
        for name, value in together.runner.world.slot_state(0).items():
            assert np.all(np.isfinite(value)), name
        together.reset([0, 1, 3])  # the next episodes run on from their start states
        alone.reset([0, 1, 3])
        for _ in range(3):
            got = together.step([DRIVE] * 4)[0]
            expected = alone.step([DRIVE] * 4)[0]
        for slot in range(4):
            assert_same(got[slot]['jetbot']['position'], expected[slot]['jetbot']['position'], backend, f'slot {slot}')
            for name, value in together.runner.world.slot_state(slot).items():
                assert_same(value, alone.runner.world.slot_state(slot)[name], backend, f'slot {slot} {name}')


@needs_warp
def test_state_views_taken_before_a_buffer_overflow_follow_the_steps_after_it(monkeypatch):
    from internutopia.core.backend.warp import pack as warp_pack
    from internutopia.core.backend.warp.buffers import Buffers

    # Room for 4 contacts per world: the first steps overflow, and the buffers grow (a new Data).
    monkeypatch.setattr(warp_pack, 'size_buffers', lambda model: Buffers(nconmax=4, njmax=64))
    with Env(config([jetbot_cube_task() for _ in range(12)], 2)) as env:
        env.reset()
        pack = env.runner.world.pack(0)
        (block,) = env.state_arrays(DEVICE_STATE_FIELDS, array_backend='warp')
        held = {name: array for name, array in block.arrays.items() if array.size}
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)  # the overflows' warnings
            for _ in range(8):
                terminated = env.step([DRIVE] * 2)[2]
                ended = [slot for slot, done in enumerate(terminated) if done]
                if ended:
                    env.reset(ended)
            env.step([DRIVE] * 2)
        assert pack.buffers.nconmax > 4  # grown: MuJoCo Warp's Data was made anew
        for name, array in held.items():
            assert array.ptr == getattr(pack.wdata, name).ptr, name  # the same device memory
            host = getattr(pack.data, name)
            np.testing.assert_allclose(array.numpy().reshape(host.shape), host, rtol=1e-6, atol=1e-6, err_msg=name)
        assert np.abs(held['qpos'].numpy()[:, :3]).max() > 0.01  # the views show the driven Jetbots


@needs_warp
def test_the_world_of_a_slot_that_left_a_pack_idles_at_rest():
    with Env(config([jetbot_cube_task() for _ in range(3)], 2)) as env:
        env.reset()
        pack = env.runner.world.pack(0)
        for _ in range(10):
            env.step([DRIVE] * 2)
        env.reset([0])  # the third episode
        for _ in range(10):
            env.step([DRIVE] * 2)
        obs, _ = env.reset([0])  # the queue is empty: slot 0 leaves the pack, driving
        assert obs[0] is None and env.runner.world.pack(0) is None and pack.slots.tolist() == [1]
        left = {name: getattr(pack.data, name)[0].copy() for name in ('qpos', 'qvel', 'ctrl', 'qfrc_applied', 'xfrc_applied')}
        np.testing.assert_array_equal(left['qpos'], pack.model.qpos0)  # at rest, no controls or applied forces
        assert not left['qvel'].any() and not left['ctrl'].any() and not left['qfrc_applied'].any() and not left['xfrc_applied'].any()
        driven = pack.data.qpos[1, :3].copy()
        for _ in range(30):
            env.step([None, DRIVE])
        for name, value in left.items():  # the row stays put (it drove 0.085 m in 60 steps before)
            np.testing.assert_array_equal(getattr(pack.data, name)[0], value, err_msg=name)
        assert np.linalg.norm(pack.data.qpos[1, :3] - driven) > 0.01  # the slot still held drives on
        obs, *_ = env.step([None, DRIVE])
        assert obs[0] is None and np.all(np.isfinite(obs[1]['jetbot']['position']))


def _array_bytes(*roots) -> int:
    """Bytes of every distinct Warp array reachable from ``roots`` through attributes."""
    import warp

    seen: set[int] = set()
    total = 0
    todo = list(roots)
    while todo:
        value = todo.pop()
        if isinstance(value, warp.array):
            if value.ptr and value.ptr not in seen:
                seen.add(value.ptr)
                total += value.capacity
        elif dataclasses.is_dataclass(value):
            todo.extend(vars(value).values())
    return total


@needs_warp
def test_a_parked_pack_is_counted_at_the_bytes_it_holds_on_the_device_and_the_host():
    with Env(config([jetbot_cube_task() for _ in range(256)], 256)) as env:
        env.reset()
        env.step([DRIVE] * 256)
        world = env.runner.world
        pack = world.pack(0)
        device = _array_bytes(pack.wdata, pack.wmodel, pack._diverged)
        names = (*STATE_FIELDS, *OUTPUT_FIELDS, *ON_REQUEST_FIELDS, *pack.data.extra_names())
        host = sum(array.nbytes for array in map(pack.data.bound, names) if array is not None)
        counted = world.parked_pack_bytes(pack)
        # Contacts and constraint rows for every world: about 8 MiB here, four times the CPU estimate.
        assert device > 4 * 2**20
        assert counted == pytest.approx(device + host, rel=0.03)


@needs_warp
def test_closing_the_env_frees_the_device_data_while_the_env_is_still_held():
    with Env(config([jetbot_cube_task() for _ in range(4)], 2)) as env:
        env.reset()
        env.step([DRIVE] * 2)
        pack = env.runner.world.pack(0)
        alive = {name: weakref.ref(obj) for name, obj in
                 (('wdata', pack.wdata), ('wmodel', pack.wmodel), ('qpos', pack.wdata.qpos), ('efc.J', pack.wdata.efc.J))}
        del pack
    assert env is not None  # still held by the caller (robots and controllers refer to the pack)
    assert [name for name, ref in alive.items() if ref() is not None] == []  # freed at close, no gc needed
    gc.collect()
    assert [name for name, ref in alive.items() if ref() is not None] == []
