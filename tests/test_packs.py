"""Slots of one structure share a pack (one model, one ``mujoco.batch.Batch``) and keep the contract."""

from __future__ import annotations

import mujoco
import numpy as np

from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

PILLAR = ('<mujoco><worldbody><geom type="plane" size="0 0 1"/>'
          '<geom name="pillar" type="cylinder" size="0.1 0.5" pos="2 2 0.5"/></worldbody></mujoco>')


def jetbot_tasks(count, **task):
    return [FiniteStepTaskCfg(max_steps=10_000, robots=[JetbotRobotCfg()], **task)] * count


def test_one_pack_steps_every_slot_with_its_own_command(make_config):
    env = Env(make_config(jetbot_tasks(66), env_num=64, offset=1.0))
    obs, _ = env.reset()
    world = env.runner.world
    assert list(world.packs) == [world.slot_keys[0]] and np.array_equal(world.pack(0).slots, np.arange(64))
    assert world.pack(0).batch.nthread == world.threads
    speeds = np.linspace(-0.3, 0.3, 64)
    for _ in range(240):
        obs, *_ = env.step([{'jetbot': {'move_by_speed': [float(v), 0.0]}} for v in speeds])
    x = np.array([o['jetbot']['position'][0] for o in obs])
    assert np.corrcoef(x, speeds)[0, 1] > 0.99, 'each slot must get its own command'
    fast = np.abs(speeds) > 0.05
    assert np.all(np.sign(x[fast]) == np.sign(speeds[fast]))
    heights = np.array([o['jetbot']['position'][2] for o in obs])
    assert np.all(np.abs(heights - 0.035) < 0.01), 'every slot stands on its own ground'
    env.close()


def test_a_pack_steps_exactly_as_one_mjdata_per_slot(make_config):
    """The batch is bit-identical to stepping each slot's own MjData with mj_step."""
    env = Env(make_config(jetbot_tasks(3), env_num=3, offset=1.0))
    env.reset()
    pack = env.runner.world.pack(0)
    actions = [{'jetbot': {'move_by_speed': [0.1 * (k + 1), 0.5 - 0.3 * k]}} for k in range(3)]
    for _ in range(20):
        env.step(actions)
    twins = []
    for slot in range(3):  # a plain MjData per slot, from the slot's state now
        twin = mujoco.MjData(pack.model)
        pack.batch.get_data(slot, twin)
        twins.append(twin)
    for _ in range(50):
        env.step(actions)
        for slot, twin in enumerate(twins):
            twin.ctrl[:] = pack.data.ctrl[slot]
            mujoco.mj_step(pack.model, twin)
    for slot, twin in enumerate(twins):
        np.testing.assert_array_equal(pack.data.qpos[slot], twin.qpos)
        np.testing.assert_array_equal(pack.data.qvel[slot], twin.qvel)
    env.close()


def test_a_new_structure_touches_no_other_slot_and_compiles_once(make_config, tmp_path):
    scene = tmp_path / 'pillar.xml'
    scene.write_text(PILLAR)
    pillar = jetbot_tasks(2, scene_asset_path=str(scene))
    tasks = jetbot_tasks(16) + [pillar[0]] + jetbot_tasks(1) + [pillar[1]]
    env = Env(make_config(tasks, env_num=16, offset=1.0))
    env.reset()
    for _ in range(50):
        env.step([{'jetbot': {'move_by_speed': [0.2, 1.0]}}] * 16)
    world = env.runner.world
    plain = world.pack(0)
    before = {slot: world.slot_state(slot) for slot in range(16)}
    compiles = world.compile_count
    env.reset([10])  # the pillar scene: a new pack, one compile
    assert world.compile_count == compiles + 1 and len(world.packs) == 2
    assert world.pack(10).model.geom('scene/pillar').id >= 0 and world.pack(0) is plain
    assert 10 not in plain.slots and list(world.pack(10).slots) == [10]
    for slot in range(16):
        if slot != 10:
            for key, value in world.slot_state(slot).items():
                np.testing.assert_array_equal(value, before[slot][key])
    env.reset([10])  # back to the plain structure: its pack takes the slot back, the pillar pack goes
    assert list(world.packs) == [world.slot_keys[0]] and 10 in plain.slots
    env.reset([10])  # the pillar again: its model was kept, so no compile
    assert world.compile_count == compiles + 1
    times = {float(pack.data.time[slot]) for pack in world.packs.values() for slot in pack.slots}
    env.step([None] * 16)
    assert len(times) == 1 and times == {world.time - world.sim.physics_dt}
    assert {float(pack.data.time[slot]) for pack in world.packs.values() for slot in pack.slots} == {world.time}
    env.close()


def test_a_forward_pass_of_a_few_slots_on_the_calling_thread_is_the_batchs_bit_for_bit(make_config):
    """Up to INLINE_FORWARD_SLOTS slots run their forward pass on the calling thread (a reset's,
    without waking the pool); derived fields (sensors, on-request body poses) and the state are
    what the batch's own forward pass gives."""
    from internutopia.core.backend.mujoco.pack import INLINE_FORWARD_SLOTS

    count = INLINE_FORWARD_SLOTS + 2
    env = Env(make_config(jetbot_tasks(count), env_num=count, offset=1.0))
    env.reset()
    actions = [{'jetbot': {'move_by_speed': [0.1 * (k + 1), 0.4 - 0.2 * k]}} for k in range(count)]
    for _ in range(30):
        env.step(actions)
    pack = env.runner.world.pack(0)
    xpos = pack.field('xpos')
    rng = np.random.default_rng(3)
    pack.data.qpos[:, :3] += rng.normal(0.0, 0.05, (count, 3))  # a written state: derived fields are stale
    pack.data.qvel[:] += rng.normal(0.0, 0.1, pack.data.qvel.shape)
    before = pack.batch.state.copy()
    few = np.array([1, 3])
    pack.forward(few)  # inline
    inline = {'sensordata': pack.data.sensordata[few].copy(), 'xpos': xpos[few].copy()}
    assert not np.array_equal(inline['xpos'], np.zeros_like(inline['xpos']))
    np.testing.assert_array_equal(pack.batch.state, before)  # a forward pass changes no state
    pack.batch.step(few, nstep=2)  # other derived fields (of the state after the first substep)
    assert not np.array_equal(xpos[few], inline['xpos'])
    pack.batch.state[:] = before
    pack.batch.forward(few)  # the pool's
    np.testing.assert_array_equal(pack.data.sensordata[few], inline['sensordata'])
    np.testing.assert_array_equal(xpos[few], inline['xpos'])
    assert not pack.data.sensordata.flags.writeable and not xpos.flags.writeable  # still read-only to readers
    many = np.arange(count)
    assert len(many) > INLINE_FORWARD_SLOTS
    pack.batch.step(few, nstep=2)
    pack.batch.state[:] = before
    pack.forward(many)  # the pool's, through the same call
    np.testing.assert_array_equal(xpos[few], inline['xpos'])
    env.close()
