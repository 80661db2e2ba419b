"""GR1Robot: upstream's joint names and orders, the model from fourier-robot-descriptions (54 joints,
mimic equalities, effort limits, sole sensors), the default GR1 walking with the shipped policy, the
carried GR1 reaching a point, its head cameras, teleoperation targets, and the failure paths
(missing package, bad actions)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

pytest.importorskip('fourier_robot_descriptions', reason='the GR1 model: pip install --no-deps fourier-robot-descriptions')

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.macros import gm  # noqa: E402
from internutopia_extension import import_extensions  # noqa: E402
from internutopia_extension.configs.robots import gr1 as cfgs  # noqa: E402
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg  # noqa: E402
from internutopia_extension.robots import gr1_model as model  # noqa: E402

NAME = 'gr1'
ENVS = 2
#: The fingers' driven joints and the joints that follow them, by the URDF's mimic ratios.
MIMIC = {'index_intermediate': ('index_proximal', 1.0), 'middle_intermediate': ('middle_proximal', 1.0),
         'ring_intermediate': ('ring_proximal', 1.0), 'pinky_intermediate': ('pinky_proximal', 1.0),
         'thumb_distal': ('thumb_proximal_pitch', 2.4)}


def _breadth_first(compiled: mujoco.MjModel, root: str, merge_fixed: bool = True) -> list[str]:
    """Hinge joints level by level from body ``root`` over the undirected body tree, bodies joined
    without a joint taken as one link (``merge_fixed``) or as a level of their own, each link's
    children by name after those of the links before it (how Isaac orders an articulation's joints)."""
    joint_of = {int(compiled.jnt_bodyid[j]): compiled.joint(j).name for j in range(compiled.njnt)
                if compiled.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE}
    edges: dict[int, list[tuple[int, str | None]]] = {i: [] for i in range(1, compiled.nbody)}
    for body in range(2, compiled.nbody):  # (body 1, the pelvis, hangs from the world by its free joint)
        parent, joint = int(compiled.body_parentid[body]), joint_of.get(body)
        edges[body].append((parent, joint))
        edges[parent].append((body, joint))

    def link(body: int, seen: set[int]) -> list[tuple[int, int, str | None]]:
        """The hinge edges ``(from, to, joint)`` out of the rigid group of ``body``."""
        seen.add(body)
        out = []
        for nxt, joint in edges[body]:
            if nxt in seen:
                continue
            if joint is None and merge_fixed:
                out.extend(link(nxt, seen))
            else:
                out.append((body, nxt, joint))
        return sorted(out, key=lambda edge: compiled.body(edge[1]).name)

    seen: set[int] = set()
    level, names = link(compiled.body(root).id, seen), list[str]()
    while level:
        names.extend(joint for _, _, joint in level if joint is not None)
        level = [edge for _, nxt, _ in level for edge in link(nxt, seen)]
    # The hands' joints come after the body's (in upstream's lists too).
    return [n for n in names if n[:2] not in ('L_', 'R_')] + [n for n in names if n[:2] in ('L_', 'R_')]


@pytest.fixture(scope='module')
def walking() -> mujoco.MjModel:
    return model.walking_spec().compile()


def test_joint_names_are_upstreams_in_upstreams_orders(walking):
    hinges = [walking.joint(j).name for j in range(walking.njnt) if walking.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    assert len(cfgs.GR1_JOINT_NAMES) == len(set(cfgs.GR1_JOINT_NAMES)) == 54
    assert sorted(hinges) == sorted(cfgs.GR1_JOINT_NAMES) == sorted(cfgs.GR1_TELEOP_JOINT_NAMES) == sorted(cfgs.GR1_POLICY_JOINT_NAMES)
    assert 'L_thumb_intermediate_joint' not in hinges  # upstream's GR1 has 11 joints per hand
    # Isaac's order: breadth first from the articulation's root (the torso in upstream's USD, whose
    # robot base is torso_link), then the fingers; the teleoperation targets go from the pelvis.
    assert _breadth_first(walking, 'torso_link') == cfgs.GR1_JOINT_NAMES
    assert _breadth_first(walking, 'base_link', merge_fixed=False) == cfgs.GR1_TELEOP_JOINT_NAMES
    assert cfgs.GR1_JOINT_NAMES[:4] == ['head_roll_joint', 'left_shoulder_pitch_joint', 'right_shoulder_pitch_joint', 'waist_roll_joint']
    assert cfgs.move_by_speed_cfg.joint_names == cfgs.GR1_POLICY_JOINT_NAMES
    assert cfgs.GR1_POLICY_JOINT_NAMES[:3] == ['left_hip_roll_joint', 'left_hip_yaw_joint', 'left_hip_pitch_joint']
    assert (cfgs.camera_left_cfg.prim_path, cfgs.camera_right_cfg.prim_path) == ('head_yaw_link/CameraLeft', 'head_yaw_link/CameraRight')


def test_the_model_has_a_free_pelvis_servos_at_the_urdfs_limits_and_sole_sensors(walking):
    root = walking.joint('root')
    assert root.type == mujoco.mjtJoint.mjJNT_FREE and walking.body(int(root.bodyid[0])).name == 'base_link'
    assert walking.nu == 54 and 50 < walking.body_subtreemass[1] < 60  # the URDF's 54.9 kg
    efforts = model.urdf_effort_limits(model.gr1_urdf_path())
    for joint in ('left_knee_pitch_joint', 'waist_yaw_joint', 'right_wrist_pitch_joint', 'L_index_proximal_joint'):
        np.testing.assert_allclose(walking.actuator(joint).forcerange, [-efforts[joint], efforts[joint]])
    assert efforts['left_knee_pitch_joint'] > 100  # (N m: a leg motor, not a placeholder)
    assert not np.any(walking.body_gravcomp)  # physics-honest: nothing holds it up
    for foot in model.FEET:
        for kind in ('touch', 'pos', 'vel'):
            walking.sensor(f'{foot}_sole_{kind}')
    assert walking.nmesh > 50 and np.any(walking.geom_type == mujoco.mjtGeom.mjGEOM_MESH)  # the visual meshes kept
    carried = model.carried_spec('target').compile()
    assert np.all(carried.body_gravcomp[1:carried.nbody - 1] == 1.0) and carried.body('target').mocapid[0] == 0


def test_mimic_joints_follow_their_driven_joints_and_the_standing_height_puts_the_soles_on_the_floor(walking):
    hanging = model.walking_spec().compile()
    hanging.body_gravcomp[:] = 1.0  # (the body hangs still in the air; only the fingers move)
    data = mujoco.MjData(hanging)
    data.qpos[2:4] = (2.0, 1.0)
    # Only the driven joints are told to close; the coupled joints' own servos stay at 0.
    for hand in 'LR':
        for leader, _ in set(MIMIC.values()):
            data.ctrl[hanging.actuator(f'{hand}_{leader}_joint').id] = 0.6
    for _ in range(400):
        mujoco.mj_step(hanging, data)
    assert hanging.neq == 10 and all(hanging.eq_type == mujoco.mjtEq.mjEQ_JOINT)
    for hand in 'LR':
        for follower, (leader, ratio) in MIMIC.items():
            lead, follow = data.joint(f'{hand}_{leader}_joint').qpos[0], data.joint(f'{hand}_{follower}_joint').qpos[0]
            assert lead > 0.3 and follow == pytest.approx(ratio * lead, abs=0.02), (hand, follower, lead, follow)
    # Standing pose, pelvis at STANDING_HEIGHT: the soles' lowest points at the floor.
    fresh = model.walking_spec().compile()
    data = mujoco.MjData(fresh)
    data.qpos[2], data.qpos[3] = model.STANDING_HEIGHT, 1.0
    for name, value in model.STANDING_POSE.items():
        data.qpos[fresh.joint(name).qposadr[0]] = value
    mujoco.mj_forward(fresh, data)
    feet = [fresh.body(model.FOOT_BODY[f]).id for f in model.FEET]
    bottoms = [data.geom_xpos[g, 2] - fresh.geom_size[g, 0] for g in range(fresh.ngeom)
               if fresh.geom_bodyid[g] in feet and fresh.geom_contype[g]]
    assert len(bottoms) == 4 and max(abs(b) for b in bottoms) < 0.002


def _env(controllers, sensors=None, physics_dt=1 / 100, **fields):
    import_extensions()
    robot = cfgs.GR1RobotCfg(controllers=controllers, sensors=sensors, **fields)
    task = SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', robots=[robot])
    return Env(Config(simulator=SimConfig(physics_dt=physics_dt, rendering_dt=physics_dt), env_num=ENVS, env_offset_size=10,
                      metrics_save_path='none', task_configs=[task] * 50))


@pytest.fixture(scope='module')
def env():
    small = {'resolution': (96, 64)}
    env = _env([cfgs.move_to_point_cfg, cfgs.teleop_cfg, cfgs.move_by_speed_cfg],
               [cfgs.camera_left_cfg.model_copy(update=small), cfgs.camera_right_cfg.model_copy(update=small)], locomotion='carried')
    yield env
    env.close()


def test_a_carried_gr1_reaches_a_point_standing_with_its_54_joints_observed(env):
    obs, _ = env.reset()
    robot = obs[0][NAME]
    assert robot['joint_positions'].shape == robot['joint_velocities'].shape == (54,)
    knee = cfgs.GR1_JOINT_NAMES.index('left_knee_pitch_joint')
    assert robot['joint_positions'][knee] == pytest.approx(model.STANDING_POSE['left_knee_pitch_joint'])
    # Upstream spawns GR1 at 0.95 m: the carried pelvis stands at its standing height instead.
    assert robot['position'][2] == pytest.approx(model.STANDING_HEIGHT, abs=0.005)
    target = (1.5, 1.0, 0.0)
    for _ in range(400):
        obs, *_ = env.step([{NAME: {'move_to_point': [target]}}] * ENVS)
        if all(o[NAME]['controllers']['move_to_point']['finished'] for o in obs):
            break
    for slot in range(ENVS):
        robot = obs[slot][NAME]
        assert robot['controllers']['move_to_point']['finished']
        assert np.linalg.norm(robot['position'][:2] - target[:2]) < 0.1
        assert robot['position'][2] == pytest.approx(model.STANDING_HEIGHT, abs=0.01)
        assert np.abs(robot['orientation'][1:3]).max() < 0.02  # upright
        assert np.abs(robot['joint_positions'][knee] - model.STANDING_POSE['left_knee_pitch_joint']) < 0.05


def test_the_head_cameras_see_the_scene_from_two_eyes(env):
    env.reset()
    obs, *_ = env.step([{}] * ENVS)
    sensors = obs[0][NAME]['sensors']
    left, right = sensors['camera_left']['rgba'], sensors['camera_right']['rgba']
    assert left.shape == right.shape == (64, 96, 4)
    rows = left[..., :3].astype(float).mean(axis=(1, 2))
    assert rows.std() > 10  # sky above, floor below: not a blank (or an inside-the-head) image
    assert not np.array_equal(left, right)


def test_teleop_targets_move_the_joints_in_its_order(env):
    env.reset()
    targets = np.zeros(54)
    names = cfgs.GR1_TELEOP_JOINT_NAMES
    targets[names.index('head_yaw_joint')] = 0.5
    targets[names.index('left_elbow_pitch_joint')] = -1.0
    for _ in range(100):
        obs, *_ = env.step([{NAME: {'teleop': targets}}] * ENVS)
    joints = obs[0][NAME]['joint_positions']
    assert joints[cfgs.GR1_JOINT_NAMES.index('head_yaw_joint')] == pytest.approx(0.5, abs=0.03)
    assert joints[cfgs.GR1_JOINT_NAMES.index('left_elbow_pitch_joint')] == pytest.approx(-1.0, abs=0.05)


def test_move_by_speed_takes_upstreams_optional_nones_and_refuses_values(env):
    env.reset()
    obs, *_ = env.step([{NAME: {'move_by_speed': [0.5, 0.0, 0.0, None, None]}}] * ENVS)
    before = obs[0][NAME]['position'].copy()
    with pytest.raises(ValueError, match='pelvis height'):
        env.step([{NAME: {'move_by_speed': [0.5, 0.0, 0.0, 0.8]}}] * ENVS)
    for _ in range(20):
        obs, *_ = env.step([{NAME: {'move_by_speed': (0.5, 0.0, 0.0)}}] * ENVS)
    assert obs[0][NAME]['position'][0] - before[0] == pytest.approx(0.1, abs=0.03)  # 0.5 m/s for 0.2 s


def test_by_default_gr1_walks_on_its_free_pelvis_with_the_shipped_policy_and_stops_upright():
    """``GR1RobotCfg()`` walks (upstream's spawn, its ``move_by_speed`` command): nothing holds the
    pelvis, 0.5 m/s forward for 4 s (from standing, the command ramping up) takes it over 1.2 m
    along its heading; told to stand it stays up, and holds the spot it stopped at (its policy alone
    creeps ~5 mm/s, 30 mm in the 6 s measured here; the walker's stand hold keeps it within 10 mm)."""
    from internutopia_extension.robots.gr1_locomotion.walker import POLICY_PATH

    assert cfgs.GR1RobotCfg().locomotion == 'walking' and POLICY_PATH.is_file()
    env = _env([cfgs.move_by_speed_cfg], physics_dt=1 / 240)
    try:
        obs, _ = env.reset()
        group = env.runner.slot_robots[0][NAME]
        assert group.walker is not None and group.walker.policy is not None and not group.carried
        assert group.walker.stand_hold is not None
        start = np.array([o[NAME]['position'] for o in obs])
        for _ in range(240 * 4):
            obs, *_ = env.step([{NAME: {'move_by_speed': [0.5, 0.0, 0.0]}}] * ENVS)
        walked = np.array([o[NAME]['position'] for o in obs]) - start
        assert np.all(walked[:, 0] > 1.2) and np.all(np.abs(walked[:, 1]) < 0.5), walked
        for _ in range(240 * 3):
            obs, *_ = env.step([{NAME: {'move_by_speed': [0.0, 0.0, 0.0]}}] * ENVS)
        assert not group.locomotion_rewards.fallen(group.walker.state(np.arange(ENVS))).any()
        assert all(o[NAME]['position'][2] > 0.8 for o in obs)

        def heading(observations):
            quat = np.array([o[NAME]['orientation'] for o in observations])
            return 2.0 * np.arctan2(quat[:, 3], quat[:, 0])

        stood, stood_heading = np.array([o[NAME]['position'][:2] for o in obs]), heading(obs)
        for _ in range(240 * 6):
            obs, *_ = env.step([{NAME: {'move_by_speed': [0.0, 0.0, 0.0]}}] * ENVS)
        drift = np.linalg.norm(np.array([o[NAME]['position'][:2] for o in obs]) - stood, axis=1)
        assert np.all(drift < 0.01), drift
        assert np.all(np.abs(heading(obs) - stood_heading) < 0.02)
    finally:
        env.close()


def test_walking_stand_hold_false_runs_the_policy_alone_and_a_training_loop_never_gets_a_hold():
    """Without the hold the shipped policy, told to stand, creeps (what the hold corrects)."""
    env = _env([cfgs.move_by_speed_cfg], physics_dt=1 / 240, walking_stand_hold=False)
    try:
        obs, _ = env.reset()
        walker = env.runner.slot_robots[0][NAME].walker
        assert walker.policy is not None and walker.stand_hold is None
        stand = [{NAME: {'move_by_speed': [0.0, 0.0, 0.0]}}] * ENVS
        for _ in range(240 * 2):  # settled on its feet
            obs, *_ = env.step(stand)
        settled = np.array([o[NAME]['position'][:2] for o in obs])
        for _ in range(240 * 6):
            obs, *_ = env.step(stand)
        drift = np.linalg.norm(np.array([o[NAME]['position'][:2] for o in obs]) - settled, axis=1)
        assert np.all(drift > 0.015), drift  # about 5 mm/s; the held GR1 of the test above stays within 10 mm
    finally:
        env.close()
    env = _env([cfgs.move_by_speed_cfg], physics_dt=1 / 240, walking_policy='controller')
    try:
        env.reset()
        assert env.runner.slot_robots[0][NAME].walker.stand_hold is None
    finally:
        env.close()


def test_whole_body_teleop_on_a_walking_gr1_is_warned_about_and_the_carried_one_is_not():
    """``teleop`` sets all 54 joints, legs included: on the walking default it would override the
    walking policy between its ticks, so binding it warns and names the fix; carried, it is quiet."""
    import warnings

    env = _env([cfgs.teleop_cfg])
    try:
        with pytest.warns(UserWarning, match="'teleop' of robot 'gr1' drives 12 joints its walker sets.*locomotion='carried'"):
            env.reset()
    finally:
        env.close()
    env = _env([cfgs.teleop_cfg], locomotion='carried')
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            env.reset()
    finally:
        env.close()


def test_a_walking_gr1_takes_its_leg_actions_and_commands_through_its_walker():
    from internutopia_extension.robots.gr1_locomotion import gait

    env = _env([cfgs.move_by_speed_cfg], physics_dt=1 / 200, locomotion='walking', walking_policy='controller')
    try:
        obs, _ = env.reset()
        for _ in range(20):  # 0.1 s: the command ramps up, the legs hold the standing targets
            obs, *_ = env.step([{NAME: {'move_by_speed': [0.8, 0.0, 0.0]}}] * ENVS)
        robot = obs[0][NAME]
        policy_obs = robot['policy_obs']
        assert policy_obs.shape == (gait.OBS_SIZE,) == (50,)
        np.testing.assert_allclose(policy_obs[6:9], [0.0, 0.0, -1.0], atol=0.05)  # upright, on its soles
        assert 0.05 < policy_obs[9] / gait.COMMAND_SCALE[0] < 0.8  # the followed command, ramping towards 0.8
        assert robot['position'][2] == pytest.approx(model.STANDING_HEIGHT, abs=0.03)
        legs = [cfgs.GR1_JOINT_NAMES.index(n) for n in gait.LEG_JOINTS]
        np.testing.assert_allclose(robot['joint_positions'][legs], gait.LEG_STANDING, atol=0.1)
    finally:
        env.close()


def test_a_walking_gr1s_arms_and_hands_follow_a_joint_controller_while_its_walker_holds_the_legs():
    """The issue's "arms and hands hold a pose or follow joint_controller while the legs walk": a
    ``JointControllerCfg`` over the arm and hand joints drives them; the walker keeps the legs."""
    from internutopia_extension.configs.controllers import JointControllerCfg
    from internutopia_extension.robots.gr1_locomotion import gait

    upper = [n for n in cfgs.GR1_JOINT_NAMES if n.startswith(('L_', 'R_')) or any(k in n for k in ('shoulder', 'elbow', 'wrist'))]
    assert len(upper) == 36  # 7 per arm, 11 per hand
    arms = JointControllerCfg(name='arms', joint_names=upper)
    target = np.zeros(len(upper))
    target[[upper.index('left_shoulder_pitch_joint'), upper.index('right_shoulder_pitch_joint')]] = -0.6  # arms forward
    target[[upper.index('L_index_proximal_joint'), upper.index('R_index_proximal_joint')]] = 1.0  # index fingers curled
    env = _env([cfgs.move_by_speed_cfg, arms], physics_dt=1 / 200, locomotion='walking', walking_policy='controller')
    try:
        env.reset()
        for _ in range(100):  # 0.5 s
            obs, *_ = env.step([{NAME: {'move_by_speed': [0.0, 0.0, 0.0], 'arms': target}}] * ENVS)
        for slot in range(ENVS):
            robot = obs[slot][NAME]
            joints = dict(zip(cfgs.GR1_JOINT_NAMES, robot['joint_positions'], strict=True))
            for name in ('left_shoulder_pitch_joint', 'right_shoulder_pitch_joint'):
                assert joints[name] == pytest.approx(-0.6, abs=0.1), name
            for name in ('L_index_proximal_joint', 'R_index_proximal_joint'):
                assert joints[name] == pytest.approx(1.0, abs=0.15), name
            legs = [joints[n] for n in gait.LEG_JOINTS]
            # (near the standing pose: nothing balances a robot without a policy, the knees give a little)
            np.testing.assert_allclose(legs, gait.LEG_STANDING, atol=0.2)
            assert robot['position'][2] == pytest.approx(model.STANDING_HEIGHT, abs=0.05)  # still upright
        group = env.runner.slot_robots[0][NAME]
        slots = np.arange(ENVS)
        leg_servos = group.bound_world.data.ctrl[slots[:, None], group.ids(slots, 'actuator', list(gait.LEG_JOINTS))]
        np.testing.assert_allclose(leg_servos, np.tile(gait.LEG_STANDING, (ENVS, 1)))  # the walker's targets, untouched
    finally:
        env.close()


def test_the_gaits_mirror_map_is_the_models_mirror_image(walking):
    """A leg pose and its mirror (:func:`gait.mirror_action` applied to joint offsets) put the soles
    at mirrored places: the sign table matches the URDF's joint axes."""
    from internutopia_extension.robots.gr1_locomotion import gait

    data = mujoco.MjData(walking)
    adr = [walking.joint(n).qposadr[0] for n in gait.LEG_JOINTS]
    offsets = np.random.default_rng(0).uniform(-0.3, 0.3, (1, 12))

    def soles(legs):
        data.qpos[:] = 0.0
        data.qpos[3] = 1.0
        data.qpos[adr] = gait.LEG_STANDING + legs[0]
        mujoco.mj_forward(walking, data)
        return np.array([data.site(f'{foot}_sole').xpos for foot in model.FEET])

    original, mirrored = soles(offsets), soles(gait.mirror_action(offsets))
    np.testing.assert_allclose(mirrored[::-1] * [1, -1, 1], original, atol=2e-3)


def test_the_walking_model_stands_on_its_soles_under_physics(walking):
    """Nothing holds the walking model up: dropped in its standing pose, its soles carry its weight
    (what a walking controller reads); with no policy balancing it, it falls within seconds."""
    spec = model.walking_spec()
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[5, 5, 0.1])
    spec.option.timestep = model.WALKING_PHYSICS_DT
    compiled = spec.compile()
    data = mujoco.MjData(compiled)
    data.qpos[2:4] = (model.STANDING_HEIGHT + 0.01, 1.0)
    for name, value in model.STANDING_POSE.items():
        data.qpos[compiled.joint(name).qposadr[0]] = value
        data.ctrl[compiled.actuator(name).id] = value
    mujoco.mj_step(compiled, data, nstep=100)  # 0.5 s
    weight = compiled.body_subtreemass[1] * 9.81
    touch = sum(data.sensor(f'{foot}_sole_touch').data[0] for foot in model.FEET)
    assert touch == pytest.approx(weight, rel=0.2)
    assert data.sensor('left_sole_pos').data[1] > 0.05 > -0.05 > data.sensor('right_sole_pos').data[1]
    mujoco.mj_step(compiled, data, nstep=1000)  # 5 s more
    assert data.qpos[2] < 0.5  # fallen: no balance without a policy


def test_a_missing_model_package_is_named(monkeypatch):
    import importlib.util

    from internutopia.core.extras import MissingExtraError, declared_extra

    extra = declared_extra('robot', 'GR1Robot')
    assert extra is not None and extra.install == model.GR1_INSTALL
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, 'find_spec', lambda name, *args: None if name == model.GR1_PACKAGE else find_spec(name, *args))
    config = Config(task_configs=[SingleInferenceTaskCfg(robots=[cfgs.GR1RobotCfg()])], metrics_save_path='none')
    with pytest.raises(MissingExtraError, match='GR1Robot.*pip install --no-deps fourier-robot-descriptions'):
        Env(config)
    monkeypatch.setattr(importlib.util, 'find_spec', find_spec)
    monkeypatch.setattr(model, 'GR1_PACKAGE', 'no_such_package_for_gr1')
    model._urdf_spec.cache_clear()
    try:
        with pytest.raises(ImportError, match='GR1Robot needs .*pip install --no-deps fourier-robot-descriptions'):
            model.gr1_base_spec({})
    finally:
        model._urdf_spec.cache_clear()


def test_a_slots_robot_has_internutopias_gr1_methods(env):
    """Upstream's GR1 looks its base (the torso) and IMU up by prim path after a reset."""
    env.reset()
    obs, *_ = env.step([{}] * ENVS)
    robot = env.runner.current_tasks[next(iter(env.runner.current_tasks))].robots[NAME]
    base = robot.get_robot_base().get_pose()[0]
    np.testing.assert_allclose(base, robot._rigid_body_map['/gr1/torso_link'].get_pose()[0])
    pelvis = obs[0][NAME]['position']
    assert 0.3 < base[2] - pelvis[2] < 0.35  # the torso link sits 0.33 m above the pelvis
    assert robot._imu_in_torso.get_pose()[0][2] == pytest.approx(pelvis[2] - 0.0596, abs=0.005)  # the URDF's imu_link


def test_a_walking_gr1_trains_in_the_locomotion_task_with_its_leg_actions_and_rewards():
    """The pieces a trainer needs fit: GR1's episodes, its 12 leg actions, its rewards and fall
    check. With zero actions (no policy) it stands a moment, earning reward, then falls."""
    from internutopia_extension.robots.gr1_locomotion import episodes, gait, rewards

    task = episodes.gr1_walk_sampler(batch=1, seconds=8.0, pushes=False)(np.random.default_rng(3))[0]
    assert task.robots[0].locomotion == 'walking' and task.robots[0].position[2] == episodes.START_HEIGHT and task.robot == NAME
    config = Config(simulator=SimConfig(physics_dt=episodes.PHYSICS_DT, rendering_dt=episodes.PHYSICS_DT), env_num=1,
                    env_offset_size=3.0, metrics_save_path='none', task_configs=[task])
    with Env(config) as env:
        env.reset()
        with pytest.raises(ValueError, match='leg_action expects 12 leg actions'):
            env.step_arrays({NAME: {'leg_action': np.zeros((1, 10))}})
        earned, out = [], None
        for _ in range(1600):  # 8 s at most
            out = env.step_arrays({NAME: {'leg_action': np.zeros((1, gait.ACTION_SIZE))}})
            earned.append(float(out.reward[0]))
            if out.terminated[0]:
                break
    assert out is not None and out.terminated[0] and out.metrics[0]['fell'] is True
    assert 0.5 < out.metrics[0]['seconds'] < 6.0
    assert sum(earned[:100]) > 0  # standing, the first half second pays
    assert rewards.BASE_HEIGHT < model.STANDING_HEIGHT
