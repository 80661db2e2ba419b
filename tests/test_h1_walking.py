"""H1 walking on its own legs: the free model, the walker's tick and the locomotion task.

Training the walking policy is in ``test_h1_walking_training.py``, the shipped policy in
``test_h1_walking_policy.py``; their shared helpers in ``h1_walking_helpers.py``."""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia_extension.configs.controllers.h1_leg_action import H1LegActionControllerCfg
from internutopia_extension.configs.robots.h1 import H1RobotCfg
from internutopia_extension.configs.tasks import LocomotionTaskCfg
from internutopia_extension.robots.h1_locomotion import gait
from tests.h1_walking_helpers import GRAVITY, H1_MASS, SCENE, h1_group, step, walking_env


def test_walking_model_holds_nothing_but_the_joints():
    """No weld, no mocap, no gravity compensation, torque-limited servos (the motors' limits)."""
    env = walking_env(env_num=1)
    model = h1_group(env).bound_world.model
    assert model.neq == 0 and model.nmocap == 0
    assert float(np.abs(model.body_gravcomp).max()) == 0.0
    names = [model.actuator(i).name.split('/')[-1] for i in range(model.nu)]
    limits = dict(zip(names, model.actuator_forcerange[:, 1], strict=True))
    assert limits['left_knee_joint'] == 300 and limits['right_hip_pitch_joint'] == 200 and limits['left_ankle_joint'] == 40
    assert bool(np.all(model.actuator_forcelimited[:19]))
    # Nothing applies forces on the pelvis either.
    out = step(env, np.zeros(10), 20)
    data = h1_group(env).bound_world.data
    assert float(np.abs(data.xfrc_applied).max()) == 0.0 and float(np.abs(data.qfrc_applied).max()) == 0.0
    assert out.active.all()
    env.close()


def test_standing_pose_stands_on_its_soles():
    """At zero action H1 stands on its own for a second, its soles carry its weight."""
    env = walking_env(env_num=2)
    out = step(env, np.zeros(10), 200)  # 1 s
    position = out.obs['h1']['position']
    assert np.all(np.abs(position[:, 2] - 0.98) < 0.06), position
    state = h1_group(env).walker.state(np.array([0, 1]))
    weight = H1_MASS * GRAVITY
    assert np.all(np.abs(state.touch.sum(axis=1) - weight) < 0.15 * weight), state.touch
    assert not out.terminated.any()
    env.close()


def test_a_reset_stands_the_robot_again_joint_by_joint():
    """A reset of one slot (the row-by-row start, through the joints' column slices) puts every
    joint of that robot at its standing pose, at rest, its servos holding it; the other slot
    walks on untouched."""
    cfg = H1RobotCfg(locomotion='walking', walking_policy='controller', controllers=[H1LegActionControllerCfg()],
                     position=(0.0, 0.0, 1.0))
    task = LocomotionTaskCfg(scene_asset_path=SCENE, robots=[cfg], max_steps=100_000)
    env = Env(Config(simulator=SimConfig(physics_dt=0.005, rendering_dt=0.005), env_num=2, env_offset_size=3.0,
                     metrics_save_path='none', task_configs=[task] * 3))
    env.reset()
    group = h1_group(env)
    step(env, np.array([1.0, 1.0, -1.0, -1.0, 1.0] * 2), 200)  # legs thrown out: far from standing
    data = group.bound_world.data
    joints, dofs = group.joint_qposadr[0], group.joint_dofadr[0]
    servos = group.ids(np.array([0]), 'actuator', list(group.joint_names))[0]
    assert np.abs(data.qpos[0, joints] - group.standing_pose).max() > 0.1
    other = data.qpos[1].copy()
    env.reset([0])
    np.testing.assert_array_equal(data.qpos[0, joints], group.standing_pose)
    np.testing.assert_array_equal(data.qvel[0, dofs], 0.0)
    np.testing.assert_array_equal(data.ctrl[0, servos], group.standing_pose)
    np.testing.assert_array_equal(data.qpos[1], other)
    env.close()


def test_leg_actions_become_servo_targets_at_the_50_hz_tick():
    env = walking_env(env_num=2)
    group = h1_group(env)
    action = np.linspace(-1.5, 1.5, 10)  # beyond [-1, 1] on both ends: clipped
    step(env, action, 4)
    data = group.bound_world.data
    legs = group.ids(np.array([0]), 'actuator', list(gait.LEG_JOINTS))[0]
    expected = gait.LEG_STANDING + gait.ACTION_SCALE * np.clip(action, -1, 1)
    np.testing.assert_allclose(data.ctrl[0, legs], expected)
    np.testing.assert_allclose(group.walker.action[1], np.clip(action, -1, 1))
    # The observation the policy gets reports that action as the last one.
    obs = group.walker.observe(np.array([0]))
    np.testing.assert_allclose(obs[0, 32:42], np.clip(action, -1, 1), atol=1e-6)
    env.close()


def test_leg_actions_are_clipped_into_their_own_rows():
    """The leg-action controller stores each slot's actions clipped to [-1, 1], the same numbers as
    ``np.clip``: every row at once (a training step) or a few rows (the others keep theirs)."""
    env = walking_env(env_num=2)
    group = h1_group(env)
    walker, controller = group.walker, group.controllers['leg_action']
    rng = np.random.default_rng(0)
    batch = rng.uniform(-3.0, 3.0, (2, 10))
    batch[0, :3] = (-0.0, 1.0, -1.0)
    controller.apply(group.slots, batch)
    assert walker.pending_action.tobytes() == np.clip(batch, -1.0, 1.0).tobytes()
    kept = walker.pending_action[0].copy()
    row = rng.uniform(-3.0, 3.0, (1, 10))
    controller.apply(np.array([1]), row)
    assert walker.pending_action[1].tobytes() == np.clip(row[0], -1.0, 1.0).tobytes()
    assert walker.pending_action[0].tobytes() == kept.tobytes()
    env.close()


def test_falling_ends_the_episode_with_a_record():
    env = walking_env(env_num=1, max_steps=2000, commands=[(0.0, 0.5, 0.0, 0.0)])
    fell_at = None
    for i in range(600):
        out = env.step_arrays({'h1': {'leg_action': np.array([[1.0, 1.0, -1.0, -1.0, 1.0] * 2])}})
        if out.terminated[0]:
            fell_at = i
            break
    assert fell_at is not None, 'H1 should fall with its legs thrown out'
    record = out.metrics[0]
    assert record['fell'] is True and 0 < record['seconds'] < 3.0
    assert record['mean_velocity_error'] > 0
    env.close()


def test_a_fall_costs_the_termination_scale_once():
    """Slot 0 throws its legs out and falls, slot 1 stands: only slot 0 pays ``termination``, on
    the step it falls and never again though its episode goes on (``end_on_fall=False``)."""
    env = walking_env(env_num=2, max_steps=2000, task_fields={'end_on_fall': False, 'reward_scales': {'termination': -7.0}})
    actions = np.array([[1.0, 1.0, -1.0, -1.0, 1.0] * 2, [0.0] * 10])
    rewards = []
    for _ in range(300):  # 1.5 s
        rewards.append(env.step_arrays({'h1': {'leg_action': actions}}).reward.copy())
    env.close()
    rewards = np.array(rewards)
    charged = np.flatnonzero(rewards[:, 0] < 0)
    assert len(charged) == 1, charged  # once, and the episode went on after it
    fall_step = int(charged[0])
    # The fall's penalty plus that step's (clipped, at least 0, at most a few hundredths) reward.
    assert -7.0 <= rewards[fall_step, 0] < -7.0 + 0.05
    assert fall_step < 200 and np.all(rewards[:fall_step, 0] >= 0) and np.all(rewards[fall_step + 1:, 0] >= 0)
    assert np.all(rewards[:, 1] >= 0)  # the standing slot is never charged


def test_the_fall_is_observed_unless_the_caller_reads_only_other_entries():
    """The task's ``fell`` observation is in every array observation, per slot, except one taken
    for a caller that names what it reads and leaves it out (it is then not gathered)."""
    env = walking_env(env_num=2, max_steps=2000, task_fields={'end_on_fall': False})
    actions = {'h1': {'leg_action': np.array([[1.0, 1.0, -1.0, -1.0, 1.0] * 2, [0.0] * 10])}}
    out = None
    for _ in range(300):  # slot 0 throws its legs out and falls, slot 1 stands
        out = env.step_arrays(actions)
    assert out.obs['fell'].tolist() == [True, False]
    robot_only = env.step_arrays(actions, observe_only={'h1': frozenset({'position'})})
    assert 'fell' not in robot_only.obs and list(robot_only.obs['h1']) == ['position']
    both = env.step_arrays(actions, observe_only={'h1': frozenset({'position'}), 'fell': None})
    assert both.obs['fell'].tolist() == [True, False]
    env.close()


def test_standing_episode_is_truncated_not_fallen():
    env = walking_env(env_num=1, max_steps=100)
    out = None
    for _ in range(100):
        out = env.step_arrays({'h1': {'leg_action': np.zeros((1, 10))}})
    assert out.truncated[0] and not out.terminated[0]
    assert out.metrics[0]['fell'] is False and out.metrics[0]['steps'] == 100
    env.close()


def test_command_schedule_reaches_the_walker():
    env = walking_env(env_num=1, max_steps=1000, commands=[(0.0, 0.5, 0.0, 0.0), (0.25, 0.0, 0.0, 0.8), (0.5, 5.0, 0.0, 0.0)])
    walker = h1_group(env).walker
    np.testing.assert_allclose(walker.command[0], [0.5, 0.0, 0.0])
    step(env, np.zeros(10), 50)
    np.testing.assert_allclose(walker.command[0], [0.0, 0.0, 0.8])
    step(env, np.zeros(10), 50)
    np.testing.assert_allclose(walker.command[0], [gait.COMMAND_HIGH[0], 0.0, 0.0])  # clipped to the trained range
    env.close()



def test_the_legs_follow_a_ramped_command():
    """A command that jumps (0 -> 0.6 m/s and a full yaw rate) reaches the policy as a ramp of
    ``COMMAND_RATE`` per second, one tick at a time; the requested command is kept as given."""
    env = walking_env(env_num=1, max_steps=1000, commands=[(0.0, 0.6, 0.0, -1.0)])
    walker = h1_group(env).walker
    step(env, np.zeros(10), 4 * 10)  # ten 50 Hz ticks = 0.2 s
    np.testing.assert_allclose(walker.command[0], [0.6, 0.0, -1.0])
    np.testing.assert_allclose(walker.followed[0], [0.2, 0.0, -0.4], atol=1e-9)
    state = walker.state(np.arange(1))
    np.testing.assert_allclose(state.command[0], walker.followed[0])  # rewards track what the legs follow
    obs = walker.observe(np.arange(1))
    np.testing.assert_allclose(obs[0, 9:12], walker.followed[0] * gait.COMMAND_SCALE)
    step(env, np.zeros(10), 4 * 30)  # another 0.6 s: the walking part has arrived, the yaw rate too
    np.testing.assert_allclose(walker.followed[0], [0.6, 0.0, -1.0], atol=1e-9)
    env.close()

def test_pushes_come_at_their_interval_and_only_to_their_slot():
    env = walking_env(env_num=2, task_fields={'push_interval': (0.1, 0.1), 'push_speed': 2.0})
    group = h1_group(env)
    data = group.bound_world.data
    dof = int(group.root_dofadr[0])
    step(env, np.zeros(10), 19)
    before = data.qvel[:, dof:dof + 2].copy()
    step(env, np.zeros(10), 2)  # the push lands at 0.1 s (step 20)
    jump = np.linalg.norm(data.qvel[:, dof:dof + 2] - before, axis=1)
    assert np.all(jump > 0.05), jump  # both slots pushed (each its own push)
    assert not np.allclose(data.qvel[0, dof:dof + 2], data.qvel[1, dof:dof + 2])
    env.close()
    # Without push_interval, nothing pushes.
    quiet = walking_env(env_num=1)
    group = h1_group(quiet)
    step(quiet, np.zeros(10), 40)
    assert float(np.abs(group.bound_world.data.qvel[0, int(group.root_dofadr[0]):][:2]).max()) < 0.2
    quiet.close()


def test_an_episodes_pushes_depend_on_the_episode_alone():
    """Pushes drawn from the episode's own push key: the same episode is pushed the same, bit for
    bit, alone, as slot 2 of 3 beside other pushed episodes, and as a slot's second episode (its
    ``push_seed``); with ``push_seed=None`` the key is the episode's queue index. Before, later
    pushes came from one generator of the task shared by every slot, so a slot's pushes (the robot
    on the floor 74 steps in) depended on its neighbours and on the episodes before it."""
    def task(seed, speed=0.5):
        return LocomotionTaskCfg(scene_asset_path=SCENE, robots=[H1RobotCfg(locomotion='walking', position=(0.0, 0.0, 1.0), controllers=[])],
                                 commands=[(0.0, 0.5, 0.0, 0.0)], push_interval=(0.2, 0.6), push_speed=speed,
                                 push_seed=seed, end_on_fall=False)

    def run(tasks, slot, first_steps=0):
        config = Config(simulator=SimConfig(physics_dt=0.005, rendering_dt=0.005), env_num=len(tasks) - (first_steps > 0),
                        env_offset_size=3.0, metrics_save_path='none', task_configs=tasks)
        with Env(config) as env:
            env.reset()
            for _ in range(first_steps):
                env.step([{}] * env.env_num)
            if first_steps:
                env.reset([slot])
            motion = []
            for _ in range(150):
                obs, *_ = env.step([{}] * env.env_num)
                motion.append(np.concatenate([obs[slot]['h1']['position'], obs[slot]['h1']['joint_velocities']]))
        return np.array(motion)

    alone = run([task(7)], 0)
    np.testing.assert_array_equal(run([task(3, 1.0), task(None, 2.0), task(7)], 2), alone)
    np.testing.assert_array_equal(run([task(3, 1.0), task(7)], 0, first_steps=37), alone)
    assert not np.array_equal(run([task(8)], 0), alone)  # (another seed, other pushes)
    assert not np.array_equal(run([task(None)], 0), alone)  # (queue index 0: key 0)
    np.testing.assert_array_equal(run([task(0)], 0), run([task(None)], 0))


def test_a_seeded_reset_decides_the_pushes_of_listed_episodes():
    """A Gymnasium env of a list of pushed episodes (``internutopia/Config-v0``'s case) whose
    ``push_seed`` is left ``None``: the episodes are the same for every ``reset(seed=...)``, the
    pushes follow the seed (the queue's seed mixed with the episode's index), the same seed the
    same pushes bit for bit, in the vector env and in the dict ``gym_env.Env``. Before, the key was
    the queue index alone, which every seeded reset starts again at 0: the same pushes for every
    seed."""
    from internutopia.core.gym_env import Env as DictEnv
    from internutopia.core.gym_vector import VectorEnv
    from internutopia_extension.configs.robots.h1 import move_by_speed_cfg

    task = LocomotionTaskCfg(scene_asset_path=SCENE, robots=[H1RobotCfg(locomotion='walking', position=(0.0, 0.0, 1.0), controllers=[move_by_speed_cfg])],
                             push_interval=(0.1, 0.3), push_speed=1.0, end_on_fall=False)
    config = Config(simulator=SimConfig(physics_dt=0.005, rendering_dt=0.005), env_num=2, env_offset_size=3.0,
                    metrics_save_path='none', task_configs=[task])

    def run(envs, seed, action):  # (the vector env's flat observations, the dict env's positions)
        obs, _ = envs.reset(seed=seed)
        motion = []
        for _ in range(60):
            obs, *_ = envs.step(action)
            motion.append(np.array(obs['position'] if isinstance(obs, dict) else obs))
        return np.array(motion)

    envs = VectorEnv(config)
    try:
        first, again, other = (run(envs, seed, np.zeros(envs.action_space.shape)) for seed in (1, 1, 2))
    finally:
        envs.close()
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    assert not np.array_equal(first[:, 0], first[:, 1])  # (the two envs' episodes: indices 0 and 1)
    env = DictEnv(config.model_copy(update={'env_num': 1}), endless=True)
    try:
        one, one_again, one_other = (run(env, seed, {'move_by_speed': [0.0, 0.0, 0.0]}) for seed in (5, 5, 6))
    finally:
        env.close()
    np.testing.assert_array_equal(one, one_again)
    assert not np.array_equal(one, one_other)


def test_unseeded_gymnasium_envs_push_listed_episodes_differently():
    """Two Gymnasium envs of the same list of pushed episodes (``push_seed`` left ``None``), built
    and reset without a seed, as a user's two training runs: their pushes differ (each env's
    episode queue has a seed from fresh entropy). Before, an unseeded queue keyed the pushes on the
    episodes' indices: every unseeded run pushed its robots alike, step for step."""
    from internutopia.core.gym_env import Env as DictEnv
    from internutopia.core.gym_vector import VectorEnv
    from internutopia_extension.configs.robots.h1 import move_by_speed_cfg

    task = LocomotionTaskCfg(scene_asset_path=SCENE, robots=[H1RobotCfg(locomotion='walking', position=(0.0, 0.0, 1.0), controllers=[move_by_speed_cfg])],
                             push_interval=(0.05, 0.1), push_speed=1.0, end_on_fall=False)
    config = Config(simulator=SimConfig(physics_dt=0.005, rendering_dt=0.005), env_num=1, env_offset_size=3.0,
                    metrics_save_path='none', task_configs=[task])

    def run(make, action):
        envs = make()
        try:
            envs.reset()
            motion = []
            for _ in range(40):
                obs, *_ = envs.step(action)
                motion.append(np.array(obs['position'] if isinstance(obs, dict) else obs))
            return np.array(motion)
        finally:
            envs.close()

    runs = [run(lambda: VectorEnv(config), np.zeros((1, 3))) for _ in range(2)]
    assert not np.array_equal(runs[0], runs[1])
    runs = [run(lambda: DictEnv(config, endless=True), {'move_by_speed': [0.0, 0.0, 0.0]}) for _ in range(2)]
    assert not np.array_equal(runs[0], runs[1])


def test_leg_action_needs_a_walking_h1_trained_from_outside():
    task = LocomotionTaskCfg(scene_asset_path=SCENE, robots=[H1RobotCfg(controllers=[H1LegActionControllerCfg()])])
    with pytest.raises(ValueError, match="walking_policy is 'controller'.*locomotion='walking', walking_policy='default'"):
        with Env(Config(env_num=1, metrics_save_path='none', task_configs=[task])) as env:
            env.reset()


@pytest.mark.parametrize(('field', 'value', 'message'), [
    ('commands', [(1.0, 0.5, 0.0, 0.0)], 'start times must begin at 0'),
    ('commands', [(0.0, float('nan'), 0.0, 0.0)], 'finite'),
    ('reward_scales', {'trackk': 1.0}, "unknown reward terms \\['trackk'\\]; valid terms"),
    ('push_interval', (2.0, 1.0), 'push_interval must be'),
    ('push_speed', float('inf'), 'push_speed'),
    ('push_speed', 9.0, r'push_speed must be a speed in \[0, 5\]'),
    ('push_seed', -1, r'push_seed must be None or an int in \[0, 2\*\*63\); got -1'),
    ('goals', [], 'goals must be a non-empty list'),
    ('goals', [(1.0, float('nan'))], 'finite'),
    ('goal_speed', 0.0, 'goal_speed must be a positive number'),
    ('goal_tolerance', -1.0, 'goal_tolerance must be a positive number'),
])
def test_locomotion_task_config_errors(field, value, message):
    with pytest.raises(ValueError, match=message):
        LocomotionTaskCfg(**{field: value})


def test_goals_and_a_command_schedule_are_exclusive():
    with pytest.raises(ValueError, match='goals or a commands schedule, not both'):
        LocomotionTaskCfg(goals=[(1.0, 0.0)], commands=[(0.0, 0.5, 0.0, 0.0)])


def test_goal_episodes_steer_towards_each_goal_then_stand():
    """Goal points become ``move_to_point``-style commands; a goal counts once the pelvis is
    within tolerance; after the last goal it is held there (zero inside the tolerance). The robot is carried here by
    writing its pose: only the steering is under test. The task steers at the end of each control
    period (four physics steps), so each stage steps one period."""
    env = walking_env(env_num=2, max_steps=1000, commands=[(0.0, 0.0, 0.0, 0.0)])
    task_cfg = LocomotionTaskCfg(scene_asset_path=SCENE, robots=[H1RobotCfg(locomotion='walking', walking_policy='controller',
                                 position=(0.0, 0.0, 1.0), controllers=[H1LegActionControllerCfg()])], max_steps=1000,
                                 goals=[(2.0, 0.0), (2.0, 2.0)], goal_speed=0.6)
    env.close()
    config = Config(simulator=SimConfig(physics_dt=0.005, rendering_dt=0.005), env_num=2, env_offset_size=3.0,
                    metrics_save_path='none', task_configs=[task_cfg, task_cfg.model_copy(update={'goals': [(0.0, -3.0)]})])
    with Env(config) as env:
        env.reset()
        group, walker = h1_group(env), h1_group(env).walker
        qpos = group.bound_world.data.qpos
        root = int(group.root_qposadr[0])
        step(env, np.zeros(10), 4)
        # Slot 0 faces its goal straight ahead: full speed, no turn; slot 1's goal is behind its right: turn in place.
        np.testing.assert_allclose(walker.command[0], [0.6, 0.0, 0.0], atol=0.02)
        assert walker.command[1, 0] == 0.0 and walker.command[1, 2] < -0.9
        qpos[0, root:root + 2] = (1.95, 0.0)  # within 0.1 m of the first goal
        step(env, np.zeros(10), 4)
        assert env.runner.tasks['LocomotionTask'].goal_index[0] == 1
        assert walker.command[0, 2] > 0.9  # the second goal is to its left
        qpos[0, root:root + 2] = (2.0, 1.97)
        out = step(env, np.zeros(10), 4)
        np.testing.assert_allclose(walker.command[0], 0.0)  # both reached: stand
        qpos[0, root:root + 2] = (2.0, 2.3)  # drifted out: stepped back to the last goal
        step(env, np.zeros(10), 4)
        assert walker.command[0, 2] < -0.9 and env.runner.tasks['LocomotionTask'].goal_index[0] == 2
        qpos[0, root:root + 2] = (2.0, 2.0)
        for _ in range(999):
            out = env.step_arrays({'h1': {'leg_action': np.zeros((2, 10))}})
            if out.truncated[0] or out.terminated[0]:
                break
        assert out.metrics[0]['goals_reached'] == 2
    env.close()


def test_locomotion_must_be_a_known_mode():
    with pytest.raises(ValueError, match='locomotion'):
        H1RobotCfg(locomotion='flying')
