"""The vec_env contract of docs/contract.md, clause by clause, on the jetbot."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from internutopia.core.grid import slot_origins
from internutopia.core.vec_env import Env
from internutopia_extension.configs.metrics import TraveledDistanceMetricCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg, SingleInferenceTaskCfg

DRIVE = {'jetbot': {'move_by_speed': [0.3, 0.0]}}


def jetbot_task(max_steps=1000, x=0.0, y=0.0, **kw):
    return FiniteStepTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg(position=(x, y, 0.0))], **kw)


def world_positions(env):
    """Each slot's robot in the world frame: its slot's grid origin plus its env-local position."""
    runner = env.runner
    (group,) = runner.robot_groups.values()
    slots = np.arange(runner.env_num)
    return runner.world.origins + group.poses(slots)[0]


@pytest.mark.parametrize('env_num', [1, 2, 3, 4, 8])
def test_grid_is_near_square_with_env_local_positions(make_config, env_num):
    offset = 3.0
    env = Env(make_config([jetbot_task(x=0.25, y=-0.5)] * env_num, env_num=env_num, offset=offset))
    obs, _ = env.reset()
    cols = math.ceil(math.sqrt(env_num))
    expected = np.array([[(i // cols) * offset, (i % cols) * offset, 0.0] for i in range(env_num)])
    np.testing.assert_allclose(slot_origins(env_num, offset), expected)
    world = world_positions(env)
    for i in range(env_num):
        np.testing.assert_allclose(obs[i]['jetbot']['position'][:2], [0.25, -0.5], atol=1e-6)
        np.testing.assert_allclose(world[i][:2], expected[i][:2] + [0.25, -0.5], atol=1e-6)
    side = np.ptp(expected[:, :2], axis=0).max() if env_num > 1 else 0.0
    assert side <= offset * math.sqrt(env_num)
    env.close()


@pytest.mark.parametrize('env_num', [1, 2, 3, 4, 8])
def test_reset_alignment_and_none_padding(make_config, env_num):
    tasks = [jetbot_task(max_steps=2 + i) for i in range(env_num + 1)]
    env = Env(make_config(tasks, env_num=env_num))
    obs, info = env.reset()
    assert len(obs) == len(info) == env_num
    assert [t.max_steps for t in info] == [2 + i for i in range(env_num)]
    # Later reset without a list = all slots; only one episode remains, so slot 0 gets it.
    obs, info = env.reset()
    assert len(obs) == env_num and info[0].max_steps == 2 + env_num and obs[0] is not None
    assert all(o is None for o in obs[1:]) and all(i is None for i in info[1:])
    step = env.step([DRIVE] * env_num)
    obs, reward, terminated, truncated, info = step
    for values in step:
        assert len(values) == env_num
    # Empty slots: None everywhere but terminated, which is True (no episode runs there), so an
    # InternUtopia loop's all(terminated) sees that nothing runs.
    for values in (obs, reward, truncated, info):
        assert all(v is None for v in values[1:])
    assert all(t is True for t in terminated[1:])
    assert obs[0] is not None and isinstance(reward[0], float) and terminated[0] is False
    env.close()


def test_reset_list_order_and_queue_edge_case(make_config):
    tasks = [jetbot_task(max_steps=10 + i) for i in range(5)]
    env = Env(make_config(tasks, env_num=4))
    env.reset()
    obs, info = env.reset([3, 0])
    assert info[0].max_steps == 14
    assert obs[0] is not None and obs[1] is None and info[1] is None
    assert env.runner.episodes[3].index == 4 and env.runner.episodes[0] is None
    _, _, _, _, step_info = env.step([None] * 4)
    assert step_info[0] is None and step_info[3]['episode_index'] == 4
    env.close()


def test_a_reset_without_observing_starts_the_same_episodes_and_observers_still_see_them(make_config):
    """``reset(observe=False)`` (the vector envs' array path) builds no per-slot dicts: the same
    episodes start, their observations are there as arrays, and an observer still gets the dicts."""
    tasks = [jetbot_task(max_steps=10 + i, x=0.1 * i) for i in range(6)]
    env = Env(make_config(tasks, env_num=4))
    obs, info = env.reset(observe=False)
    assert obs == [None] * 4 and [task.max_steps for task in info] == [10, 11, 12, 13]
    arrays = env.runner.observe_arrays(np.arange(4))
    dicts = env.get_observations()
    for slot in range(4):
        np.testing.assert_array_equal(arrays['jetbot']['position'][slot], dicts[slot]['jetbot']['position'])
    assert arrays['jetbot']['position'][3][0] == pytest.approx(0.3)

    class Watcher:
        def __init__(self) -> None:
            self.resets: list[tuple[list[int], list]] = []

        def on_reset(self, slots, obs, info):
            self.resets.append((slots, obs))

        def on_step(self, action, result):
            pass

        def on_close(self):
            pass

    watcher = Watcher()
    env.add_observer(watcher)
    _, info = env.reset([2], observe=False)
    assert info[0].max_steps == 14
    (slots, seen), = watcher.resets
    assert slots == [2] and seen[0]['jetbot']['position'][0] == pytest.approx(0.4)
    env.close()


@pytest.mark.parametrize('bad, match', [
    ([4], 'out of range.*0..3'), ([-1], 'out of range'), ([1, 1], 'more than once'), (['a'], 'int env ids'),
    ([1.0], 'int env ids'), (3, 'list of env ids'), ([True], 'int env ids'),
])
def test_bad_reset_lists_change_nothing(make_config, bad, match):
    env = Env(make_config([jetbot_task()] * 6, env_num=4))
    env.reset()
    env.step([DRIVE] * 4)
    before = [env.runner.world.slot_state(i) for i in range(4)]
    episodes = list(env.runner.episodes)
    with pytest.raises(ValueError, match=match):
        env.reset(bad)
    assert env.runner.episodes == episodes and len(env.runner.queue) == 2
    for i in range(4):
        for key, value in env.runner.world.slot_state(i).items():
            np.testing.assert_array_equal(value, before[i][key])
    env.close()


@pytest.mark.parametrize('action, match', [
    ([DRIVE], 'list of 2 entries'),
    (DRIVE, 'list of 2 entries'),
    ([DRIVE, {'jetbot': {'fly': [1]}}], r"unknown controller 'fly'.*'move_along_path'.*'move_by_speed'"),
    ([DRIVE, {'jetbot': {'move_by_speed': [float('nan'), 0]}}], 'finite'),
    ([DRIVE, {'jetbot': {'move_by_speed': [1, 2, 3]}}], 'shape'),
    ([DRIVE, {'jetbot': {'move_to_point': ['x']}}], 'numbers'),
    ([DRIVE, 'go'], 'must be a dict'),
])
def test_bad_actions_raise_before_stepping(make_config, action, match):
    env = Env(make_config([jetbot_task()] * 2, env_num=2))
    env.reset()
    env.step([DRIVE] * 2)
    before = [env.runner.world.slot_state(i) for i in range(2)]
    time_before, steps_before = env.runner.world.time, env.runner.steps.copy()
    with pytest.raises(ValueError, match=match):
        env.step(action)
    assert env.runner.world.time == time_before
    np.testing.assert_array_equal(env.runner.steps, steps_before)
    for i in range(2):
        for key, value in env.runner.world.slot_state(i).items():
            np.testing.assert_array_equal(value, before[i][key])
    env.close()


def test_actions_for_inactive_slots_are_ignored(make_config):
    env = Env(make_config([jetbot_task(max_steps=1), jetbot_task(max_steps=50)], env_num=3))
    env.reset()
    out = env.step([DRIVE, DRIVE, {'nonsense': 1}])  # slot 2 is empty: ignored
    assert out[3][0] is True and out[0][2] is None
    out = env.step([{'nonsense': 1}, DRIVE, None])  # slot 0 is done: ignored
    assert out[0][0] is None and out[0][1] is not None
    env.close()


def test_terminal_step_reports_real_obs_reward_and_metrics(make_config, tmp_path):
    path = tmp_path / 'results.jsonl'
    task = jetbot_task(max_steps=240, metrics=[TraveledDistanceMetricCfg()])
    env = Env(make_config([task, task], env_num=1, metrics_save_path=str(path)))
    env.reset()
    for _step in range(240):
        obs, reward, terminated, truncated, info = env.step([DRIVE])
    # A step limit ended it: terminated (the episode ended) and truncated (by a step limit).
    assert truncated == [True] and terminated == [True] and reward == [0.0]
    assert obs[0]['jetbot']['position'][0] > 0.05
    distance = info[0]['metrics']['traveled_distance_metric']
    assert distance == pytest.approx(np.linalg.norm(obs[0]['jetbot']['position'][:2] - [0, 0]), rel=0.15)
    assert env.step([DRIVE]) == ([None], [None], [True], [None], [None])  # done: no episode runs
    env.reset()
    for _ in range(240):
        env.step([None])
    env.close()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r['episode_index'] for r in records] == [0, 1] and records[0]['slot'] == 0
    assert records[0]['metrics']['traveled_distance_metric'] == pytest.approx(distance)
    assert records[1]['metrics']['traveled_distance_metric'] < 0.01 and records[0]['steps'] == 240


def test_console_results(make_config, capsys):
    env = Env(make_config([jetbot_task(max_steps=1)], env_num=1, metrics_save_path='console'))
    env.reset()
    env.step([None])
    env.close()
    assert 'episode finished' in capsys.readouterr().out


def test_one_task_object_reused_for_many_episodes(make_config):
    task = jetbot_task(max_steps=3, x=0.1)
    env = Env(make_config([task] * 5, env_num=2))
    seen = []
    obs, info = env.reset()
    seen += [i for i in info if i is not None]
    while not env.finished:
        _, _, terminated, truncated, _ = env.step([DRIVE] * 2)
        done = [i for i in range(2) if truncated[i]]
        if done:
            _, info = env.reset(done)
            seen += [i for i in info if i is not None]
    assert len(seen) == 5 and all(i == task and i is not task for i in seen)
    assert len({id(i) for i in seen}) == 5
    env.close()


def test_slots_never_interact(make_config):
    offset = 1.0
    env = Env(make_config([jetbot_task(max_steps=5000)] * 2, env_num=2, offset=offset))
    env.reset()
    for _ in range(240):  # let both robots settle on their wheels
        env.step([None, None])
    idle_before = env.runner.world.slot_state(1)
    # Drive slot 0 straight through slot 1's cell (slot 1 sits at +y = offset).
    env.step([{'jetbot': {'rotate': [[math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)]]}}, None])
    for _ in range(400):
        env.step([{'jetbot': {'rotate': [[math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)]]}}, None])
    for _ in range(1000):
        env.step([{'jetbot': {'move_by_speed': [0.5, 0.0]}}, None])
    world = world_positions(env)
    assert world[0][1] > offset + 0.3, 'slot 0 should have crossed into slot 1'
    idle_after = env.runner.world.slot_state(1)
    np.testing.assert_allclose(idle_after['qpos'][:7], idle_before['qpos'][:7], atol=1e-4)
    assert np.abs(idle_after['qvel']).max() < 1e-2
    env.close()


def test_same_structure_reset_writes_state_without_recompiling(make_config):
    env = Env(make_config([jetbot_task(max_steps=20, x=0.0), jetbot_task(max_steps=20), jetbot_task(max_steps=20, x=1.0)], env_num=2))
    env.reset()
    compiles = env.runner.world.compile_count
    for _ in range(20):
        env.step([DRIVE, DRIVE])
    other = env.runner.world.slot_state(1)
    obs, _ = env.reset([0])
    assert env.runner.world.compile_count == compiles
    np.testing.assert_allclose(obs[0]['jetbot']['position'][:2], [1.0, 0.0], atol=1e-9)
    for key, value in env.runner.world.slot_state(1).items():
        np.testing.assert_array_equal(value, other[key])
    env.close()


def test_new_structure_recompiles_and_keeps_other_slots_exactly(make_config, tmp_path):
    scene = tmp_path / 'box_scene.xml'
    scene.write_text('<mujoco><worldbody><geom name="floor" type="plane" size="0 0 1"/>'
                     '<geom name="box" type="box" size="0.2 0.2 0.2" pos="1.5 0 0.2"/></worldbody></mujoco>')
    path = [[(2.0, 0.0, 0.0), (2.0, 2.0, 0.0)]]
    tasks = [jetbot_task(max_steps=500), jetbot_task(max_steps=500), jetbot_task(max_steps=50, scene_asset_path=str(scene))]
    env = Env(make_config(tasks, env_num=2))
    env.reset()
    for _ in range(150):
        env.step([{'jetbot': {'move_along_path': path}}] * 2)
    runner = env.runner
    (group,) = runner.robot_groups.values()
    controller = group.controllers['move_along_path']
    kept_state = runner.world.slot_state(1)
    kept_controller = (controller.current_index[1], controller.current_point[1].copy(), controller.points[1].copy())
    compiles = runner.world.compile_count
    obs, info = env.reset([0])
    assert runner.world.compile_count == compiles + 1
    assert info[0].scene_asset_path == str(scene)
    assert runner.world.pack(0).model.geom('scene/box').id >= 0
    assert runner.world.pack(0) is not runner.world.pack(1)
    for key, value in runner.world.slot_state(1).items():
        np.testing.assert_array_equal(value, kept_state[key])
    assert runner.slot_robots[1]['jetbot'] is group  # slot 1 kept its group, so its controller state
    controller = group.controllers['move_along_path']
    assert controller.current_index[1] == kept_controller[0]
    np.testing.assert_array_equal(controller.current_point[1], kept_controller[1])
    np.testing.assert_array_equal(controller.points[1], kept_controller[2])
    # Slot 1 carries on exactly as an untouched twin would: it keeps following its path.
    for _ in range(300):
        obs, *_ = env.step([{'jetbot': {'move_by_speed': [0.0, 0.0]}}, {'jetbot': {'move_along_path': path}}])
    assert obs[1]['jetbot']['controllers']['move_along_path']['current_index'] >= kept_controller[0]
    env.close()


def test_default_scene_is_flat_ground(make_config):
    env = Env(make_config([SingleInferenceTaskCfg(robots=[JetbotRobotCfg()])], env_num=1))
    obs, _ = env.reset()
    for _ in range(240):
        obs, *_ = env.step([None])
    assert abs(obs[0]['jetbot']['position'][2] - 0.035) < 0.01
    env.close()


def test_simulation_app_and_close(make_config):
    env = Env(make_config([jetbot_task()], env_num=1))
    assert env.simulation_app.is_running()
    with pytest.raises(RuntimeError, match='reset'):
        env.step([None])
    env.reset()
    env.close()
    assert not env.simulation_app.is_running()
    with pytest.raises(RuntimeError, match='closed'):
        env.step([None])


def test_unknown_types_in_a_list_fail_when_the_env_is_built(make_config):
    from internutopia.core.config import RobotCfg, TaskCfg

    good = FiniteStepTaskCfg(max_steps=3)
    with pytest.raises(ValueError, match=r"unknown task type 'NoSuchTask' \(in task_configs\[2\]\).*'FiniteStepTask'"):
        Env(make_config([good, good, TaskCfg(type='NoSuchTask')], env_num=1))
    with pytest.raises(ValueError, match=r"unknown robot type 'Robo' \(in task_configs\[1\]\.robots\[0\]\).*'JetbotRobot'"):
        Env(make_config([good, FiniteStepTaskCfg(robots=[RobotCfg(name='r', type='Robo')])], env_num=1))
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, move_by_speed_cfg

    teleport = move_by_speed_cfg.model_copy(update={'sub_controllers': [move_by_speed_cfg.model_copy(update={'type': 'Teleport'})]})
    with pytest.raises(ValueError, match=r"unknown controller type 'Teleport' "
                                         r"\(in task_configs\[1\]\.robots\[0\]\.controllers\[0\]\.sub_controllers\[0\]\)"):
        Env(make_config([good, FiniteStepTaskCfg(robots=[JetbotRobotCfg(controllers=[teleport])])], env_num=1))
    with pytest.raises(ValueError, match=r"unknown task type 'Nope'"):  # the episodes argument too
        Env(make_config([good], env_num=1), episodes=(TaskCfg(type='Nope'),))


def test_unknown_types_from_an_iterator_fail_at_their_reset(make_config):
    from internutopia.core.config import RobotCfg

    bad = FiniteStepTaskCfg(robots=[RobotCfg(name='r', type='Robo')])
    env = Env(make_config([FiniteStepTaskCfg()], env_num=1), episodes=iter([bad]))
    with pytest.raises(ValueError, match=r"unknown robot type 'Robo'.*'JetbotRobot'"):
        env.reset()
    assert len(env.runner.queue) == 1  # the episode went back to the queue
    env.close()


def test_move_along_path_continues_same_path_and_restarts_on_a_new_one(make_config):
    env = Env(make_config([jetbot_task(max_steps=5000)] * 2, env_num=2))
    env.reset()
    path = [(0.3, 0.0, 0.0), (0.3, 0.3, 0.0), (0.0, 0.3, 0.0)]
    for _ in range(1500):
        obs, *_ = env.step([{'jetbot': {'move_along_path': [list(path)]}}] * 2)  # equal, not identical, lists
    state = obs[0]['jetbot']['controllers']['move_along_path']
    assert state['current_index'] >= 1 and state['total_points'] == 3
    shorter = path[:2]
    obs, *_ = env.step([{'jetbot': {'move_along_path': [shorter]}}, {'jetbot': {'move_along_path': [path]}}])
    assert obs[0]['jetbot']['controllers']['move_along_path']['total_points'] == 2
    assert obs[0]['jetbot']['controllers']['move_along_path']['current_index'] == 0
    assert obs[1]['jetbot']['controllers']['move_along_path']['current_index'] == state['current_index']
    env.close()
