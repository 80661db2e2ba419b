"""Heterogeneous episode queues: different scenes, start poses and objects in one world."""

from __future__ import annotations

import json

import numpy as np
import pytest

from internutopia.core.vec_env import Env
from internutopia.macros import gm
from internutopia_extension.configs.objects import DynamicCubeCfg, VisualCubeCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg, PointNavTaskCfg

TWO_ROOMS = gm.ASSET_PATH + '/scenes/two_rooms.usda'
OFFICE = gm.ASSET_PATH + '/scenes/office.xml'
SCENES = [None, TWO_ROOMS, OFFICE]
DRIVE = {'jetbot': {'move_by_speed': [0.3, 0.4]}}


def mixed_episode(k: int, max_steps: int) -> PointNavTaskCfg:
    """Episode ``k``: scene, start pose and objects all vary with ``k``."""
    objects = []
    if k % 2 == 0:
        objects.append(DynamicCubeCfg(name='cube', position=(-2.0, -2.0 + 0.1 * k, 0.3), scale=(0.15, 0.15, 0.15)))
    if k % 3 == 1:
        objects.append(VisualCubeCfg(name='marker', position=(1.0, 0.5 * (k % 4), 0.05)))
    yaw = 0.3 * k
    return PointNavTaskCfg(goal=(3.0, 3.0, 0.0), max_steps=max_steps, scene_asset_path=SCENES[k % 3],
                           robots=[JetbotRobotCfg(position=(-2.5 + 0.1 * k, -0.2 * (k % 5), 0.0),
                                                  orientation=(np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)))],
                           objects=objects)


def test_mixed_scene_queue_completes_every_episode_exactly_once(make_config, tmp_path):
    n = 14
    lengths = [5 + (7 * k) % 11 for k in range(n)]  # episodes end at different times in different slots
    tasks = [mixed_episode(k, lengths[k]) for k in range(n)]
    results = tmp_path / 'episodes.jsonl'
    env = Env(make_config(tasks, env_num=4, offset=10.0, metrics_save_path=str(results)))
    obs, info = env.reset()
    running = {slot: task for slot, task in enumerate(info)}
    seen_objects = 0
    while not env.finished:
        obs, reward, terminated, truncated, info = env.step([DRIVE] * 4)
        for slot, task in running.items():
            if obs[slot] is None:
                continue
            assert set(obs[slot]['objects']) == {o.name for o in task.objects}
            seen_objects += len(task.objects)
            assert obs[slot]['task']['goal'].tolist() == [3.0, 3.0, 0.0]
        ended = [slot for slot in range(4) if terminated[slot] and obs[slot] is not None]
        for slot in ended:
            assert truncated[slot] and info[slot]['steps'] == lengths[info[slot]['episode_index']]
        if ended:
            new_obs, new_info = env.reset(ended)
            for slot, o, task in zip(ended, new_obs, new_info, strict=True):
                if task is None:
                    running.pop(slot)
                    continue
                running[slot] = task
                np.testing.assert_allclose(o['jetbot']['position'][:2], task.robots[0].position[:2], atol=1e-9)
                for cfg in task.objects:
                    np.testing.assert_allclose(o['objects'][cfg.name]['position'], cfg.position, atol=1e-9)
    assert seen_objects > 0 and env.runner.world.compile_count > 3  # structures really changed
    env.close()
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted(r['episode_index'] for r in records) == list(range(n))
    for r in records:
        k = r['episode_index']
        assert r['scene'] == SCENES[k % 3] and r['steps'] == lengths[k] and r['truncated'] and not r['terminated']
        assert set(r['metrics']) == {'success', 'spl', 'distance_to_goal', 'steps', 'collisions'}
        assert 0 <= r['slot'] < 4 and r['task_type'] == 'PointNavTask'


def snapshot(env, slots):
    return {slot: env.runner.world.slot_state(slot) for slot in slots}


def assert_same_state(before, after):
    for slot, state in before.items():
        assert state.keys() == after[slot].keys()
        for key, value in state.items():
            assert np.array_equal(value, after[slot][key]), (slot, key)


def test_untouched_slots_are_bit_identical_across_a_rebuild(make_config):
    # Slot 1 holds two_rooms (with its free crate), slot 3 a dynamic cube: both have state to carry.
    tasks = [mixed_episode(0, 1000), mixed_episode(1, 1000), mixed_episode(2, 1000), mixed_episode(4, 1000),
             mixed_episode(5, 1000),  # slot 2's next episode: the office instead of empty ground
             mixed_episode(8, 1000)]  # then the office again with a cube: same scene, new objects
    env = Env(make_config(tasks, env_num=4, offset=10.0))
    env.reset()
    for _ in range(60):
        env.step([DRIVE] * 4)
    assert np.any(env.runner.world.slot_state(3)['qvel'] != 0)  # things are moving
    for _ in range(2):  # new structures in slot 2: at most one compile each (none if another slot has it)
        before = snapshot(env, [0, 1, 3])
        controller = env.runner.slot_robots[0]['jetbot'].controllers['move_by_speed']
        compiles = env.runner.world.compile_count
        env.reset([2])
        assert env.runner.world.compile_count <= compiles + 1
        assert_same_state(before, snapshot(env, [0, 1, 3]))
        assert env.runner.slot_robots[0]['jetbot'].controllers['move_by_speed'] is controller
        for _ in range(10):
            env.step([DRIVE] * 4)
    env.close()


def test_same_structure_reset_and_emptying_a_slot_leave_others_alone(make_config):
    tasks = [FiniteStepTaskCfg(max_steps=1000, scene_asset_path=TWO_ROOMS,
                               robots=[JetbotRobotCfg(position=(-2.0 + 0.1 * k, 0.0, 0.0))]) for k in range(5)]
    env = Env(make_config(tasks, env_num=3, offset=10.0))
    env.reset()
    for _ in range(30):
        env.step([DRIVE] * 3)
    before = snapshot(env, [0, 2])
    obs, info = env.reset([1])  # episode 3: same structure, new start pose -> no rebuild
    assert env.runner.world.compile_count == 1
    np.testing.assert_allclose(obs[0]['jetbot']['position'][:2], [-1.7, 0.0], atol=1e-9)
    assert_same_state(before, snapshot(env, [0, 2]))
    for _ in range(5):
        env.step([DRIVE] * 3)
    env.reset([2])  # episode 4
    before = snapshot(env, [0, 2])
    obs, info = env.reset([1])  # the queue is empty: slot 1 becomes empty (it leaves its pack; no compile)
    assert obs == [None] and info == [None] and env.runner.world.compile_count == 1
    assert_same_state(before, snapshot(env, [0, 2]))
    assert env.runner.world.pack(1) is None and 1 not in env.runner.world.pack(0).slots
    out = env.step([DRIVE] * 3)
    assert all(out[k][1] is None for k in (0, 1, 3, 4)) and out[2][1] is True  # empty: nothing runs there
    assert out[0][0] is not None and out[0][2] is not None
    env.close()


def test_tasks_metrics_and_objects_work_across_packs(make_config, tmp_path):
    tasks = [mixed_episode(k, 50).update(goal=(1.0, 0.2 * k, 0.0)) for k in range(4)]
    env = Env(make_config(tasks, env_num=4, offset=10.0, metrics_save_path=str(tmp_path / 'r.jsonl')))
    obs, _ = env.reset()
    world = env.runner.world
    assert len(world.packs) >= 2 and world.pack(0) is not world.pack(3)
    for slot, task in enumerate(tasks):
        assert set(obs[slot]['objects']) == {o.name for o in task.objects}
        expected = np.hypot(*(np.array(task.goal[:2]) - task.robots[0].position[:2]))
        assert obs[slot]['task']['distance_to_goal'] == pytest.approx(expected, abs=1e-6)
    for slot in range(4):  # put every robot 0.1 m short of its goal: all succeed on the next step
        robot = env.runner.slot_robots[slot]['jetbot']
        adr = robot.root_qposadr[slot]
        robot.world.data.qpos[slot, adr:adr + 2] = (0.9, 0.2 * slot)
    obs, reward, terminated, truncated, info = env.step([None] * 4)
    assert terminated == [True] * 4
    for slot in range(4):
        metrics = info[slot]['metrics']
        assert metrics['success'] is True and metrics['distance_to_goal'] == pytest.approx(0.1, abs=1e-3)
        assert metrics['collisions'] == 0 and metrics['steps'] == 1
    env.close()
