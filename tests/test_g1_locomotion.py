"""G1 walks in MuJoCo under Holosoma's ONNX velocity policy (CPU only, a few seconds)."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

pytest.importorskip('onnxruntime')
g1 = pytest.importorskip('internutopia_extension.robots.g1_locomotion')
try:
    g1.holosoma_policy_path()
except ImportError as exc:  # pragma: no cover - depends on the optional package
    pytest.skip(str(exc), allow_module_level=True)

PHYSICS_DT = 1 / 240


@pytest.fixture(scope='module')
def policy2() -> g1.G1LocomotionPolicy:
    return g1.G1LocomotionPolicy(capacity=2)


def _world(policy: g1.G1LocomotionPolicy, n: int, spacing: float = 5.0) -> mujoco.MjModel:
    """Ground plane + ``n`` G1 copies ``env{i}/`` standing ``spacing`` m apart along y."""
    robot = g1.build_g1_spec(policy)
    world = mujoco.MjSpec()
    world.copy_during_attach = True
    world.option.timestep = PHYSICS_DT
    world.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    world.worldbody.add_geom(name='floor', type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05])
    for i in range(n):
        frame = world.worldbody.add_frame(pos=[0.0, spacing * i, 0.0])
        frame.attach_body(robot.body(g1.PELVIS_BODY_NAME), f'env{i}/', '')
    world.dedup_assets()
    return world.compile()


def _random_state(rng: np.random.Generator, n: int, policy: g1.G1LocomotionPolicy):
    quat = rng.normal(size=(n, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    return (quat, rng.normal(size=(n, 3)), policy.default_joint_pos + 0.1 * rng.normal(size=(n, 29)),
            rng.normal(size=(n, 29)), rng.uniform(-1, 1, size=(n, 3)))


def test_policy_metadata(policy2):
    p = policy2
    assert len(p.joint_names) == 29 and p.joint_names[0] == 'left_hip_pitch_joint'
    assert p.kp.shape == p.kd.shape == p.default_joint_pos.shape == (29,)
    assert p.obs_dim == 100 and p.control_dt == pytest.approx(0.02) and p.action_scale == 0.25
    names = [name for name, _, _ in g1.OBS_LAYOUT]
    assert names == sorted(names)  # Holosoma concatenates terms alphabetically
    np.testing.assert_allclose(p.command_low, -1.0)
    np.testing.assert_allclose(p.command_high, 1.0)


def test_projected_gravity():
    rng = np.random.default_rng(0)
    quat = rng.normal(size=(8, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    ours = g1.G1LocomotionPolicy.projected_gravity(quat)
    upright = g1.G1LocomotionPolicy.projected_gravity(np.array([[1.0, 0.0, 0.0, 0.0]]))
    np.testing.assert_allclose(upright, [[0.0, 0.0, -1.0]], atol=1e-12)
    rot = np.zeros((8, 9))
    for i, q in enumerate(quat):
        mujoco.mju_quat2Mat(rot[i], q)
    np.testing.assert_allclose(ours, np.einsum('nji,j->ni', rot.reshape(8, 3, 3), [0.0, 0.0, -1.0]), atol=1e-12)
    try:
        from holosoma_inference.utils.math.quat import quat_rotate_inverse
    except Exception:  # noqa: BLE001 - optional cross-check
        return
    np.testing.assert_allclose(ours, quat_rotate_inverse(quat, np.array([[0.0, 0.0, -1.0]])), atol=1e-12)


def test_batched_act_equals_one_by_one():
    rng = np.random.default_rng(1)
    batch = g1.G1LocomotionPolicy(capacity=3)
    single = g1.G1LocomotionPolicy(capacity=3)
    for _ in range(3):
        state = _random_state(rng, 3, batch)
        together = batch.act(np.arange(3), *state)
        apart = np.concatenate([single.act([i], *(s[i:i + 1] for s in state)) for i in range(3)])
        np.testing.assert_allclose(together, apart, atol=1e-5)
    np.testing.assert_allclose(batch.last_action, single.last_action, atol=1e-5)
    batch.reset([1])
    assert not batch.last_action[1].any() and batch.last_action[0].any()
    np.testing.assert_allclose(batch.phase[1], [0.0, math.pi])


def test_compiled_act_matches_numpy_act():
    from internutopia_extension.robots.g1_locomotion.policy_kernel import compiled_act

    env_num, nq, nv, nu = 5, 45, 44, 33
    root_qpos, root_dof, joint_qpos, joint_dof, ctrl_start = 2, 3, 9, 9, 4  # not the model's: any addresses
    reference = g1.G1LocomotionPolicy(capacity=env_num)
    compiled_policy = g1.G1LocomotionPolicy(capacity=env_num)
    compiled = compiled_act(compiled_policy, root_qpos, root_dof, joint_qpos, joint_dof, ctrl_start)
    if compiled is None:
        pytest.skip('numba unavailable or INTERNUTOPIA_JIT=0: the numpy act is the only path')
    rng = np.random.default_rng(3)
    slots = np.array([0, 2, 3])
    ctrl = np.zeros((env_num, nu))
    walk = rng.uniform(-1.5, 1.5, size=(env_num, 3))  # beyond the trained ranges: clipped
    for command in (walk, np.zeros((env_num, 3)), walk, walk * 0.3):  # walk, stand, walk again (clock restarts)
        qpos, qvel = rng.normal(size=(env_num, nq)), rng.normal(size=(env_num, nv))
        qpos[:, root_qpos + 3:root_qpos + 7] *= 0.5  # not unit quaternions: both normalize
        targets = reference.act(slots, qpos[slots, root_qpos + 3:root_qpos + 7], qvel[slots, root_dof + 3:root_dof + 6],
                                qpos[slots, joint_qpos:joint_qpos + 29], qvel[slots, joint_dof:joint_dof + 29],
                                command[slots])
        compiled(slots, qpos, qvel, ctrl, command)
        np.testing.assert_allclose(ctrl[slots, ctrl_start:ctrl_start + 29], targets, rtol=0, atol=1e-6)
        np.testing.assert_allclose(compiled_policy.last_action, reference.last_action, rtol=0, atol=1e-5)
        np.testing.assert_array_equal(compiled_policy.standing, reference.standing)
        np.testing.assert_allclose(compiled_policy.phase, reference.phase, rtol=0, atol=1e-12)
    assert not ctrl[[1, 4]].any() and not ctrl[:, :ctrl_start].any()  # other slots and columns untouched
    # the observation rows are build_obs's
    qpos, qvel = rng.normal(size=(env_num, nq)), rng.normal(size=(env_num, nv))
    expected_phase = reference.phase.copy()
    reference._advance_phase(slots, reference.clip_command(walk[slots]))
    expected = reference.build_obs(slots, qpos[slots, root_qpos + 3:root_qpos + 7], qvel[slots, root_dof + 3:root_dof + 6],
                                   qpos[slots, joint_qpos:joint_qpos + 29], qvel[slots, joint_dof:joint_dof + 29],
                                   reference.clip_command(walk[slots]))
    assert not np.array_equal(expected_phase, reference.phase)
    np.testing.assert_allclose(compiled.observations(slots, qpos, qvel, walk), expected, rtol=0, atol=1e-6)


def test_a_robots_action_does_not_depend_on_the_other_robots_in_the_call():
    """One onnxruntime thread unless asked for more: the network's output for each robot is the
    one it gets alone, whatever the batch (the first 1-64 of 64 G1s' observations); two threads,
    on request, give the same actions to float32 rounding."""
    rng = np.random.default_rng(4)
    policy = g1.G1LocomotionPolicy(capacity=64)
    two = g1.G1LocomotionPolicy(capacity=64, intra_op_threads=2)
    assert (policy.intra_op_threads, two.intra_op_threads) == (1, 2)
    rows = np.arange(64)
    obs = policy.build_obs(rows, *_random_state(rng, 64, policy)).astype(np.float32)
    alone = np.concatenate([policy.infer(row) for row in obs[:, None]])
    for robots in range(1, 65):
        np.testing.assert_array_equal(policy.infer(obs[:robots]), alone[:robots], err_msg=f'{robots} robots')
    np.testing.assert_allclose(two.infer(obs), alone, rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match='intra_op_threads'):
        g1.G1LocomotionPolicy(capacity=1, intra_op_threads=0)


def test_batch_edit_only_frees_the_batch_dimension():
    import onnx
    import onnxruntime as ort

    raw = g1.holosoma_policy_path().read_bytes()
    original, edited = onnx.load_from_string(raw), onnx.load_from_string(g1.dynamic_batch_onnx(raw))
    for before, after in zip((*original.graph.input, *original.graph.output),
                             (*edited.graph.input, *edited.graph.output), strict=True):
        dims_before, dims_after = before.type.tensor_type.shape.dim, after.type.tensor_type.shape.dim
        assert dims_before[0].dim_value == 1 and dims_after[0].dim_param == 'batch' and not dims_after[0].dim_value
        assert [d.dim_value for d in dims_before[1:]] == [d.dim_value for d in dims_after[1:]]
    # Everything else (weights, nodes, metadata) is unchanged.
    for proto in (original, edited):
        for value in (*proto.graph.input, *proto.graph.output):
            value.type.tensor_type.shape.dim[0].Clear()
    assert original.SerializeToString() == edited.SerializeToString()
    # The fixed-batch file and the edited one compute the same rows.
    obs = np.random.default_rng(2).normal(size=(4, 100)).astype(np.float32)
    fixed = ort.InferenceSession(raw, providers=['CPUExecutionProvider'])
    free = ort.InferenceSession(g1.dynamic_batch_onnx(raw), providers=['CPUExecutionProvider'])
    name = fixed.get_inputs()[0].name
    rows = np.concatenate([fixed.run(None, {name: obs[i:i + 1]})[0] for i in range(4)])
    np.testing.assert_allclose(free.run(None, {name: obs})[0], rows, atol=1e-6)


def test_observation_and_stand_phase(policy2):
    p = policy2
    p.reset([0, 1])
    quat = np.array([[1.0, 0, 0, 0]] * 2)
    zeros3, q, dq = np.zeros((2, 3)), np.tile(p.default_joint_pos, (2, 1)), np.zeros((2, 29))
    cmd = np.array([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]])  # robot 0: clipped to 1 m/s; robot 1: stand
    p.act([0, 1], quat, zeros3, q, dq, cmd)
    assert not p.standing[0] and p.standing[1]
    np.testing.assert_allclose(p.phase[0], [p.phase_dt, p.phase_dt - math.pi])
    np.testing.assert_allclose(p.phase[1], [math.pi, math.pi])
    obs = p.build_obs(np.array([0, 1]), quat, zeros3, q, dq, p.clip_command(cmd))
    cols = {}
    start = 0
    for name, width, _ in g1.OBS_LAYOUT:
        cols[name] = slice(start, start + width)
        start += width
    np.testing.assert_allclose(obs[0, cols['command_lin_vel']], [1.0, 0.0])
    np.testing.assert_allclose(obs[:, cols['projected_gravity']], [[0, 0, -1]] * 2)
    np.testing.assert_allclose(obs[:, cols['dof_pos']], 0.0)
    np.testing.assert_allclose(obs[:, cols['actions']], p.last_action)
    np.testing.assert_allclose(obs[1, cols['cos_phase']], [-1.0, -1.0], atol=1e-6)
    # first non-zero command after standing restarts the gait clock at [0, pi]
    p.act([1], quat[:1], zeros3[:1], q[:1], dq[:1], np.array([[0.3, 0.0, 0.0]]))
    np.testing.assert_allclose(p.phase[1], [0.0, math.pi])
    assert not p.standing[1]


def test_spec_is_attachable(policy2):
    spec = g1.build_g1_spec(policy2)
    model = spec.compile()
    assert model.nlight == 0 and model.nkey == 0 and model.nu == 29
    assert [model.actuator(i).name for i in range(model.nu)] == list(policy2.joint_names)
    np.testing.assert_allclose(model.actuator_gainprm[:, 0], policy2.kp)
    np.testing.assert_allclose(model.actuator_biasprm[:, 1:3], -np.stack([policy2.kp, policy2.kd], axis=1))
    np.testing.assert_allclose(model.actuator_forcerange[:, 1], policy2.effort_limit)
    assert model.body(1).name == 'pelvis' and model.jnt_type[model.body_jntadr[1]] == mujoco.mjtJoint.mjJNT_FREE
    world = _world(policy2, 3)
    assert world.nu == 3 * 29 and world.opt.timestep == pytest.approx(PHYSICS_DT)
    assert world.nmesh == model.nmesh  # dedup_assets shares the meshes


def test_g1_walks_and_turns(policy2):
    """env0 walks forward at 0.5 m/s, env1 turns at 0.5 rad/s: 20 s at dt=1/240, policy at 50 Hz."""
    policy = policy2
    model = _world(policy, 2)
    data = mujoco.MjData(model)
    robots = [g1.G1Indices.from_model(model, f'env{i}/', policy.joint_names) for i in range(2)]
    for r in robots:
        data.qpos[r.joint_qpos] = policy.default_joint_pos
        data.ctrl[r.ctrl] = policy.default_joint_pos
    mujoco.mj_forward(model, data)
    rows = np.arange(2)
    policy.reset(rows)
    ctrl = np.stack([r.ctrl for r in robots])
    command = np.array([[0.5, 0.0, 0.0], [0.0, 0.0, 0.5]])

    next_policy_time, t_measure = 0.0, 2.0
    start_xy = start_yaw = None
    yaw_prev = np.zeros(2)
    yaw_unwrapped = np.zeros(2)
    min_height = np.inf
    while data.time < 20.0 - 1e-9:
        if data.time >= next_policy_time - 1e-9:
            quat, ang_vel, q, dq = g1.gather_state(data, robots)
            data.ctrl[ctrl] = policy.act(rows, quat, ang_vel, q, dq, command)
            next_policy_time += policy.control_dt
            yaw = 2.0 * np.arctan2(quat[:, 3], quat[:, 0])
            yaw_unwrapped += (yaw - yaw_prev + np.pi) % (2 * np.pi) - np.pi
            yaw_prev = yaw
            if start_xy is None and data.time >= t_measure:
                t_measure = data.time
                start_xy = np.array([data.qpos[r.root_qpos:r.root_qpos + 2] for r in robots])
                start_yaw = yaw_unwrapped.copy()
        mujoco.mj_step(model, data)
        min_height = min(min_height, min(data.xpos[r.pelvis_body][2] for r in robots))
        assert min_height > 0.5, f'a robot fell at t={data.time:.2f}s'

    elapsed = data.time - t_measure
    end_xy = np.array([data.qpos[r.root_qpos:r.root_qpos + 2] for r in robots])
    forward_speed = (end_xy[0, 0] - start_xy[0, 0]) / elapsed
    yaw_rate = (yaw_unwrapped[1] - start_yaw[1]) / elapsed
    assert forward_speed == pytest.approx(0.5, rel=0.3), forward_speed
    assert yaw_rate == pytest.approx(0.5, rel=0.3), yaw_rate
    assert abs(end_xy[0, 1] - start_xy[0, 1]) < 1.5  # walks roughly straight
    assert np.linalg.norm(end_xy[1] - start_xy[1]) < 1.5  # turns roughly in place
