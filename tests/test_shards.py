"""A world split into shards (stepped in parallel threads) keeps the grid and the contract."""

from __future__ import annotations

import math

import numpy as np
import pytest

from internutopia.core.backend.mujoco.world import MAX_SLOTS_PER_SHARD, shard_layout
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


@pytest.mark.parametrize('env_num, threads', [(1, None), (7, None), (16, 2), (62, 2), (64, 2), (64, 1), (100, 3)])
def test_layout_is_contiguous_balanced_and_small_enough(env_num, threads):
    shards = shard_layout(env_num, threads)
    assert np.array_equal(np.concatenate(shards), np.arange(env_num))
    assert all(len(s) <= MAX_SLOTS_PER_SHARD for s in shards)
    if threads:
        assert len(shards) % threads == 0 or len(shards) == env_num
    assert max(map(len, shards)) - min(map(len, shards)) <= 1


def jetbot_env(make_config, env_num, **task):
    tasks = [FiniteStepTaskCfg(max_steps=10_000, robots=[JetbotRobotCfg()], **task)] * (env_num + 2)
    return Env(make_config(tasks, env_num=env_num, offset=1.0))


def test_sharded_world_keeps_grid_alignment_and_slot_actions(make_config):
    env = jetbot_env(make_config, 64)
    world = env.runner.world
    assert len(world.shards) == len(shard_layout(64)) >= 2
    obs, _ = env.reset()
    speeds = np.linspace(-0.3, 0.3, 64)
    for _ in range(240):
        obs, *_ = env.step([{'jetbot': {'move_by_speed': [float(v), 0.0]}} for v in speeds])
    x = np.array([o['jetbot']['position'][0] for o in obs])
    assert np.corrcoef(x, speeds)[0, 1] > 0.99, 'each slot must get its own command'
    fast = np.abs(speeds) > 0.05
    assert np.all(np.sign(x[fast]) == np.sign(speeds[fast]))
    cols = math.ceil(math.sqrt(64))
    heights = np.array([o['jetbot']['position'][2] for o in obs])
    assert np.all(np.abs(heights - 0.035) < 0.01), 'every slot (bit 31 too) stands on its own ground'
    for slot in (0, 31, 32, 63):
        shard = world.shard(slot)
        body = env.runner.slot_robots[slot]['jetbot'].base_body_id[slot]
        world_xy = shard.data.xpos[body][:2]
        np.testing.assert_allclose(world_xy - [(slot // cols) * 1.0, (slot % cols) * 1.0], obs[slot]['jetbot']['position'][:2])
    env.close()


def test_rebuild_touches_only_the_shard_of_the_changed_slot(make_config, tmp_path):
    scene = tmp_path / 'pillar.xml'
    scene.write_text('<mujoco><worldbody><geom type="plane" size="0 0 1"/>'
                     '<geom name="pillar" type="cylinder" size="0.1 0.5" pos="2 2 0.5"/></worldbody></mujoco>')
    tasks = [FiniteStepTaskCfg(max_steps=10_000, robots=[JetbotRobotCfg()])] * 64
    tasks.append(FiniteStepTaskCfg(max_steps=10_000, robots=[JetbotRobotCfg()], scene_asset_path=str(scene)))
    env = Env(make_config(tasks, env_num=64, offset=1.0))
    env.reset()
    for _ in range(50):
        env.step([{'jetbot': {'move_by_speed': [0.2, 1.0]}}] * 64)
    world = env.runner.world
    models = [shard.model for shard in world.shards]
    before = {slot: world.slot_state(slot) for slot in range(64)}
    compiles = world.compile_count
    env.reset([40])
    changed = world.shard_of[40]
    assert world.compile_count == compiles + 1
    for shard in world.shards:
        assert (shard.model is models[shard.index]) == (shard.index != changed)
    for slot in range(64):
        if slot == 40:
            continue
        for key, value in world.slot_state(slot).items():
            np.testing.assert_array_equal(value, before[slot][key])
    assert times_agree(world)
    env.step([None] * 64)
    assert times_agree(world)
    env.close()


def times_agree(world) -> bool:
    return len({float(shard.data.time) for shard in world.shards}) == 1


def test_single_model_views_refuse_a_sharded_world(make_config):
    env = jetbot_env(make_config, 16)
    env.reset()
    if len(env.runner.world.shards) > 1:
        with pytest.raises(AttributeError, match='shards'):
            env.runner.world.model
    env.close()
