"""H1WithHandRobot: the hands are on the forearms and open and close, the right arm's IK reaches a
target, the robot walks with its hands on H1's policy, upstream's names, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip('fourier_robot_descriptions', reason='the Inspire hands: pip install --no-deps fourier-robot-descriptions')

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.macros import gm  # noqa: E402
from internutopia_extension import import_extensions  # noqa: E402
from internutopia_extension.configs.robots import h1_with_hand as cfgs  # noqa: E402
from internutopia_extension.configs.robots.h1 import H1_JOINT_NAMES  # noqa: E402
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg  # noqa: E402
from internutopia_extension.robots import h1_with_hand_model as model  # noqa: E402

NAME = 'h1_with_hand'
ENVS = 2


@pytest.fixture(scope='module')
def env():
    import_extensions()
    robot = cfgs.H1WithHandRobotCfg(controllers=[
        cfgs.move_by_speed_cfg, cfgs.move_to_point_cfg, cfgs.rotate_cfg, cfgs.joint_controller, cfgs.recover_cfg,
        cfgs.right_arm_joint_controller_cfg, cfgs.right_arm_ik_controller_cfg, cfgs.hand_controller_cfg])
    task = SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', robots=[robot])
    env = Env(Config(simulator=SimConfig(physics_dt=1 / 200, rendering_dt=1 / 200), env_num=ENVS, env_offset_size=10,
                     metrics_save_path='none', task_configs=[task] * 50))
    yield env
    env.close()


def run(env, action, steps):
    obs = None
    for _ in range(steps):
        obs, *_ = env.step([action(slot) if callable(action) else action for slot in range(ENVS)])
    return obs


def robot_obs(obs, slot):
    return obs[slot][NAME]


def test_the_model_has_h1s_body_two_hands_and_upstreams_names():
    from internutopia_extension.robots.h1_locomotion.model import walking_spec

    spec = walking_spec()
    model.attach_hands(spec)
    compiled = spec.compile()
    for side in ('left', 'right'):
        assert 0.18 < model.hand_mass(compiled, side) < 0.2  # the URDF's masses (kg)
        hand = compiled.body(f'{side}_hand_link')
        assert compiled.body(int(hand.parentid[0])).name == f'{side}_elbow_link'
        for joint in model.hand_joint_names(side):
            compiled.joint(joint)  # (a KeyError if missing)
    names = {compiled.joint(i).name for i in range(compiled.njnt)}
    assert set(H1_JOINT_NAMES) <= names
    assert compiled.neq == 12  # the URDFs' mimic couplings, 6 per hand
    assert compiled.nu == 19 + 12  # H1's servos and 6 finger servos per hand


def test_observation_and_controllers_use_upstreams_names(env):
    obs, _ = env.reset()
    robot = robot_obs(obs, 0)
    assert robot['joint_positions'].shape == (19,)
    assert sorted(robot['controllers']) == sorted(
        ['move_by_speed', 'move_to_point', 'rotate', 'joint_controller', 'recover', 'right_arm_joint_controller',
         'right_arm_ik_controller', 'hand_controller'])
    assert cfgs.joint_controller.joint_names == H1_JOINT_NAMES
    assert cfgs.right_arm_ik_controller_cfg.end_effector_frame_name == 'right_hand_link'


def test_each_hand_closes_and_opens_measurably(env):
    obs, _ = env.reset()
    spread_open = robot_obs(obs, 0)['controllers']['hand_controller']['fingertip_spread']
    # Slot 0 closes its right hand only; slot 1 closes both.
    obs = run(env, lambda slot: {NAME: {'hand_controller': (None, 'close') if slot == 0 else 'close'}}, 100)
    hands = [robot_obs(obs, slot)['controllers']['hand_controller'] for slot in range(ENVS)]
    assert hands[0]['closure'][0] < 0.05 and hands[0]['closure'][1] > 0.85
    assert np.all(hands[1]['closure'] > 0.85)
    assert np.all(hands[1]['right_joint_positions'][model.HAND_JOINTS.index('index_proximal_joint')] > 1.3)
    # The fingertips come several centimetres closer to the thumb tip.
    assert np.all(hands[1]['fingertip_spread'] < spread_open - 0.05)
    assert abs(hands[0]['fingertip_spread'][0] - spread_open[0]) < 0.005
    obs = run(env, {NAME: {'hand_controller': ('open', 0.0)}}, 100)
    for slot in range(ENVS):
        hand = robot_obs(obs, slot)['controllers']['hand_controller']
        assert np.all(hand['closure'] < 0.05)
        assert np.allclose(hand['fingertip_spread'], spread_open, atol=0.005)


@pytest.mark.parametrize('action, match', [
    (('close', 'shut'), "right hand's command must be"),
    ((0.2, 1.5), "right hand's command must be"),
    (('open', 'open', 'open'), 'expects \\(left, right\\)'),
    (True, "command must be 'open'"),
])
def test_bad_hand_commands_are_refused_and_change_nothing(env, action, match):
    env.reset()
    before = env.step([None] * ENVS)[0]
    with pytest.raises(ValueError, match=match):
        env.step([{NAME: {'hand_controller': action}}, None])
    after = env.step([None] * ENVS)[0]
    assert np.allclose(robot_obs(after, 0)['controllers']['hand_controller']['closure'],
                       robot_obs(before, 0)['controllers']['hand_controller']['closure'], atol=0.01)


def test_the_right_arm_ik_reaches_a_target(env):
    obs = run(env, {}, 100) if env.reset() else None
    start = robot_obs(obs, 0)['controllers']['right_arm_ik_controller']['eef_position']
    target = start + np.array([0.05, -0.05, 0.15])
    obs = run(env, {NAME: {'right_arm_ik_controller': [tuple(target), None]}}, 250)
    ik = robot_obs(obs, 0)['controllers']['right_arm_ik_controller']
    assert ik['success'] and ik['finished']
    assert np.linalg.norm(ik['eef_position'] - target) < cfgs.right_arm_ik_controller_cfg.threshold
    # The left arm kept its pose.
    left = [H1_JOINT_NAMES.index(n) for n in H1_JOINT_NAMES if n.startswith('left_shoulder') or n == 'left_elbow_joint']
    assert np.all(np.abs(robot_obs(obs, 0)['joint_positions'][left]) < 0.05)


def test_the_right_arm_joint_controller_moves_the_arm(env):
    env.reset()
    goal = np.array([-0.4, -0.2, 0.1, 0.8])
    obs = run(env, {NAME: {'right_arm_joint_controller': goal}}, 150)
    joints = robot_obs(obs, 0)['joint_positions'][[H1_JOINT_NAMES.index(n) for n in cfgs.RIGHT_ARM_JOINT_NAMES]]
    assert np.allclose(joints, goal, atol=0.05)


def test_it_walks_forward_upright_with_its_hands(env):
    obs, _ = env.reset()
    start = np.array([robot_obs(obs, slot)['position'] for slot in range(ENVS)])
    obs = run(env, {NAME: {'move_by_speed': (0.8, 0.0, 0.0), 'hand_controller': 'close'}}, 600)  # 3 s
    end = np.array([robot_obs(obs, slot)['position'] for slot in range(ENVS)])
    assert np.all(end[:, 0] - start[:, 0] > 1.4)  # the command ramps up over the first second
    assert np.all(np.abs(end[:, 1] - start[:, 1]) < 0.3)
    assert np.all(end[:, 2] > 0.9)  # upright


def test_a_missing_hand_package_is_named(monkeypatch):
    import importlib.util

    from internutopia.core.extras import MissingExtraError, declared_extra

    assert declared_extra('robot', 'H1WithHandRobot').install == model.HAND_INSTALL
    # Without the package, building an env for the robot stops at once, naming the command.
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, 'find_spec', lambda name, *args: None if name == model.HAND_PACKAGE else find_spec(name, *args))
    config = Config(task_configs=[SingleInferenceTaskCfg(robots=[cfgs.H1WithHandRobotCfg()])], metrics_save_path='none')
    with pytest.raises(MissingExtraError, match="H1WithHandRobot.*pip install --no-deps fourier-robot-descriptions"):
        Env(config)
    monkeypatch.setattr(importlib.util, 'find_spec', find_spec)
    monkeypatch.setattr(model, 'HAND_PACKAGE', 'no_such_package_for_hands')
    model._hand_spec.cache_clear()
    try:
        with pytest.raises(ImportError, match='pip install --no-deps fourier-robot-descriptions'):
            model.hand_spec('left')
    finally:
        model._hand_spec.cache_clear()
    with pytest.raises(ValueError, match="side must be one of \\['left', 'right'\\]"):
        model.hand_spec('middle')


def test_a_slots_robot_has_internutopias_h1_with_hand_methods():
    robot_cfg = cfgs.H1WithHandRobotCfg(controllers=[cfgs.move_by_speed_cfg])
    task = SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', robots=[robot_cfg])
    with Env(Config(simulator=SimConfig(physics_dt=1 / 200), env_num=1, metrics_save_path='none', task_configs=[task])) as env:
        env.reset()
        obs, *_ = env.step([{NAME: {'move_by_speed': [0.0, 0.0, 0.0]}}])
        robot = env.runner.current_tasks[next(iter(env.runner.current_tasks))].robots[NAME]
        torso = robot._rigid_body_map['/h1_with_hand/torso_link'].get_pose()[0]
        np.testing.assert_allclose(robot.get_robot_ik_base().get_pose()[0], torso)
        assert 0.0 < robot.get_ankle_height() < 0.2 < torso[2]
        np.testing.assert_allclose(robot._robot_base.get_pose()[0], obs[0][NAME]['position'])


def test_a_slots_articulation_has_the_finger_joints_and_drives_them(env):
    """InternUtopia's articulation of the robot has its fingers as joints (it had the 19 body joints
    only): an upstream-style script reads them and closes a hand through ``apply_action``; the
    target holds between steps, other slots' hands stay open, a follower joint is refused by name."""
    from internutopia.core.robot.articulation_action import ArticulationAction
    from internutopia.core.robot.articulation_subset import ArticulationSubset

    env.reset()
    robots = [env.runner.current_tasks[env.runner.env_id_to_task_name_map[slot]].robots[NAME] for slot in range(ENVS)]
    articulation = robots[0].articulation
    fingers = model.hand_joint_names('left') + model.hand_joint_names('right')
    assert articulation.dof_names == [*H1_JOINT_NAMES, *fingers] and articulation.num_dof == 19 + 24
    driven = model.hand_joint_names('right', driven=True)
    closed = dict(zip(driven, model.HAND_CLOSED.tolist(), strict=True))
    subset = ArticulationSubset(articulation, driven)
    articulation.apply_action(ArticulationAction(joint_positions=list(closed.values()), joint_indices=subset.joint_indices))
    obs = run(env, {}, 100)  # no hand command: the targets applied between steps hold
    hands = [robot_obs(obs, slot)['controllers']['hand_controller'] for slot in range(ENVS)]
    assert hands[0]['closure'][1] > 0.85 and hands[0]['closure'][0] < 0.05 and np.all(hands[1]['closure'] < 0.05)
    index = articulation.get_dof_index('R_index_proximal_joint')
    assert articulation.get_joint_positions([index])[0] > 1.3
    np.testing.assert_allclose(articulation.get_joint_positions()[19 + 12:], hands[0]['right_joint_positions'])
    np.testing.assert_allclose(articulation.get_applied_action().joint_positions[index], closed['R_index_proximal_joint'])
    assert articulation.get_applied_action().joint_positions[articulation.get_dof_index('R_index_intermediate_joint')] is None
    with pytest.raises(ValueError, match="joint 'R_index_intermediate_joint' of robot 'h1_with_hand' has no position servo"):
        articulation.apply_action(ArticulationAction(joint_positions=[0.5], joint_indices=[articulation.get_dof_index('R_index_intermediate_joint')]))
    # The hand controller's next command replaces the targets.
    obs = run(env, {NAME: {'hand_controller': 'open'}}, 100)
    assert np.all(robot_obs(obs, 0)['controllers']['hand_controller']['closure'] < 0.05)
