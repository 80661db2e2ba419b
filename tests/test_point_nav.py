"""PointNavTask, its reward and metrics on hand-computed trajectories; episodes; results summary."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from internutopia.core.backend.mujoco.scene_info import free_cells
from internutopia.core.backend.mujoco.scene_loader import scene_to_spec
from internutopia.core.config import Config, RewardCfg
from internutopia.core.episodes import FreeSpace, generate_point_nav_episodes, save_episodes_yaml
from internutopia.core.episodes import main as episodes_main
from internutopia.core.results import ResultsWriter
from internutopia.core.vec_env import Env
from internutopia.macros import gm
from internutopia_extension.configs.metrics import CollisionCountMetricCfg, SPLMetricCfg
from internutopia_extension.configs.objects import UsdObjCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import PointNavProgressRewardCfg, PointNavTaskCfg

ROOT = Path(__file__).resolve().parents[1]
Z = 0.0  # the Jetbot rests on the floor at z=0 (its root frame is on the ground)


def nav(goal, start=(0.0, 0.0), **kw):
    return PointNavTaskCfg(goal=goal, robots=[JetbotRobotCfg(position=(*start, Z))], **kw)


def teleport(env, slot, xy):
    """Put the jetbot of ``slot`` at env-local ``xy`` at rest; the next step's task/metrics see exactly ``xy``."""
    runner = env.runner
    robot = runner.slot_robots[slot]['jetbot']
    data = robot.world.data  # the pack holding this slot: (env_num, ...) arrays
    adr, dof = robot.root_qposadr[slot], robot.root_dofadr[slot]
    data.qpos[slot, adr:adr + 3] = robot.base_position((xy[0], xy[1], Z), (1.0, 0.0, 0.0, 0.0))  # chassis above the root frame
    data.qpos[slot, adr + 3:adr + 7] = (1.0, 0.0, 0.0, 0.0)
    data.qvel[slot, dof:dof + 6] = 0.0


def run_trajectories(env, trajectories):
    """Teleport each slot along its trajectory, one point per step; return per-slot step results.

    Observations describe the state after the step's physics, so a teleported robot has moved by
    up to ~1e-4 m (one step of settling) when it is measured: tolerances below allow for that.
    """
    out = {slot: [] for slot in range(env.env_num)}
    for k in range(max(len(t) for t in trajectories)):
        for slot, trajectory in enumerate(trajectories):
            if k < len(trajectory) and slot in env.active_slots:
                teleport(env, slot, trajectory[k])
        obs, reward, terminated, truncated, info = env.step([None] * env.env_num)
        for slot in range(env.env_num):
            if obs[slot] is not None:
                out[slot].append((obs[slot], reward[slot], terminated[slot], truncated[slot], info[slot]))
    return out


def test_metrics_and_reward_on_hand_computed_trajectories(make_config, tmp_path):
    settings = {'scale': 2.0, 'success_bonus': 5.0, 'step_penalty': 0.1}
    tasks = [
        # slot 0: detour, then success: P = 1 + 2 + 0.8 = 3.8, L = 2 (straight line).
        nav((2.0, 0.0, 0.0), reward=PointNavProgressRewardCfg(reward_settings=settings)),
        # slot 1: L given; never gets within 0.3 m; truncated after 4 steps.
        nav((0.0, 3.0, 0.0), start=(0.0, 0.0), max_steps=4, shortest_path_length=3.5),
        # slot 2: success with a given L larger than what it travelled: SPL = L / max(P, L) = 1.
        nav((1.0, 0.0, 0.0), shortest_path_length=1.2, success_distance=0.5),
    ]
    results = tmp_path / 'results.jsonl'
    env = Env(make_config(tasks, env_num=3, metrics_save_path=str(results)))
    obs, _ = env.reset()
    assert obs[0]['task']['distance_to_goal'] == pytest.approx(2.0, abs=1e-5)
    np.testing.assert_array_equal(obs[1]['task']['goal'], [0.0, 3.0, 0.0])
    out = run_trajectories(env, [
        [(0.0, 1.0), (2.0, 1.0), (2.0, 0.2)],
        [(0.0, 0.5), (0.5, 0.5), (0.5, 1.0), (0.5, 1.5)],
        [(0.7, 0.0)],
    ])
    # slot 0
    steps = out[0]
    assert [s[2] for s in steps] == [False, False, True] and not any(s[3] for s in steps)
    d = [2.0, math.sqrt(5.0), 1.0, 0.2]
    expected = [2.0 * (d[k] - d[k + 1]) - 0.1 + (5.0 if k == 2 else 0.0) for k in range(3)]
    np.testing.assert_allclose([s[1] for s in steps], expected, atol=2e-4)
    assert [s[0]['task']['distance_to_goal'] for s in steps] == pytest.approx(d[1:], abs=1e-4)
    metrics = steps[-1][4]['metrics']
    assert metrics['success'] is True and metrics['steps'] == 3
    assert metrics['spl'] == pytest.approx(2.0 / 3.8, abs=1e-4)
    assert metrics['distance_to_goal'] == pytest.approx(0.2, abs=1e-4)
    # slot 1: default reward (scale 1, bonus 1, penalty 0), truncated at max_steps, no success
    steps = out[1]
    assert [s[3] for s in steps] == [False, False, False, True] == [s[2] for s in steps]  # ended by the step limit
    final = math.hypot(0.5, 1.5)
    assert sum(s[1] for s in steps) == pytest.approx(3.0 - final, abs=1e-4)
    metrics = steps[-1][4]['metrics']
    assert metrics == {'success': False, 'spl': 0.0, 'distance_to_goal': pytest.approx(final, abs=1e-4), 'steps': 4,
                       'collisions': 0}
    # slot 2
    metrics = out[2][0][4]['metrics']
    assert metrics['success'] is True and metrics['spl'] == 1.0 and metrics['steps'] == 1
    env.close()
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted((r['episode_index'], r['slot']) for r in lines) == [(0, 0), (1, 1), (2, 2)]
    assert all(r['task_type'] == 'PointNavTask' and r['scene'] is None and r['wall_time_s'] >= 0 for r in lines)


def test_success_on_the_last_allowed_step_terminates(make_config):
    env = Env(make_config([nav((1.0, 0.0, 0.0), max_steps=2)], env_num=1))
    env.reset()
    out = run_trajectories(env, [[(0.2, 0.0), (0.9, 0.0)]])
    (_, _, terminated, truncated, info) = out[0][-1]
    assert terminated and not truncated and info['metrics']['success'] is True
    env.close()


def test_collisions_count_onsets_not_frames(make_config, tmp_path):
    wall = tmp_path / 'wall.xml'
    wall.write_text('<mujoco><worldbody><body name="w"><geom type="box" size="0.05 1 0.25" pos="0 0 0.25"/></body></worldbody></mujoco>')
    task = nav((3.0, 3.0, 0.0), objects=[UsdObjCfg(name='wall', usd_path=str(wall), position=(1.0, 0.0, 0.0))],
               metrics=[CollisionCountMetricCfg(metric_config={'release_steps': 5})], max_steps=10_000)
    env = Env(make_config([task], env_num=1))
    env.reset()
    touching, free = (1.0, 0.0), (0.0, 0.0)  # the chassis overlaps the wall / stands on the floor only
    trajectory = [free] * 5 + [touching] * 10 + [free] * 10 + [touching] * 3 + [free] * 2 + [touching] * 3 + [free] * 6
    run_trajectories(env, [trajectory])
    (metric,) = env.runner.slot_metrics[0]
    # three contact periods, but the gap of 2 steps is shorter than release_steps: two collisions
    assert metric.calc(0) == 2
    env.close()


def test_driving_on_the_floor_is_not_a_collision(make_config):
    env = Env(make_config([nav((3.0, 3.0, 0.0), metrics=[CollisionCountMetricCfg()], max_steps=10_000)], env_num=1))
    env.reset()
    for _ in range(300):
        env.step([{'jetbot': {'move_by_speed': [0.3, 1.0]}}])
    assert env.runner.slot_metrics[0][0].calc(0) == 0
    env.close()


def test_point_nav_config_errors():
    jetbot = JetbotRobotCfg()
    with pytest.raises(ValidationError, match='robots is empty'):
        PointNavTaskCfg(goal=(1, 0, 0))
    with pytest.raises(ValidationError, match="robot_name 'h1'"):
        PointNavTaskCfg(goal=(1, 0, 0), robots=[jetbot], robot_name='h1')
    with pytest.raises(ValidationError, match='reserved'):
        PointNavTaskCfg(goal=(1, 0, 0), robots=[jetbot.update(name='task')])
    with pytest.raises(ValidationError, match="valid keys: \\['scale', 'step_penalty', 'success_bonus'\\]"):
        PointNavTaskCfg(goal=(1, 0, 0), robots=[jetbot], reward=RewardCfg(type='PointNavProgressReward', reward_settings={'bonus': 1}))
    with pytest.raises(ValidationError, match='success_distance'):
        PointNavTaskCfg(goal=(1, 0, 0), robots=[jetbot], success_distance=0)
    with pytest.raises(ValidationError, match="metrics\\[0\\].metric_config robot_name 'g1'"):
        PointNavTaskCfg(goal=(1, 0, 0), robots=[jetbot], metrics=[SPLMetricCfg(metric_config={'robot_name': 'g1'})])


def test_no_reward_gives_zero(make_config):
    env = Env(make_config([nav((2.0, 0.0, 0.0), reward=None)], env_num=1))
    env.reset()
    out = run_trajectories(env, [[(1.0, 0.0)]])
    assert out[0][0][1] == 0.0
    env.close()


SCENES = [None, gm.ASSET_PATH + '/scenes/two_rooms.usda', gm.ASSET_PATH + '/scenes/office.xml']


def test_geodesics_are_kept_within_their_budget_and_change_no_episode(monkeypatch):
    """A scene's free space keeps the geodesics it computed (read-only, up to ``GEODESICS_BYTES``,
    the oldest dropped first); episodes drawn with them kept are the ones drawn without."""
    from internutopia.core import episodes as episodes_module

    space = FreeSpace(None)
    first = space.geodesic(7)
    assert space.geodesic(7)[0] is first[0] and not first[0].flags.writeable and not first[1].flags.writeable
    fresh = FreeSpace(None)
    np.testing.assert_array_equal(fresh.geodesic(7)[0], first[0])
    np.testing.assert_array_equal(fresh.geodesic(7)[1], first[1])
    one = first[0].nbytes + first[1].nbytes
    monkeypatch.setattr(episodes_module, 'GEODESICS_BYTES', 3 * one)
    small = FreeSpace(None)
    for start in range(10):
        small.geodesic(start)
    assert sorted(small._geodesics) == [7, 8, 9]
    monkeypatch.undo()
    # The same episodes with every geodesic computed again (a new space per call) and with them kept.
    cold = []
    for _ in range(2):
        episodes_module._free_spaces.clear()
        cold.append(generate_point_nav_episodes(40, seed=9, scenes=(None,), min_distance=1.0, max_distance=3.0))
    warm = generate_point_nav_episodes(40, seed=9, scenes=(None,), min_distance=1.0, max_distance=3.0)
    assert cold[0] == cold[1] == warm
    assert len(episodes_module._free_space(None, 0.25, 0.3, None)._geodesics) > 20  # (the starts drawn were kept)


def test_generated_episodes_are_valid_and_deterministic():
    episodes = generate_point_nav_episodes(12, seed=3, scenes=SCENES, min_distance=1.0, max_distance=4.0)
    assert episodes == generate_point_nav_episodes(12, seed=3, scenes=SCENES, min_distance=1.0, max_distance=4.0)
    assert episodes != generate_point_nav_episodes(12, seed=4, scenes=SCENES, min_distance=1.0, max_distance=4.0)
    free, cells_of = {}, {}
    for scene in SCENES:
        space = free[scene] = FreeSpace(scene)
        # the scene's free cells as scene_info computes them (bounds reaching past the scene)
        cells_of[scene] = free_cells(scene_to_spec(scene), (*space.lo, *(space.lo + 100)), robot_radius=0.3,
                                     include_dynamic=True) if scene else space.points
    for k, task in enumerate(episodes):
        assert task.scene_asset_path == SCENES[k % 3]
        start, goal = np.array(task.robots[0].position[:2]), np.array(task.goal[:2])
        cells = cells_of[task.scene_asset_path]
        for point in (start, goal):
            assert np.min(np.linalg.norm(cells - point, axis=1)) < 1e-9  # both in free space
        straight = float(np.linalg.norm(goal - start))
        assert straight - 1e-6 <= task.shortest_path_length <= 4.0 + 1e-6
        assert task.shortest_path_length >= 1.0 - 0.1 and not np.allclose(start, goal)
        assert task.objects[0].name == 'goal_marker' and task.objects[0].position[:2] == tuple(goal)
    # two_rooms: a start and goal in different rooms go through the door, longer than the straight line
    space = free[SCENES[1]]
    path = space.shortest_path((-2.0, 2.0), (2.0, 2.0))
    assert np.linalg.norm(np.diff(path, axis=0), axis=1).sum() > 4.0 + 0.5


def test_shipped_config_is_the_generator_output(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    shipped = Config.from_yaml(ROOT / 'configs' / 'jetbot_point_nav.yaml')
    assert len(shipped.task_configs) == 32 and shipped.env_num == 8 and shipped.metrics_save_path != 'none'
    assert {t.model_dump(mode='json')['scene_asset_path'] for t in shipped.task_configs} == {
        None, 'package://internutopia/assets/scenes/two_rooms.usda', 'package://internutopia/assets/scenes/office.xml'}
    regenerated = episodes_main(['--n', '32', '--seed', '0', '--out', str(tmp_path / 'jetbot_point_nav.yaml')])
    assert regenerated == shipped
    assert Config.from_yaml(tmp_path / 'jetbot_point_nav.yaml') == shipped
    # The results file is named after the YAML written, not always after the shipped one.
    other = episodes_main(['--n', '1', '--seed', '0', '--out', str(tmp_path / 'mine.yaml')])
    assert other.metrics_save_path == os.path.join('results', 'mine.jsonl')
    assert save_episodes_yaml(tmp_path / 'list.yaml', shipped.task_configs[:2], env_num=2).env_num == 2


def test_results_summary(tmp_path, capsys):
    writer = ResultsWriter(str(tmp_path / 'r.jsonl'))
    assert writer.summary()['episodes'] == 0
    for success, spl, name in ((True, 0.5, 'a'), (False, 0.0, 'b'), (True, 1.0, 'c')):
        writer.write({'episode_index': 0, 'metrics': {'success': success, 'spl': spl, 'label': name}})
    summary = writer.summary()
    assert summary['episodes'] == 3
    assert summary['success'] == pytest.approx(2 / 3) and summary['spl'] == pytest.approx(0.5)
    assert 'label' not in summary['metrics_mean']
    assert summary['episodes_per_second'] == pytest.approx(3 / summary['wall_time_s'], rel=1e-3)
    writer.close()


def test_close_prints_the_run_summary(make_config, tmp_path, capsys):
    env = Env(make_config([nav((1.0, 0.0, 0.0), max_steps=1)], env_num=1, metrics_save_path=str(tmp_path / 'r.jsonl')))
    env.reset()
    env.step([None])
    env.close()
    line = [line for line in capsys.readouterr().out.splitlines() if 'run summary' in line]
    assert len(line) == 1
    summary = json.loads(line[0].split('run summary: ', 1)[1])
    assert summary['episodes'] == 1 and summary['success'] == 0.0
    env = Env(make_config([nav((1.0, 0.0, 0.0), max_steps=1)], env_num=1))  # metrics_save_path='none'
    env.reset()
    env.step([None])
    env.close()
    assert 'run summary' not in capsys.readouterr().out
    env = Env(make_config([nav((1.0, 0.0, 0.0), max_steps=5)], env_num=1, metrics_save_path='console'))
    env.reset()
    env.close()  # no episode finished: no summary of nothing
    assert 'run summary' not in capsys.readouterr().out


def test_a_straight_paths_length_and_one_poses_rotation_are_numpys_numbers_to_the_bit():
    """The point-nav sampler's shortcuts (a straight path's length, one start pose's root offset
    rotated, in Python floats) give numpy's own numbers, bit for bit, so the episodes a seed
    draws stay the same."""
    from internutopia.core.episodes import path_length
    from internutopia.core.util.math import rotate, rotate_one

    rng = np.random.default_rng(11)
    for _ in range(2000):
        segment = rng.uniform(-6.0, 6.0, (2, 2))
        assert path_length(segment) == float(np.linalg.norm(np.diff(segment, axis=0), axis=1).sum())
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        offset = rng.normal(size=3)
        assert rotate_one(tuple(quat), tuple(offset)) == tuple(rotate(quat, offset).tolist())
    assert path_length([[0.0, 0.0], [3.0, 4.0]]) == 5.0 and path_length(np.zeros((1, 2))) == 0.0
    assert path_length(np.array([[0.0, 0.0], [3.0, 4.0], [3.0, 5.0]])) == 6.0
