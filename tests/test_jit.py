"""Compiled kernels (numba) against their numpy reference, and the switch that turns them off."""

from __future__ import annotations

import doctest
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import internutopia.core.util.jit as jit
import internutopia.core.util.math as rotation_math
import internutopia_extension.controllers.base_motion as base_motion
import internutopia_extension.controllers.holonomic_base as holonomic_base
import internutopia_extension.controllers.steering as steering
from internutopia.core.util.math import yaw_to_quat

# numba is a dependency wherever it is published (see pyproject.toml); there the kernels must run.
NUMBA_EXPECTED = sys.version_info < (3, 15) and os.environ.get(jit.ENV_SWITCH, '1') not in ('0', 'false', 'off', 'no')


def test_kernels_are_available_where_numba_is_a_dependency():
    assert steering._steer_kernel.available == NUMBA_EXPECTED
    assert holonomic_base._carry_kernel.available == NUMBA_EXPECTED
    assert steering.FOLLOW_KERNEL.available == NUMBA_EXPECTED
    import internutopia_extension.controllers.differential_drive as differential_drive

    assert differential_drive._wheels_kernel.available == NUMBA_EXPECTED


@pytest.mark.skipif(not NUMBA_EXPECTED, reason='numba is not a dependency on this Python')
@pytest.mark.parametrize('seed', range(5))
def test_steer_kernel_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    k = 97
    position = rng.normal(size=(k, 3))
    orientation = yaw_to_quat(rng.uniform(-np.pi, np.pi, k)) + rng.normal(scale=0.05, size=(k, 4))  # slightly tilted
    orientation /= np.linalg.norm(orientation, axis=1, keepdims=True)
    goal = position + rng.normal(scale=2.0, size=(k, 3))
    goal[:10, :2] = position[:10, :2] + 0.01  # within the threshold: these stop
    speeds = (float(rng.uniform(0.1, 2.0)), float(rng.uniform(0.1, 2.0)), 0.05)
    expected_velocity, expected_arrived = steering._steer_numpy(position, orientation, goal, *speeds)
    velocity, arrived = np.empty((k, 3)), np.empty(k, dtype=bool)
    steering._steer_kernel(position, orientation, goal, *speeds[:2], np.full(k, speeds[2]), velocity, arrived)
    np.testing.assert_array_equal(arrived, expected_arrived)
    assert arrived[:10].all() and not arrived[10:].all()
    np.testing.assert_allclose(velocity, expected_velocity, rtol=0, atol=1e-12)
    # The public function takes the compiled path here and gives the same answer.
    public_velocity, _ = steering.steer_towards(position, orientation, goal, *speeds)
    np.testing.assert_array_equal(public_velocity, velocity)


@pytest.mark.skipif(not NUMBA_EXPECTED, reason='numba is not a dependency on this Python')
@pytest.mark.parametrize('slots', [np.arange(8), np.array([1, 4, 6])], ids=['every slot', 'some slots'])
def test_carry_kernel_matches_numpy(slots):
    rng = np.random.default_rng(3)
    # The world's mocap arrays are strided views of the batch's state rows: build them the same way.
    state = rng.normal(size=(8, 40))
    mocap_pos = state[:, 5:17].reshape(8, 2, 6)[:, :, :3]
    mocap_quat = state[:, 20:28].reshape(8, 2, 4)
    mocap_quat[:] = yaw_to_quat(rng.uniform(-np.pi, np.pi, (8, 2)))
    before_pos, before_quat = mocap_pos.copy(), mocap_quat.copy()
    expected_pos, expected_quat = mocap_pos.copy(), mocap_quat.copy()
    velocity = rng.normal(size=(len(slots), 3))
    for _ in range(50):
        holonomic_base._carry_numpy(expected_pos, expected_quat, slots, 1, velocity, 1 / 240)
        holonomic_base._carry_kernel(mocap_pos, mocap_quat, slots, 1, velocity, 1 / 240, np.inf, np.inf, np.inf)  # no clamp
    np.testing.assert_allclose(mocap_pos, expected_pos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mocap_quat, expected_quat, rtol=0, atol=1e-12)
    assert not np.allclose(mocap_pos[slots, 1], before_pos[slots, 1])  # the commanded targets moved
    others = np.ones((8, 2), dtype=bool)
    others[slots, 1] = False
    np.testing.assert_array_equal(mocap_pos[others], before_pos[others])  # every other target stayed
    np.testing.assert_array_equal(mocap_quat[others], before_quat[others])


def _last_json_line_with_jit_off_and_on(script: str) -> dict[str, dict]:
    """``{'0': ..., '1': ...}``: the last stdout line (JSON) of ``script`` run in a fresh process
    with ``INTERNUTOPIA_JIT`` off and on."""
    results = {}
    for switch in ('0', '1'):
        run = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=300,
                             env={**os.environ, jit.ENV_SWITCH: switch, 'MUJOCO_GL': os.environ.get('MUJOCO_GL', 'egl')})
        assert run.returncode == 0, run.stderr[-2000:]
        results[switch] = json.loads(run.stdout.strip().splitlines()[-1])
    return results


def test_switch_off_runs_numpy_with_the_same_motion():
    """``INTERNUTOPIA_JIT=0`` uses the numpy path; H1 follows the same path either way."""
    script = textwrap.dedent('''
        import json, numpy as np
        from internutopia.core.config import Config, SimConfig
        from internutopia.core.util import jit
        from internutopia.core.vec_env import Env
        from internutopia_extension import import_extensions
        from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_along_path_cfg, move_by_speed_cfg
        from internutopia_extension.configs.tasks import SingleInferenceTaskCfg
        import_extensions()
        # carried: the steering and the holonomic base are what the two paths compute
        task = SingleInferenceTaskCfg(robots=[H1RobotCfg(locomotion='carried', controllers=[move_by_speed_cfg, move_along_path_cfg])])
        env = Env(Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240), env_num=2,
                         metrics_save_path='none', task_configs=[task] * 2))
        env.reset()
        path = np.tile(np.array([[[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]]), (2, 1, 1))
        for _ in range(120):
            out = env.step_arrays({'h1': {'move_along_path': path}})
        print(json.dumps({'jit': jit.enabled(), 'position': out.obs['h1']['position'].tolist()}))
        env.close()
    ''')
    results = _last_json_line_with_jit_off_and_on(script)
    assert results['0']['jit'] is False
    assert results['1']['jit'] is NUMBA_EXPECTED
    off, on = np.array(results['0']['position']), np.array(results['1']['position'])
    assert np.linalg.norm(off[:, :2], axis=1).min() > 0.3  # the robots did walk
    np.testing.assert_allclose(on, off, atol=1e-6)


def test_module_examples():
    for module in (jit, rotation_math, base_motion, steering):
        failures, _ = doctest.testmod(module)
        assert failures == 0, module.__name__


_PATH_STATE = ('points', 'total_points', 'current_index', 'current_point', 'finished')


def _path_state(controller) -> dict:
    state = {name: getattr(controller, name).copy() for name in _PATH_STATE}
    state['point_finished'] = controller.point_controller.finished.copy()
    return state


def _set_path_state(controller, state: dict) -> None:
    for name in _PATH_STATE:
        setattr(controller, name, state[name].copy())
    controller.point_controller.finished[:] = state['point_finished']


@pytest.mark.skipif(not NUMBA_EXPECTED, reason='numba is not a dependency on this Python')
@pytest.mark.parametrize('shared', [True, False], ids=['one path for all (dict API)', 'a path per slot (array API)'])
def test_follow_kernel_matches_numpy(make_config, monkeypatch, shared):
    """``move_along_path`` in one compiled call gives the numpy chain's state and velocity commands,
    through restarts, arrivals, the last waypoint and finished slots."""
    from internutopia.core.vec_env import Env
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, move_along_path_cfg, move_by_speed_cfg
    from internutopia_extension.configs.tasks import FiniteStepTaskCfg

    k = 7
    task = FiniteStepTaskCfg(max_steps=100, robots=[JetbotRobotCfg(controllers=[move_by_speed_cfg, move_along_path_cfg])])
    with Env(make_config([task] * k, env_num=k)) as env:
        env.reset()
        controller = next(iter(env.runner.robot_groups.values())).controllers['move_along_path']
        rng = np.random.default_rng(11)
        commands: dict[int, np.ndarray] = {}

        def record(slots, velocity):
            for slot, row in zip(slots.tolist(), velocity, strict=True):
                commands[slot] = np.array(row)

        monkeypatch.setattr(controller.point_controller.velocity_controller, 'apply_base_velocity', record)
        slots = np.arange(k, dtype=np.intp)
        path = rng.normal(size=(3, 3))
        reached: set[str] = set()
        for step in range(40):
            if step % 10 == 0:  # a new path (longer, shorter, or for some slots only)
                path = rng.normal(size=(2 + step % 3, 3))
            if shared:
                paths = np.broadcast_to(path, (k,) + path.shape)
            else:
                paths = np.repeat(path[None], k, axis=0)
                paths[::3] = path[::-1]  # some slots follow another path
            # Robots near their current waypoint, so that arrivals (and the path's end) come often.
            target = controller.points[slots, np.minimum(controller.current_index, controller.points.shape[1] - 1)]
            position = target + rng.normal(scale=0.2, size=(k, 3))
            position[rng.random(k) < 0.5] = target[0]  # some on slot 0's waypoint: those arrive
            orientation = yaw_to_quat(rng.uniform(-np.pi, np.pi, k))
            # Written into the state, where the numpy chain reads them (poses()) and the kernel too (in place).
            positions, orientations = controller.robot.pose_views
            positions[slots] = position
            orientations[slots] = orientation
            np.testing.assert_array_equal(controller.robot.poses(slots)[0], position)
            before = _path_state(controller)
            commands.clear()
            controller._apply_numpy(slots, paths)
            expected, expected_commands = _path_state(controller), dict(commands)
            _set_path_state(controller, before)
            commands.clear()
            controller._apply_compiled(slots, paths)
            got = _path_state(controller)
            for name, value in expected.items():
                np.testing.assert_allclose(got[name], value, rtol=0, atol=1e-12, err_msg=f'{name} at step {step}')
            assert sorted(commands) == list(range(k))
            for slot in range(k):
                np.testing.assert_allclose(commands[slot], expected_commands[slot], rtol=0, atol=1e-12)
            reached |= {'finished'} if got['finished'].any() else set()
            reached |= {'advanced'} if (got['current_index'] > 0).any() else set()
            reached |= {'restarted'} if (got['current_index'] < before['current_index']).any() else set()
        assert reached == {'finished', 'advanced', 'restarted'}  # the scenario went through each case


@pytest.mark.skipif(not NUMBA_EXPECTED, reason='numba is not a dependency on this Python')
@pytest.mark.parametrize('slots', [np.arange(5), np.array([0, 3])], ids=['every slot', 'some slots'])
def test_wheels_kernel_matches_numpy(make_config, monkeypatch, slots):
    from types import SimpleNamespace

    import internutopia_extension.controllers.differential_drive as differential_drive
    from internutopia.core.vec_env import Env
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
    from internutopia_extension.configs.tasks import FiniteStepTaskCfg

    task = FiniteStepTaskCfg(max_steps=100, robots=[JetbotRobotCfg()])
    with Env(make_config([task] * 5, env_num=5)) as env:
        env.reset()
        controller = next(iter(env.runner.robot_groups.values())).controllers['move_by_speed']
        ctrl = controller.world.data.ctrl  # a strided view of the batch's state rows
        rng = np.random.default_rng(5)
        for commands, column, write in ((rng.normal(size=(len(slots), 2)), 1, controller.apply),
                                        (rng.normal(size=(len(slots), 3)), 2, controller.apply_base_velocity)):
            ctrl[:] = rng.normal(size=ctrl.shape)
            before = ctrl.copy()
            write(slots, commands)
            compiled = ctrl.copy()
            ctrl[:] = before
            with monkeypatch.context() as patch:
                patch.setattr(differential_drive, '_wheels_kernel', SimpleNamespace(available=False))
                write(slots, commands)
            np.testing.assert_allclose(compiled, ctrl, rtol=0, atol=1e-12)
            expected = controller.wheel_speeds(commands[:, 0], commands[:, column])
            np.testing.assert_allclose(ctrl[slots][:, list(controller.columns)], expected, rtol=0, atol=1e-12)
            others = np.ones(ctrl.shape, dtype=bool)
            others[np.ix_(slots, list(controller.columns))] = False
            np.testing.assert_array_equal(ctrl[others], before[others])  # nothing else was written


@pytest.mark.parametrize('robot', ['h1', 'franka'], ids=['free base (qpos)', 'mocap base'])
def test_pose_views_hold_what_poses_reads(make_config, robot):
    """Kernels read a robot's pose in place through ``pose_views``: the same numbers as ``poses()``,
    for every slot and for some, and live (a step's new pose is there without a new lookup)."""
    from internutopia.core.vec_env import Env
    from internutopia_extension.configs.robots.franka import FrankaRobotCfg
    from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_by_speed_cfg
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    if robot == 'h1':
        configs = [H1RobotCfg(position=(0.5 * i, 0.2, 1.05), controllers=[move_by_speed_cfg]) for i in range(3)]
    else:
        configs = [FrankaRobotCfg(position=(0.1 * i, -0.3, 0.0)) for i in range(3)]
    with Env(make_config([SingleInferenceTaskCfg(robots=[config]) for config in configs], env_num=3)) as env:
        env.reset()
        group = next(iter(env.runner.robot_groups.values()))
        positions, orientations = group.pose_views
        action = {'move_by_speed': [0.5, 0.0, 0.3]} if robot == 'h1' else {}
        for _ in range(3):
            for slots in (np.arange(3), np.array([0, 2])):
                position, orientation = group.poses(slots)
                np.testing.assert_array_equal(positions[slots], position)
                np.testing.assert_array_equal(orientations[slots], orientation)
                assert position.base is None and orientation.base is None  # copies: a later step leaves them be
            env.step([{group.name: action}] * 3)


def test_g1_walks_the_same_with_and_without_the_compiled_policy_step():
    """G1's policy tick around the network (``policy_kernel``) against the numpy ``act``, in an env."""
    script = textwrap.dedent('''
        import json
        from internutopia.bench.cases import get_case
        from internutopia.core.vec_env import Env
        case = get_case('g1')
        env = Env(case.config(2, 'off'))
        env.reset()
        group = next(iter(env.runner.robot_groups.values()))
        for _ in range(480):  # 2 s: 100 policy ticks
            out = env.step_arrays(case.array_action(2))
        print(json.dumps({'compiled': group._compiled_act is not None, 'position': out.obs['g1']['position'].tolist()}))
        env.close()
    ''')
    results = _last_json_line_with_jit_off_and_on(script)
    assert results['0']['compiled'] is False and results['1']['compiled'] is NUMBA_EXPECTED
    off, on = np.array(results['0']['position']), np.array(results['1']['position'])
    assert off[:, 0].min() > 0.3 and off[:, 2].min() > 0.6  # walked forward, still standing
    np.testing.assert_allclose(on, off, atol=1e-3)


def _robot_episode(kind: str):
    """An episode with one robot of ``kind`` and the controllers its compiled kernels serve."""
    from internutopia_extension.configs.robots import franka, g1, h1, jetbot
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    robots = {
        'franka': lambda: franka.FrankaRobotCfg(controllers=[franka.arm_ik_cfg, franka.gripper_cfg]),
        'h1': lambda: h1.H1RobotCfg(position=(0.0, 0.0, 1.05), controllers=[h1.move_by_speed_cfg, h1.move_along_path_cfg]),
        'g1': lambda: g1.G1RobotCfg(controllers=[g1.move_by_speed_cfg]),
        'jetbot': lambda: jetbot.JetbotRobotCfg(controllers=[jetbot.move_by_speed_cfg, jetbot.move_along_path_cfg]),
    }
    return SingleInferenceTaskCfg(robots=[robots[kind]()])


def _robot_action(kind: str, slot: int, step: int) -> dict:
    """A command that differs per slot and changes over time (so a row mixed up between slots shows)."""
    turn = 0.2 * (slot - 2)
    if kind == 'franka':
        target = [0.45 + 0.02 * slot, 0.1 * np.sin(0.1 * step + slot), 0.3 - 0.01 * slot]
        return {'arm_ik_controller': [target, [0.0, 1.0, 0.0, 0.0]],
                'gripper_controller': ['close' if (step // 15 + slot) % 2 else 'open']}
    if kind == 'jetbot':
        if step >= 10:
            return {'move_along_path': [[0.3 * slot, 0.5, 0.0], [0.5, -0.3 * slot, 0.0]]}
        return {'move_by_speed': [0.4, turn]}
    return {'move_by_speed': [0.4, 0.0, turn]}


def _run_mixed(kind: str, other: str, steps: int = 30) -> list[dict]:
    """Slots of ``kind`` beside ``other`` robots and an empty slot, filled in a shuffled order and
    changed mid-run; each step's positions (and joint positions) per slot, ``None`` where empty."""
    from internutopia.core.config import Config, SimConfig
    from internutopia.core.vec_env import Env

    queue = [_robot_episode(k) for k in (kind, other, kind, kind, other, kind)]
    config = Config(simulator=SimConfig(physics_dt=1 / 240), env_num=5, env_offset_size=5.0,
                    metrics_save_path='none', task_configs=queue)
    trace = []
    with Env(config) as env:
        env.reset([4, 2, 0])  # kind in slots 4 and 0, other in 2; slots 1 and 3 empty
        for step in range(steps):
            if step == 10:
                env.reset([3, 1])  # kind joins in slots 3 and 1 (every slot but 2 now)
            if step == 20:
                env.reset([4])  # slot 4 changes to an `other` episode: kind in 0, 1, 3
            actions = []
            for slot in range(5):
                episode = env.runner.episodes[slot]
                robot = episode.config.robots[0] if episode is not None else None
                name = {'FrankaRobot': 'franka', 'H1Robot': 'h1', 'G1Robot': 'g1', 'JetbotRobot': 'jetbot'}.get(robot.type) if robot else None
                actions.append({robot.name: _robot_action(name, slot, step)} if robot else None)
            obs = env.step(actions)[0]
            trace.append([None if o is None else {name: {key: np.asarray(value, dtype=float).copy() for key, value in robot_obs.items()
                                                          if key in ('position', 'joint_positions', 'eef_position')}
                                                   for name, robot_obs in o.items() if isinstance(robot_obs, dict) and 'position' in robot_obs}
                          for o in obs])
    return trace


@pytest.mark.skipif(not NUMBA_EXPECTED, reason='numba is not a dependency on this Python')
@pytest.mark.parametrize('kind, other', [('franka', 'jetbot'), ('franka', 'h1'), ('h1', 'franka'), ('g1', 'jetbot'),
                                         ('jetbot', 'h1')])
def test_every_robot_kernels_agree_with_numpy_in_partial_shuffled_and_empty_slots(kind, other):
    """A robot's compiled step (controllers, policy, servos, observations) and its numpy twin
    (``jit.numpy_only``) move every slot the same, with the robot in some slots only, filled in a
    shuffled order, beside another robot type and an empty slot, through resets that change which
    slots it holds."""
    compiled = _run_mixed(kind, other)
    with jit.numpy_only():
        reference = _run_mixed(kind, other)
    for step, (got, expected) in enumerate(zip(compiled, reference, strict=True)):
        for slot, (slot_got, slot_expected) in enumerate(zip(got, expected, strict=True)):
            assert (slot_got is None) == (slot_expected is None), (step, slot)
            if slot_got is None:
                continue
            for name, values in slot_expected.items():
                for key, value in values.items():
                    np.testing.assert_allclose(slot_got[name][key], value, rtol=0, atol=2e-4,
                                               err_msg=f'{kind}: step {step} slot {slot} {name}.{key}')
    first, last = compiled[0][0][kind], compiled[-1][0][kind]
    moved = max(np.abs(last[key] - first[key]).max() for key in first)
    assert moved > 0.005  # the robot in slot 0 (there from start to end) did move
    assert compiled[-1][2] is not None and compiled[-1][4] is not None  # the other robots ran beside it


def test_a_slow_first_compile_logs_while_it_runs(tmp_path, monkeypatch, caplog):
    """``Kernel.warm`` says so in the log when a first call takes long (a compile), and names the kernel."""
    import importlib.util
    import logging

    source = tmp_path / 'slow_kernel_module.py'
    source.write_text('def doubled(values, out):\n    for i in range(len(values)):\n        out[i] = 2.0 * values[i]\n')
    spec = importlib.util.spec_from_file_location('slow_kernel_module', source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(jit, 'SLOW_COMPILE_S', 0.0)  # any first call counts as slow here
    kernel = jit.Kernel(module.doubled)
    with caplog.at_level(logging.WARNING, logger='internutopia'):
        kernel.warm(np.zeros(2), np.zeros(2))
    if NUMBA_EXPECTED:
        messages = [record.getMessage() for record in caplog.records]
        assert any(m.startswith('preparing kernel doubled') for m in messages), messages
        assert any(m.startswith('compiled (and cached for later runs) kernel doubled in') for m in messages), messages
        assert len(kernel.signatures) == 1
    else:
        assert not caplog.records and kernel.signatures == []


@pytest.mark.skipif(not NUMBA_EXPECTED, reason='numba is not a dependency on this Python')
def test_a_kernel_compiles_in_kernels_of_other_files_and_never_runs_their_old_code(tmp_path):
    """``Kernel(uses=...)``: the used kernel of another file runs inside; the disk cache is used
    by a later process, and a change to the used kernel's file compiles the user again."""
    (tmp_path / 'inner_kernels.py').write_text(textwrap.dedent('''
        from internutopia.core.util.jit import Kernel
        def scaled(value):
            return 2.0 * value
        SCALED = Kernel(scaled)
    '''))
    (tmp_path / 'outer_kernels.py').write_text(textwrap.dedent('''
        from internutopia.core.util.jit import Kernel, _cache_misses
        from inner_kernels import SCALED
        def twice_scaled(value):
            return scaled(scaled(value))  # noqa: F821 (compiled in: see uses)
        TWICE = Kernel(twice_scaled, uses={'scaled': SCALED})
    '''))
    script = 'import json, outer_kernels as o; r = o.TWICE(3.0); print(json.dumps([r, o._cache_misses(o.TWICE._compiled)]))'

    def run() -> list:
        done = subprocess.run([sys.executable, '-c', script], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={**os.environ, 'PYTHONPATH': os.pathsep.join([str(tmp_path), *sys.path])})
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[-1])

    assert run() == [12.0, 1]  # compiled (the inner kernel inside) and cached
    assert run() == [12.0, 0]  # loaded from the cache
    source = tmp_path / 'inner_kernels.py'
    source.write_text(source.read_text().replace('2.0 * value', '3.0 * value'))
    assert run() == [27.0, 1]  # the inner kernel changed: compiled again, not its old code


def test_franka_steps_compile_nothing_after_reset():
    """Every kernel a Franka episode uses (IK, FK, servos, finger, parsers) is compiled or loaded
    when the env resets, not in its first steps (a fresh process: nothing compiled before)."""
    script = textwrap.dedent('''
        import json
        from internutopia.core.config import Config, SimConfig
        from internutopia.core.util import jit
        from internutopia.core.vec_env import Env
        from internutopia_extension import import_extensions
        from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg
        from internutopia_extension.configs.tasks import SingleInferenceTaskCfg
        import_extensions()
        task = SingleInferenceTaskCfg(robots=[FrankaRobotCfg(controllers=[arm_ik_cfg, gripper_cfg])])
        env = Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=3, metrics_save_path='none', task_configs=[task] * 2))
        env.reset()
        before = {k.function.__name__: len(k.signatures) for k in jit.KERNELS}
        action = {'franka': {'arm_ik_controller': [[0.5, 0.1, 0.3], [0, 1, 0, 0]], 'gripper_controller': ['close']}}
        for _ in range(3):
            env.step([action, action, None])
        after = {k.function.__name__: len(k.signatures) for k in jit.KERNELS}
        print(json.dumps({'before': before, 'after': after}))
        env.close()
    ''')
    run = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=300,
                         env={**os.environ, 'MUJOCO_GL': os.environ.get('MUJOCO_GL', 'egl')})
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result['after'] == result['before']
    if NUMBA_EXPECTED:
        for name in ('_ik_rows', '_fk_rows', '_servo_rows', '_finger_rows', '_parse_rows', '_open_rows'):
            assert result['before'][name] >= 1, name


def test_gymnasium_steps_compile_nothing_after_reset():
    """The kernels the walking and point-nav ids step through (the task's passes and its one-pass
    tick, the goal in the yaw frame, the steering) are compiled or loaded when the env is made, not
    in its steps (with falls, new episodes and goal steering among them)."""
    script = textwrap.dedent('''
        import json
        import numpy as np, gymnasium as gym
        import internutopia.envs
        from internutopia.core.util import jit
        changed = {}
        for env_id in ('internutopia/H1Walk-v0', 'internutopia/JetbotPointNav-v0'):
            env = gym.make_vec(env_id, num_envs=4)
            env.reset(seed=0)
            before = {k.function.__name__: len(k.signatures) for k in jit.KERNELS}
            rng, space = np.random.default_rng(0), env.action_space
            for _ in range(60):
                env.step(rng.uniform(space.low, space.high).astype(space.dtype))
            after = {k.function.__name__: len(k.signatures) for k in jit.KERNELS}
            changed[env_id] = {name: [before.get(name), count] for name, count in after.items() if before.get(name) != count}
            if env_id.endswith('H1Walk-v0'):
                changed['warmed'] = sorted(name for name, count in before.items() if count)
            env.close()
        print(json.dumps(changed))
    ''')
    run = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=300,
                         env={**os.environ, 'MUJOCO_GL': os.environ.get('MUJOCO_GL', 'egl')})
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result['internutopia/H1Walk-v0'] == {} and result['internutopia/JetbotPointNav-v0'] == {}
    if NUMBA_EXPECTED:
        assert {'_goal_rows', '_quiet_rows', '_steer_rows', 'tick_rows'} <= set(result['warmed'])  # (the one-pass tick too)


@pytest.mark.skipif(not NUMBA_EXPECTED, reason='numba is not a dependency on this Python')
@pytest.mark.parametrize('scale', [0.1, 10.0], ids=['within range', 'clamped'])
def test_clamped_carry_kernel_is_the_numpy_clamp_then_the_carry(scale):
    """H1's carried base clamps and carries in one compiled call: the same targets, bit for bit, as
    the numpy clamp of ``apply_base_velocity`` followed by the compiled carry without its clamp (an
    infinite threshold); the command itself is not written."""
    rng = np.random.default_rng(5)
    slots = np.array([0, 2, 3])
    mocap_pos, mocap_quat = rng.normal(size=(4, 2, 3)), yaw_to_quat(rng.uniform(-np.pi, np.pi, (4, 2)))
    velocity = rng.normal(size=(3, 3)) * scale
    limit, turn = 1.0, 1.5
    threshold = min(limit / np.sqrt(2.0), turn)
    expected_pos, expected_quat, given = mocap_pos.copy(), mocap_quat.copy(), velocity.copy()
    clamped = velocity
    if np.abs(velocity).max() > threshold:  # as HolonomicBaseController.apply_base_velocity's numpy path
        speed = np.hypot(velocity[:, 0], velocity[:, 1])
        clamped = np.array(velocity, dtype=float)
        clamped[:, :2] *= np.minimum(1.0, limit / np.maximum(speed, 1e-300))[:, None]
        np.clip(clamped[:, 2], -turn, turn, out=clamped[:, 2])
    assert (scale > 1) == (clamped is not velocity)
    holonomic_base._carry_kernel(expected_pos, expected_quat, slots, 1, clamped, 1 / 240, np.inf, np.inf, np.inf)  # carry alone
    holonomic_base._carry_kernel(mocap_pos, mocap_quat, slots, 1, velocity, 1 / 240, limit, turn, threshold)
    np.testing.assert_array_equal(mocap_pos, expected_pos)
    np.testing.assert_array_equal(mocap_quat, expected_quat)
    np.testing.assert_array_equal(velocity, given)
