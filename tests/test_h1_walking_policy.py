"""H1's walking policy file and the shipped policy: symmetric by construction, a clear error for a
missing file, and walking to goals, standing and following held speed commands on its own legs
(helpers in ``h1_walking_helpers.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.util.math import quat_to_yaw
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_by_speed_cfg
from internutopia_extension.robots.h1_locomotion import gait
from internutopia_extension.robots.h1_locomotion.walker import POLICY_PATH, OnnxPolicy
from tests.h1_walking_helpers import GRAVITY, H1_MASS, SCENE, h1_group, walking_env


def test_the_symmetric_policy_acts_for_a_mirrored_robot_as_the_mirror_of_its_action():
    """Run symmetric (the default), the shipped policy's action for each robot's mirror image is
    exactly the mirror of its action for the robot: the same gait on both sides. The network alone,
    trained with the mirror loss, is only nearly so; ``walking_policy_symmetric`` picks which the
    walker runs."""
    rng = np.random.default_rng(4)
    obs = rng.normal(scale=0.5, size=(32, gait.OBS_SIZE)).astype(np.float32)
    phase = rng.uniform(0.0, 2.0 * np.pi, 32)
    obs[:, gait.CLOCK_COLUMN:] = np.stack([np.sin(phase), np.cos(phase)], axis=1)  # gait clocks running
    mirrored = gait.mirror_observation(obs)
    symmetric, raw = OnnxPolicy(POLICY_PATH), OnnxPolicy(POLICY_PATH, symmetric=False)
    np.testing.assert_allclose(symmetric(mirrored), gait.mirror_action(symmetric(obs)), atol=1e-6)
    assert np.abs(raw(mirrored) - gait.mirror_action(raw(obs))).max() > 1e-3  # the network alone is not
    # It is the mean of the network's action and the mirror of the network's action for the mirrored robot.
    np.testing.assert_allclose(symmetric(obs), 0.5 * (raw(obs) + gait.mirror_action(raw(mirrored))), atol=1e-6)
    with walking_env(walking_policy='default', walking_policy_symmetric=False, controllers=[]) as env:
        assert h1_group(env).walker.policy.symmetric is False
    with walking_env(walking_policy='default', controllers=[]) as env:
        assert h1_group(env).walker.policy.symmetric is True


def test_a_robots_action_does_not_depend_on_the_other_rows_of_the_call():
    """The network runs on one thread unless asked for more, and each row's output is then the
    one it gets alone, for every batch size a group of up to 64 symmetric H1s makes (on two
    threads ONNX Runtime's split of the work moves some rows by a float32 ulp for some sizes)."""
    obs = np.random.default_rng(5).normal(scale=0.5, size=(128, gait.OBS_SIZE)).astype(np.float32)
    policy = OnnxPolicy(POLICY_PATH, symmetric=False)
    assert policy.intra_op_threads == 1
    alone = np.concatenate([policy(row) for row in obs[:, None]])
    for rows in range(1, len(obs) + 1):
        np.testing.assert_array_equal(policy(obs[:rows]), alone[:rows], err_msg=f'{rows} rows')
    two = OnnxPolicy(POLICY_PATH, intra_op_threads=2)
    assert two.intra_op_threads == 2
    np.testing.assert_allclose(two(obs), OnnxPolicy(POLICY_PATH)(obs), rtol=0, atol=1e-5)
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match=f'intra_op_threads must be an int >= 1, got {bad!r}'):
            OnnxPolicy(POLICY_PATH, intra_op_threads=bad)


def test_missing_policy_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match='policy.train'):
        OnnxPolicy(tmp_path / 'absent.onnx')


def shipped_policy_env(goals, physics_dt=1 / 240):
    from internutopia_extension.configs.robots.h1 import move_to_point_cfg
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    tasks = [SingleInferenceTaskCfg(scene_asset_path=SCENE, robots=[H1RobotCfg(
        locomotion='walking', walking_policy='default', position=(0.0, 0.0, 1.0), controllers=[move_by_speed_cfg, move_to_point_cfg])])
        for _ in goals]
    config = Config(simulator=SimConfig(physics_dt=physics_dt, rendering_dt=physics_dt), env_num=len(goals), env_offset_size=10.0,
                    metrics_save_path='none', task_configs=tasks)
    env = Env(config)
    env.reset()
    return env


def test_the_shipped_policy_walks_to_point_goals_in_every_direction():
    """The shipped ONNX policy (``walking_policy='default'``) takes H1 on its own legs to goals
    2 m ahead, to the left, behind and diagonally (the user example's 1/240 s step), carrying its
    weight on its soles, without falling."""
    from internutopia_extension.robots.h1_locomotion.rewards import fallen

    goals = np.array([[2.0, 0.0], [0.0, 2.0], [-2.0, 0.0], [1.5, -1.5]])
    env = shipped_policy_env(goals)
    group = h1_group(env)
    slots = np.arange(len(goals))
    actions = [{'h1': {'move_to_point': [[*goal, 0.0]]}} for goal in goals]
    reached = np.zeros(len(goals), dtype=bool)
    fell = np.zeros(len(goals), dtype=bool)
    weights = []  # the soles' share of the weight, every step of the last 2 s (held at the goal)
    steps = 12 * 240
    for i in range(steps):
        obs, *_ = env.step(actions)
        if i >= steps - 2 * 240:
            # Every step, not every tenth: samples 0.1 s apart alias with the gait's period.
            weights.append(group.walker.state(slots).touch.sum(axis=1) / (H1_MASS * GRAVITY))
        if i % 24 == 0:
            fell |= fallen(group.walker.state(slots))
            position = np.array([o['h1']['position'][:2] for o in obs])
            reached |= np.linalg.norm(position - goals, axis=1) < 0.1
    env.close()
    assert not fell.any(), f'fell: slots {np.flatnonzero(fell)}'
    assert reached.all(), f'not reached: slots {np.flatnonzero(~reached)}, at {position}'
    # Standing (stepping in place) at its goal, its soles carry its weight: an instant's force swings
    # with the steps, the mean over 2 s does not.
    weight = np.mean(weights, axis=0)
    assert np.all((weight > 0.85) & (weight < 1.15)), weight


def test_the_shipped_policy_stands_still_at_a_zero_command():
    from internutopia_extension.robots.h1_locomotion.rewards import fallen

    env = shipped_policy_env(np.zeros((2, 2)))
    group = h1_group(env)
    start = None
    for i in range(int(10 * 240)):
        obs, *_ = env.step([{'h1': {'move_by_speed': [0.0, 0.0, 0.0]}}] * 2)
        if i == 240:  # (after settling from the 1 cm drop)
            start = np.array([o['h1']['position'][:2] for o in obs])
    drift = np.linalg.norm(np.array([o['h1']['position'][:2] for o in obs]) - start, axis=1)
    assert not fallen(group.walker.state(np.arange(2))).any()
    env.close()
    assert drift.max() < 0.05, drift


def test_a_walking_episode_is_the_same_at_any_env_num_and_in_any_slot():
    """The same commands give a walking H1 the same motion, bit for bit, alone and as slots 0 and
    11 of 16 walking H1s (32 rows a network call, a size at which two ONNX Runtime threads moved it
    by a few nanometres from the first step): a run's results do not depend on how many envs it
    ran with or which slot an episode took."""
    command = [0.6, 0.1, -0.3]

    def run(env_num, slots):
        env = shipped_policy_env(np.zeros((env_num, 2)))
        actions = [{'h1': {'move_by_speed': command if i in slots else [0.3 * (i % 3), 0.0, 0.2]}} for i in range(env_num)]
        motion = []
        for _ in range(120):
            obs, *_ = env.step(actions)
            motion.append([np.concatenate([obs[i]['h1']['position'], obs[i]['h1']['joint_positions']]) for i in slots])
        env.close()
        return np.array(motion)

    alone, among = run(1, [0])[:, 0], run(16, [0, 11])
    assert np.linalg.norm(alone[-1, :2]) > 0.05  # (it walked)
    np.testing.assert_array_equal(among[:, 0], alone)
    np.testing.assert_array_equal(among[:, 1], alone)


#: Held ``move_by_speed`` commands (forward, lateral m/s, yaw rate rad/s) the shipped policy must follow.
HELD_COMMANDS = np.array([[1.0, 0.0, 0.0], [0.5, 0.0, 0.0], [-0.3, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, -0.5, 0.0],
                          [0.0, 0.0, 1.0], [0.0, 0.0, -1.0]])


def test_the_shipped_policy_follows_held_speed_commands_in_every_direction():
    """``move_by_speed`` held for 8 s: over the last 4 s each H1 moves the way it was told (forward,
    backward, side-steps either way, turning either way) at a real share of the commanded speed,
    without drifting off the commanded axis, measured from the positions and headings a user reads."""
    env = shipped_policy_env(np.zeros((len(HELD_COMMANDS), 2)))
    actions = [{'h1': {'move_by_speed': list(command)}} for command in HELD_COMMANDS]

    def pose(obs):
        return (np.array([o['h1']['position'][:2] for o in obs]),
                quat_to_yaw(np.array([o['h1']['orientation'] for o in obs])))

    positions, yaws = [], []
    for i in range(8 * 240):
        obs, *_ = env.step(actions)
        if i >= 4 * 240 and i % 24 == 0:  # sampled at 10 Hz over the last 4 s
            position, yaw = pose(obs)
            positions.append(position)
            yaws.append(yaw)
    env.close()
    yaw = np.unwrap(np.array(yaws), axis=0)
    # Each 0.1 s of travel turned into the frame of the heading at its start, then averaged.
    travel = np.diff(np.array(positions), axis=0)
    cos, sin = np.cos(yaw[:-1]), np.sin(yaw[:-1])
    seconds = 0.1 * len(travel)
    reached = np.stack([np.sum(cos * travel[..., 0] + sin * travel[..., 1], axis=0) / seconds,
                        np.sum(-sin * travel[..., 0] + cos * travel[..., 1], axis=0) / seconds,
                        (yaw[-1] - yaw[0]) / seconds], axis=1)
    commanded = HELD_COMMANDS != 0.0
    share = np.where(commanded, reached / np.where(commanded, HELD_COMMANDS, 1.0), 0.0)
    assert np.all(share[commanded] > 0.7), (HELD_COMMANDS, reached.round(2))
    stray = np.abs(reached[:, :2]) * ~commanded[:, :2]
    allowed = np.where(commanded[:, 2:], 0.15, 0.1)  # turning in place drifts a little more
    assert np.all(stray < allowed), (HELD_COMMANDS, reached.round(2))
