"""InternUtopia 2.x semantics that scripts written for it rely on, checked in our own words.

Each test states one behaviour an upstream-style script depends on: how episode ends are flagged,
the ``env_ids`` keyword, ``finished()``, what ``gym_env`` returns after the last episode, where a
robot's configured position puts it, and the env members such scripts call.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from internutopia.core.config import Config, RewardCfg, SimConfig, Simulator, TaskCfg
from internutopia.core.config.distribution import DistributionCfg, RayDistributionCfg
from internutopia.core.gym_env import Env as GymEnv
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg, SingleInferenceTaskCfg

DRIVE = {'jetbot': {'move_by_speed': [0.3, 0.0]}}


def jetbot_task(max_steps=5, **kw):
    return FiniteStepTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg(**kw)])


@pytest.fixture
def vec(make_config):
    envs = []

    def build(tasks, env_num=2, **kw):
        env = Env(make_config(tasks, env_num=env_num, **kw))
        envs.append(env)
        return env

    yield build
    for env in envs:
        env.close()


# -- episode ends ------------------------------------------------------------------------------
def test_step_limit_sets_terminated_and_truncated(vec):
    env = vec([jetbot_task(max_steps=3)], env_num=1)
    env.reset()
    flags = [env.step([DRIVE])[2:4] for _ in range(3)]
    assert flags == [([False], [False]), ([False], [False]), ([True], [True])]


def test_slots_without_an_episode_report_terminated(vec):
    env = vec([jetbot_task(max_steps=2)], env_num=3)  # one episode for three slots
    obs, info = env.reset()
    assert info[1] is None and info[2] is None
    obs, reward, terminated, truncated, info = env.step([DRIVE] * 3)
    assert terminated == [False, True, True]
    assert obs[1:] == reward[1:] == truncated[1:] == info[1:] == [None, None]
    env.step([DRIVE] * 3)
    obs, reward, terminated, truncated, info = env.step([DRIVE] * 3)  # slot 0 is done now
    assert terminated == [True, True, True] and obs == [None, None, None]


def test_gymnasium_flags_on_request(vec):
    env = vec([jetbot_task(max_steps=1)], env_num=2)
    env.reset()
    _, _, terminated, truncated, _ = env.step([DRIVE, DRIVE], flags='gymnasium')
    assert terminated == [False, None] and truncated == [True, None]
    with pytest.raises(ValueError, match="flags must be 'internutopia' or 'gymnasium'"):
        env.step([DRIVE, DRIVE], flags='gym')


def test_upstream_multi_env_loop_runs_every_episode_once(vec, tmp_path):
    """The loop of InternUtopia's multi-env tests: reset whatever terminated, stop when all did."""
    lengths = [3, 5, 4, 2, 6, 3, 2]
    env = vec([jetbot_task(max_steps=n) for n in lengths], env_num=3)
    obs, _ = env.reset()
    ran, no_more_episode = [], False
    for _ in range(100):
        obs, _, terminated, _, info = env.step([DRIVE] * 3)
        ran += [i['episode_index'] for i, t in zip(info, terminated, strict=True) if t and i is not None]
        if all(terminated) and no_more_episode:
            break
        if any(terminated) and not no_more_episode:
            _, new = env.reset(env_ids=[k for k, t in enumerate(terminated) if t])
            no_more_episode = None in new
    else:
        pytest.fail('the loop never saw every slot terminated')
    assert sorted(ran) == list(range(len(lengths)))


# -- reset and finished --------------------------------------------------------------------------
def test_env_ids_is_the_reset_list(vec):
    env = vec([jetbot_task(max_steps=9, position=(float(k), 0.0, 0.0)) for k in range(5)], env_num=2)
    env.reset()
    obs, info = env.reset(env_ids=[1])
    assert len(obs) == 1 and info[0].robots[0].position[0] == 2.0
    with pytest.raises(ValueError, match='not both'):
        env.reset([0], env_ids=[1])
    with pytest.raises(ValueError, match=r'env id 7 in env_ids is out of range; valid env ids: 0\.\.1'):
        env.reset(env_ids=[7])  # the error names the argument the script used
    with pytest.raises(ValueError, match=r'env id 1 appears more than once in env_ids'):
        env.reset(env_ids=[1, 1])
    with pytest.raises(ValueError, match=r'env id 7 in reset_list is out of range'):
        env.reset([7])


def test_finished_is_callable_and_a_truth_value(vec):
    env = vec([jetbot_task(max_steps=1)], env_num=1)
    env.reset()
    assert env.finished() is False and not env.finished
    env.step([DRIVE])
    assert env.finished() is True and env.finished and env.finished == True  # noqa: E712


# -- env members upstream scripts call ---------------------------------------------------------
def test_observations_dt_and_flags_of_the_env(vec):
    env = vec([jetbot_task(max_steps=50)] * 2, env_num=2)
    assert env.proc_num == 1 and env.is_remote is False and env.is_render is None
    obs, info = env.reset()
    assert env.get_dt() == pytest.approx(1 / 240)  # the conftest's physics_dt
    assert env.active_task_configs == {0: info[0], 1: info[1]}
    stepped = env.step([DRIVE] * 2)[0]
    current = env.get_observations()
    np.testing.assert_array_equal(current[1]['jetbot']['position'], stepped[1]['jetbot']['position'])
    assert env.render(mode='human') is None and env.render(64, 48, mode='rgb_array').shape == (48, 64, 3)


def test_warm_up_moves_physics_but_no_episode_clock(vec):
    env = vec([jetbot_task(max_steps=3)], env_num=1)
    env.reset()
    time_before = env.runner.world.time
    env.warm_up(20)
    assert env.runner.world.time == pytest.approx(time_before + 20 / 240)
    env.warm_up(5, physics=False)  # rendering only: nothing to do on MuJoCo
    flags = [env.step([DRIVE])[2][0] for _ in range(3)]
    assert flags == [False, False, True]  # the warm-up did not count towards max_steps
    with pytest.raises(ValueError, match='both False'):
        env.warm_up(5, render=False, physics=False)
    with pytest.raises(ValueError, match='steps must be an int >= 1'):
        env.warm_up(0)


def test_action_for_a_robot_the_slot_lacks_is_ignored_with_one_warning(vec):
    env = vec([jetbot_task(max_steps=50)], env_num=1)
    env.reset()
    with pytest.warns(UserWarning, match="no robot 'h1_1' in env 0") as caught:
        obs = env.step([{'h1_1': {'move_by_speed': [1.0, 0.0]}, **DRIVE}])[0]
    assert caught[0].filename == __file__  # it points at the caller's step, not into the package
    assert obs[0]['jetbot']['position'][0] > 0  # the jetbot's own command still applied
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        env.step([{'h1_1': {'move_by_speed': [1.0, 0.0]}}])  # warned once per name
    with pytest.raises(ValueError, match="unknown controller 'fly'"):
        env.step([{'jetbot': {'fly': [1]}}])  # a known robot's unknown controller is still an error


# -- gym_env -------------------------------------------------------------------------------------
def test_gym_env_after_the_last_episode_and_without_robots():
    config = Config(metrics_save_path='none', task_configs=[SingleInferenceTaskCfg(robots=[]),
                                                            FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg()])])
    env = GymEnv(config)
    try:
        obs, info = env.reset()
        assert obs == {} and info[GymEnv.RESET_INFO_TASK_CONFIG].robots == []
        assert env.step({}) == ({}, 0.0, False, False, {'episode_index': 0, 'steps': 1})
        obs, info = env.reset()
        assert sorted(obs)[:2] == ['controllers', 'joint_positions']
        env.step({'move_by_speed': [0.2, 0.0]})
        final, _, terminated, truncated, _ = env.step({'move_by_speed': [0.2, 0.0]})
        assert terminated is True and truncated is True
        again = env.step({'move_by_speed': [0.2, 0.0]})  # after the end: no motion, still terminated
        assert again[2] is True and np.array_equal(again[0]['position'], final['position'])
        assert env.reset() == (None, None) and env.finished() and env.get_observations() == {}
    finally:
        env.close()


# -- where robots stand ----------------------------------------------------------------------------
def test_jetbot_at_z0_rests_on_the_floor_and_drives(vec):
    env = vec([SingleInferenceTaskCfg(robots=[JetbotRobotCfg(position=(0.0, 0.0, 0.0))])], env_num=1)
    obs, _ = env.reset()
    for _ in range(480):
        obs = env.step([DRIVE])[0]
    position = obs[0]['jetbot']['position']
    assert abs(position[2] - 0.035) < 0.005  # chassis height when the wheels touch the ground
    assert position[0] > 0.4  # 2 s at 0.3 m/s


def test_jetbot_usd_path_of_internutopia_means_the_built_in_model(vec, tmp_path):
    """InternUtopia's JetbotRobotCfg names its Isaac Sim asset in usd_path; a script that spells it
    out used to fail in MuJoCo's loader ('could not find decoder'). A missing MJCF is an error
    naming the robot and usd_path, raised by the reset that brings it, which changes nothing."""
    from internutopia.macros import gm

    usd = gm.ASSET_PATH + '/robots/jetbot/jetbot.usd'
    env = vec([SingleInferenceTaskCfg(robots=[JetbotRobotCfg(usd_path=usd, position=(0.4, -0.3, 0.0))]),
               SingleInferenceTaskCfg(robots=[JetbotRobotCfg(usd_path=str(tmp_path / 'jetbot.xml'))])], env_num=1)
    env.reset()
    for _ in range(240):
        obs = env.step([DRIVE])[0]
    assert obs[0]['jetbot']['position'][0] > 0.4 + 0.2  # it drives like the built-in Jetbot
    before = env.get_observations()[0]['jetbot']['position'].copy()
    with pytest.raises(ValueError, match=r"robot 'jetbot': usd_path '.*jetbot.xml': no such file"):
        env.reset([0])
    assert np.array_equal(env.get_observations()[0]['jetbot']['position'], before)
    assert env.active_slots == [0]


def test_robot_scale_is_applied_or_refused(vec):
    # The Jetbot scales uniformly, as InternUtopia's jetbot demo does (scale 5): it rests on the floor.
    big = vec([SingleInferenceTaskCfg(robots=[JetbotRobotCfg(scale=(3.0, 3.0, 3.0))])], env_num=1)
    big.reset()
    for _ in range(120):
        obs = big.step([None])[0]
    assert abs(obs[0]['jetbot']['position'][2] - 3 * 0.035) < 0.01
    model = big.runner.world.pack(0).model
    assert model.geom('jetbot/left_wheel').size[0] == pytest.approx(3 * 0.03)
    # Refused before any reset: an uneven Jetbot scale when its config is built, a scale the H1
    # cannot honour when the env is built (naming the field), not at the first reset.
    with pytest.raises(ValueError, match=r'a Jetbot scales uniformly only.*\(1.0, 2.0, 1.0\)'):
        JetbotRobotCfg(scale=(1.0, 2.0, 1.0))
    from internutopia_extension.configs.robots.h1 import H1RobotCfg

    with pytest.raises(ValueError, match=r'task_configs\[0\]\.robots\[0\]\.scale: \(2.0, 2.0, 2.0\) cannot be honoured.*H1Robot'):
        vec([SingleInferenceTaskCfg(robots=[H1RobotCfg(scale=(2.0, 2.0, 2.0))])], env_num=1)


def test_default_physics_step_is_internutopias_and_g1_runs_in_substeps():
    sim = SimConfig()
    assert sim.physics_dt == pytest.approx(1 / 60) and sim.rendering_dt == pytest.approx(1 / 60)
    pytest.importorskip('holosoma_inference')
    from internutopia_extension.configs.robots.g1 import G1RobotCfg, move_by_speed_cfg

    env = Env(Config(metrics_save_path='none', task_configs=[SingleInferenceTaskCfg(
        robots=[G1RobotCfg(position=(0.0, 0.0, 0.78), controllers=[move_by_speed_cfg])])]))
    try:
        env.reset()
        pack = env.runner.world.pack(0)
        assert pack.substeps == 4 and pack.model.opt.timestep == pytest.approx(1 / 240)
        for _ in range(300):  # 5 s walking forward at 1/60 s per env step
            obs = env.step([{'g1': {'move_by_speed': [0.5, 0.0, 0.0]}}])[0]
        assert obs[0]['g1']['position'][2] > 0.6 and obs[0]['g1']['position'][0] > 1.0
    finally:
        env.close()


# -- configs ----------------------------------------------------------------------------------------
def test_upstream_config_fields():
    task = TaskCfg(type='SingleInferenceTask')
    assert (task.reward, task.scene_root_path, task.robots_root_path, task.objects_root_path) == (None, '/scene', '/robots', '/objects')
    reward = RewardCfg(reward_type='MyReward', reward_settings={'k': 1})
    assert reward.type == reward.reward_type == 'MyReward'
    with pytest.raises(ValueError, match='name the same thing'):
        RewardCfg(type='A', reward_type='B')
    assert RayDistributionCfg(proc_num=2).type == 'ray' and issubclass(RayDistributionCfg, DistributionCfg)
    assert Simulator('mujoco') is Simulator.MUJOCO and Simulator.ISAACSIM.value == 'isaac_sim'


def test_task_config_manager_is_the_envs_queue(vec):
    env = vec([jetbot_task(max_steps=3, position=(float(k), 0.0, 0.0)) for k in range(4)], env_num=2)
    env.reset()
    manager = env.task_config_manager
    assert manager is env.task_config_manager and env.runner.task_config_manager is manager
    assert manager.get_active_task_configs() == env.active_task_configs and manager.current_task_config_idx == 2
    name, env_id, offset, task = manager.get_next(1)  # takes the next episode from the env's queue
    assert task.robots[0].position[0] == 2.0 and env_id == 1 and offset == list(env.runner.view.origin(1))
    _, info = env.reset([0])
    assert info[0].robots[0].position[0] == 3.0  # the env goes on with the one after


@pytest.mark.parametrize('robot', ['jetbot', 'h1'])
def test_robots_reach_a_point_at_internutopias_default_step(robot):
    """SimConfig() steps 1/60 s, as InternUtopia's does; the base-motion controllers still arrive."""
    if robot == 'h1':
        from internutopia_extension.configs.robots.h1 import H1RobotCfg as RobotClass
        from internutopia_extension.configs.robots.h1 import move_to_point_cfg
    else:
        from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg as RobotClass
        from internutopia_extension.configs.robots.jetbot import move_to_point_cfg
    config = Config(metrics_save_path='none', task_configs=[SingleInferenceTaskCfg(robots=[RobotClass(controllers=[move_to_point_cfg])])])
    with Env(config) as env:
        env.reset()
        for _ in range(900):  # 15 s of simulated time
            obs = env.step([{robot: {'move_to_point': [(2.0, 1.0, 0.0)]}}])[0]
            if obs[0][robot]['controllers']['move_to_point']['finished']:
                break
        assert np.linalg.norm(obs[0][robot]['position'][:2] - [2.0, 1.0]) < 0.1


@pytest.mark.parametrize('api', ['dict', 'array'])
def test_move_along_path_steers_a_robot_pushed_off_its_last_point_back(vec, api):
    """``finished`` says whether the robot is at the path's end now (InternUtopia's reading of its
    move-to-point sub-controller), not whether it once was: a pushed robot is steered back."""
    from internutopia_extension.configs.robots.jetbot import move_along_path_cfg, move_by_speed_cfg

    env = vec([jetbot_task(max_steps=2000, controllers=[move_by_speed_cfg, move_along_path_cfg])], env_num=1)
    env.reset()
    path = [[(0.4, 0.0, 0.0), (0.8, 0.0, 0.0)]]

    def step():
        if api == 'dict':
            obs, *_ = env.step([{'jetbot': {'move_along_path': path}}])
            robot = obs[0]['jetbot']
            return np.array(robot['position']), bool(robot['controllers']['move_along_path']['finished'])
        out = env.step_arrays({'jetbot': {'move_along_path': np.array(path)}})
        robot = out.obs['jetbot']
        return robot['position'][0], bool(robot['controllers']['move_along_path']['finished'][0])

    for _ in range(1500):
        position, finished = step()
        if finished:
            break
    assert finished and np.hypot(*(position[:2] - (0.8, 0.0))) < move_along_path_cfg.threshold + 0.02
    group = next(iter(env.runner.robot_groups.values()))
    group.teleport(0, np.array([0.44, 0.0, position[2]]), None)  # pushed 0.36 m back along the path
    position, finished = step()
    assert not finished
    for _ in range(1500):
        position, finished = step()
        if finished:
            break
    assert finished and np.hypot(*(position[:2] - (0.8, 0.0))) < move_along_path_cfg.threshold + 0.02


def test_robot_observations_say_whether_cameras_rendered_on_the_step():
    """InternUtopia's ``render`` entry of a robot's observation: true on the steps cameras refresh."""
    from internutopia_extension.configs.robots.jetbot import camera_cfg, move_by_speed_cfg

    camera = camera_cfg.update(resolution=(32, 24))
    task = jetbot_task(max_steps=100, controllers=[move_by_speed_cfg], sensors=[camera])
    env = Env(Config(simulator=SimConfig(physics_dt=1 / 240, rendering_interval=3), metrics_save_path='none', task_configs=[task]))
    env.reset()
    flags, changed, last = [], [], None
    for _ in range(12):
        obs, *_ = env.step([{'jetbot': {'move_by_speed': [0.5, 1.0]}}])
        robot = obs[0]['jetbot']
        image = np.array(robot['sensors'][camera.name]['rgba'])
        flags.append(robot['render'])
        changed.append(last is not None and not np.array_equal(image, last))
        last = image
    assert all(isinstance(flag, bool) for flag in flags)
    assert flags == [step % 3 == 0 for step in range(1, 13)]
    assert [c for c, f in zip(changed, flags, strict=True) if not f] == [False] * 8  # no new frame between render steps
    assert all(changed[i] for i in range(3, 12) if flags[i])
    env.close()
