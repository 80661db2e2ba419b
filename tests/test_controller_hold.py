"""The base-motion controllers hold a goal sent every step, as a user sees it: ``move_along_path``
reaches its waypoints within its own ``threshold`` at its own speeds (as InternUtopia's passes them
to its ``move_to_point``), a reached goal stays reached (``finished``, the robot standing) until the
robot is more than ``RELEASE`` thresholds off it or a new goal comes, ``rotate`` never commands a
yaw rate too small to walk, and the walking humanoids hold a turn and a point without falling or
wandering. The compiled steering and the numpy one give the same numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

import internutopia_extension.controllers.steering as steering
from internutopia.core.util import jit
from internutopia.core.util.math import yaw_to_quat
from internutopia.core.vec_env import Env
from internutopia.macros import gm
from internutopia_extension import import_extensions
from internutopia_extension.configs.controllers import MoveAlongPathPointsControllerCfg, MoveToPointBySpeedControllerCfg
from internutopia_extension.configs.robots import jetbot
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

import_extensions()

EMPTY = gm.ASSET_PATH + '/scenes/empty.usd'


def _quat(yaw: float) -> tuple[float, float, float, float]:
    return (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))


def _env(make_config, robots: list) -> Env:
    """One slot per robot config (each named ``'r'``) in the empty scene."""
    tasks = [SingleInferenceTaskCfg(scene_asset_path=EMPTY, robots=[robot]) for robot in robots]
    return Env(make_config(tasks, env_num=len(tasks), offset=10.0))


# --- the law: compiled and numpy the same -------------------------------------------------------

@pytest.mark.parametrize('sideways, decel', [(False, 0.0), (True, 0.0), (True, 0.5)],
                         ids=['differential', 'holonomic', 'walking'])
def test_compiled_hold_law_is_the_numpy_one(sideways, decel):
    if not steering._hold_kernel.available:
        pytest.skip('numba is not available here')
    rng = np.random.default_rng(4)
    k = 400
    position = rng.normal(size=(k, 3))
    orientation = yaw_to_quat(rng.uniform(-np.pi, np.pi, k)) + rng.normal(scale=0.05, size=(k, 4))
    orientation /= np.linalg.norm(orientation, axis=1, keepdims=True)
    goal = position + rng.normal(scale=0.5, size=(k, 3)) * rng.choice([0.05, 0.3, 1.0, 4.0], size=(k, 1))
    held = rng.random(k) < 0.5
    args = (position, orientation, goal, 0.8, 1.5, 0.05)
    velocity, arrived = steering.steer_and_hold(*args, sideways, held, decel)
    expected_velocity, expected_arrived = steering._hold_numpy(*args, sideways, decel, held)
    np.testing.assert_array_equal(arrived, expected_arrived)
    np.testing.assert_allclose(velocity, expected_velocity, rtol=0, atol=1e-12)
    distance = np.hypot(*(goal - position)[:, :2].T)
    # held within RELEASE thresholds, else within the threshold only; every mode seen
    np.testing.assert_array_equal(arrived, (distance < 0.05) | (held & (distance < steering.RELEASE * 0.05)))
    assert (held & ~arrived & (distance < 0.05 * steering.RELEASE)).sum() == 0
    assert ((distance > 0.05) & (distance < 0.15) & arrived).any() and ((distance > 0.05) & (distance < 0.15) & ~arrived).any()
    assert (velocity[arrived] == 0).all() and (np.abs(velocity[~arrived]).sum(axis=1) > 0).all()
    near = ~arrived & (distance < 0.3)
    if sideways:  # near: straight to the goal, no turn
        assert (velocity[near, 2] == 0).all() and (np.abs(velocity[near, 1]) > 0).any()
    else:
        assert (velocity[:, 1] == 0).all()


@pytest.mark.parametrize('sideways, decel', [(False, 0.0), (True, 0.5)], ids=['differential', 'walking'])
def test_follow_kernel_holds_the_last_point_as_numpy_does(make_config, monkeypatch, sideways, decel):
    """``move_along_path``'s compiled step gives its numpy chain's state and commands with the
    held last point, the lateral approach and the walkers' slow-down too."""
    from internutopia_extension.configs.tasks import FiniteStepTaskCfg

    k = 6
    task = FiniteStepTaskCfg(max_steps=100, robots=[jetbot.JetbotRobotCfg(controllers=[jetbot.move_by_speed_cfg,
                                                                                        jetbot.move_along_path_cfg])])
    with Env(make_config([task] * k, env_num=k)) as env:
        env.reset()
        controller = next(iter(env.runner.robot_groups.values())).controllers['move_along_path']
        if controller._follow_kernel is None:
            pytest.skip('numba is not available here')
        point = controller.point_controller
        point.sideways, point.decel = sideways, decel
        commands: dict[int, np.ndarray] = {}
        monkeypatch.setattr(point.velocity_controller, 'apply_base_velocity',
                            lambda slots, velocity: commands.update(zip(slots.tolist(), np.array(velocity), strict=True)))
        names = ('points', 'total_points', 'current_index', 'current_point', 'finished')
        rng = np.random.default_rng(2)
        slots = np.arange(k, dtype=np.intp)
        path = np.array([[0.5, 0.0, 0.0], [0.5, 0.5, 0.0]])
        paths = np.repeat(path[None], k, axis=0)
        positions, orientations = controller.robot.pose_views
        seen = set()
        for step in range(60):
            target = controller.points[slots, controller.current_index]
            # near the waypoint: within the threshold, within the band (held or not), or further
            offset = rng.normal(size=(k, 3)) * rng.choice([0.03, 0.15, 0.2, 1.0], size=(k, 1))
            offset[:, 2] = 0.0
            positions[slots] = target + offset
            orientations[slots] = yaw_to_quat(rng.uniform(-np.pi, np.pi, k))
            before = {name: getattr(controller, name).copy() for name in names} | {'point': point.finished.copy()}
            controller._apply_numpy(slots, paths)
            expected = {name: getattr(controller, name).copy() for name in names} | {'point': point.finished.copy()}
            expected_commands = dict(commands)
            for name in names:
                setattr(controller, name, before[name].copy())
            point.finished[:] = before['point']
            controller._apply_compiled(slots, paths)
            for name, value in expected.items():
                got = point.finished if name == 'point' else getattr(controller, name)
                np.testing.assert_allclose(got, value, rtol=0, atol=1e-12, err_msg=f'{name} at step {step}')
            for slot in range(k):
                np.testing.assert_allclose(commands[slot], expected_commands[slot], rtol=0, atol=1e-12)
            held = before['finished'] & controller.finished & (np.linalg.norm(offset[:, :2], axis=1) > 0.1)
            seen |= {'held'} if held.any() else set()
            seen |= {'released'} if (before['finished'] & ~controller.finished).any() else set()
        assert seen == {'held', 'released'}


# --- what a user sees: the jetbot (cheap) ---------------------------------------------------------

def _path_run(make_config, configs: list, path: list, seconds: float) -> dict[str, np.ndarray]:
    """Follow ``path`` with each ``move_along_path`` config (a slot each); per slot: the distance
    from the first waypoint when the index moved on, x after 1 s, when it finished, and its
    distance from the last waypoint at the end."""
    robots = [jetbot.JetbotRobotCfg(name='r', controllers=[jetbot.move_by_speed_cfg, config]) for config in configs]
    with _env(make_config, robots) as env:
        env.reset()
        n = len(configs)
        moved_on = np.full(n, np.nan)
        after_1s = np.zeros(n)
        finished_at = np.full(n, np.nan)
        for step in range(int(seconds * 240)):
            obs, *_ = env.step([{'r': {'move_along_path': [path]}}] * n)
            for k in range(n):
                state, position = obs[k]['r']['controllers']['move_along_path'], obs[k]['r']['position']
                if np.isnan(moved_on[k]) and state['current_index'] >= 1:
                    moved_on[k] = np.linalg.norm(position[:2] - path[0][:2])
                if np.isnan(finished_at[k]) and state['finished']:
                    finished_at[k] = step / 240
                if step == 240:
                    after_1s[k] = position[0]
        end = np.array([np.linalg.norm(obs[k]['r']['position'][:2] - path[-1][:2]) for k in range(n)])
    return {'moved_on': moved_on, 'after_1s': after_1s, 'finished_at': finished_at, 'end': end}


@pytest.mark.parametrize('compiled', [True, False], ids=['compiled', 'numpy'])
def test_move_along_path_uses_its_own_threshold_and_speeds(make_config, compiled):
    """The path's ``threshold`` decides where a waypoint counts as reached and its ``forward_speed``
    how fast the robot goes, whatever its ``move_to_point`` sub-controller says (as InternUtopia)."""
    sub = MoveToPointBySpeedControllerCfg(name='move_to_point', forward_speed=0.5, rotation_speed=3.0, threshold=0.05,
                                          sub_controllers=[jetbot.move_by_speed_cfg])
    configs = [MoveAlongPathPointsControllerCfg(name='move_along_path', forward_speed=speed, rotation_speed=3.0,
                                                threshold=threshold, sub_controllers=[sub])
               for speed, threshold in [(0.5, 0.1), (0.5, 0.4), (0.25, 0.1)]]
    path = [[1.0, 0.0, 0.0], [1.0, 0.6, 0.0], [1.6, 0.6, 0.0]]
    if compiled:
        result = _path_run(make_config, configs, path, 20.0)
    else:
        with jit.numpy_only():
            result = _path_run(make_config, configs, path, 20.0)
    moved_on = result['moved_on']
    assert 0.07 < moved_on[0] < 0.1 and 0.35 < moved_on[1] < 0.4 and 0.07 < moved_on[2] < 0.1, moved_on
    assert result['after_1s'][2] < 0.6 * result['after_1s'][0], result['after_1s']  # 0.25 m/s against 0.5
    assert not np.isnan(result['finished_at']).any(), result['finished_at']
    assert result['finished_at'][2] > max(result['finished_at'][:2]), result['finished_at']  # the slow one last
    end = result['end']  # each stops where its own threshold says it has arrived
    assert end[0] < 0.1 and end[2] < 0.1 and 0.25 < end[1] < 0.4, end


def _controller(env: Env, name: str):
    return next(iter(env.runner.robot_groups.values())).controllers[name]


def test_a_reached_goal_is_held_until_the_robot_leaves_the_band(make_config, monkeypatch):
    """``move_to_point``, ``rotate`` and ``move_along_path``: ``finished`` within the threshold, and
    then (same goal) until the error exceeds ``RELEASE`` thresholds, standing meanwhile; further
    off, steered back, and not finished until within the threshold again; a new goal or a reset
    starts afresh. ``rotate`` turns at no less than ``MIN_TURN_RATE``."""
    robots = [jetbot.JetbotRobotCfg(name='r', controllers=[jetbot.move_by_speed_cfg, jetbot.move_to_point_cfg,
                                                           jetbot.rotate_cfg, jetbot.move_along_path_cfg])]
    with _env(make_config, robots * 2) as env:
        env.reset()
        point, rotate, path = _controller(env, 'move_to_point'), _controller(env, 'rotate'), _controller(env, 'move_along_path')
        commands: dict[int, np.ndarray] = {}
        for controller in (point, rotate, path.point_controller):
            monkeypatch.setattr(controller.velocity_controller, 'apply_base_velocity',
                                lambda slots, velocity: commands.update(zip(slots.tolist(), np.array(velocity), strict=True)))
        positions, orientations = point.robot.pose_views
        slots = np.arange(2, dtype=np.intp)
        release = steering.RELEASE

        def place(x: float, yaw: float = 0.0) -> None:
            positions[slots, :2] = [[x, 0.0], [x, 0.0]]
            orientations[slots] = _quat(yaw)

        threshold = point.config.threshold
        goals = np.zeros((2, 3))
        for x, finished in [(0.5 * threshold, True), ((release - 0.5) * threshold, True),
                            ((release + 0.5) * threshold, False), ((release - 0.5) * threshold, False),
                            (0.5 * threshold, True)]:
            place(x, np.pi)  # facing the goal
            point.apply(slots, goals)
            assert point.finished.tolist() == [finished] * 2, x
            assert (commands[0] == 0).all() == finished, (x, commands[0])
        point.apply(slots, goals + [[0.0, 0.0, 0.0], [2.0 * threshold, 0.0, 0.0]])  # slot 1: a new goal, within the band
        assert point.finished.tolist() == [True, False]
        point.reset(slots[:1])
        place((release - 0.5) * threshold, np.pi)
        point.apply(slots, goals)
        assert not point.finished[0]

        threshold = rotate.config.threshold
        goal = np.array([_quat(0.0)] * 2)
        for yaw, finished in [(0.5 * threshold, True), ((release - 0.5) * threshold, True), ((release + 0.5) * threshold, False),
                              ((release - 0.5) * threshold, False), (0.5 * threshold, True)]:
            place(0.0, yaw)
            rotate.apply(slots, goal)
            assert rotate.finished.tolist() == [finished] * 2, yaw
            expected = 0.0 if finished else -max(steering.MIN_TURN_RATE, 3.0 * yaw)
            assert commands[0][2] == pytest.approx(expected), yaw

        threshold = path.config.threshold
        paths = np.array([[[0.0, 0.0, 0.0]]] * 2)
        for x, finished in [(0.5 * threshold, True), ((release - 0.5) * threshold, True),
                            ((release + 0.5) * threshold, False), ((release - 0.5) * threshold, False)]:
            place(x, np.pi)
            path.apply(slots, paths)
            assert path.finished.tolist() == [finished] * 2, x


# --- what a user sees: the walking humanoids ------------------------------------------------------

def test_gr1_follows_the_example_path_to_its_end(make_config):
    """GR1's shipped ``move_along_path`` (path threshold 0.1 m, its ``move_to_point``'s 0.05 m)
    walks the user's example path to the end from several headings, and stays there."""
    pytest.importorskip('fourier_robot_descriptions', reason='the GR1 model')
    from internutopia_extension.configs.robots import gr1

    path = [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [3.0, 4.0, 0.0]]
    robots = [gr1.GR1RobotCfg(name='r', position=(0, 0, 0.95), orientation=_quat(1.5 * i), controllers=[gr1.move_along_path_cfg])
              for i in range(2)]
    with _env(make_config, robots) as env:
        env.reset()
        first = [None, None]
        for step in range(240 * 24):
            obs, *_ = env.step([{'r': {'move_along_path': [path]}}] * 2)
            for k in range(2):
                state = obs[k]['r']['controllers']['move_along_path']
                if state['finished'] and first[k] is None:
                    first[k] = step
                if first[k] is not None:
                    assert state['finished'], (k, step / 240)  # held once reached
                assert obs[k]['r']['position'][2] > 0.6
        assert None not in first, first
        for k in range(2):
            assert np.linalg.norm(obs[k]['r']['position'][:2] - [3.0, 4.0]) < 0.1


def test_h1_with_hands_holds_a_turn(make_config):
    """H1 with hands turned by -3 rad with ``rotate`` and held there 30 s: it stands (no fall), keeps
    its spot (< 0.3 m) and its heading, and ``finished`` stays true once true."""
    from internutopia_extension.configs.robots import h1_with_hand

    starts = [0.0, 1.5]
    robots = [h1_with_hand.H1WithHandRobotCfg(name='r', position=(0.5, -0.5, 1.05), orientation=_quat(yaw),
                                              controllers=[h1_with_hand.rotate_cfg]) for yaw in starts]
    goals = [[_quat(yaw - 3.0)] for yaw in starts]
    with _env(make_config, robots) as env:
        obs, _ = env.reset()
        start = np.array([obs[k]['r']['position'][:2] for k in range(2)])
        first = [None, None]
        for step in range(240 * 30):
            obs, *_ = env.step([{'r': {'rotate': goal}} for goal in goals])
            for k in range(2):
                assert obs[k]['r']['position'][2] > 0.6, (k, step / 240)
                finished = obs[k]['r']['controllers']['rotate']['finished']
                if finished and first[k] is None:
                    first[k] = step
                if first[k] is not None:
                    assert finished, (k, step / 240)
        assert None not in first and max(first) < 240 * 6, first
        drift = np.linalg.norm(np.array([obs[k]['r']['position'][:2] for k in range(2)]) - start, axis=1)
        assert (drift < 0.3).all(), drift
        for k, yaw in enumerate(starts):
            w, _, _, z = obs[k]['r']['orientation']
            error = (2 * math.atan2(z, w) - (yaw - 3.0) + np.pi) % (2 * np.pi) - np.pi
            assert abs(error) < steering.RELEASE * h1_with_hand.rotate_cfg.threshold


def test_gr1_holds_a_reached_point(make_config):
    """GR1's shipped ``move_to_point`` held on a goal: once there it stays within 0.1 m and
    ``finished`` stays true (no circling, no wandering off)."""
    pytest.importorskip('fourier_robot_descriptions', reason='the GR1 model')
    from internutopia_extension.configs.robots import gr1

    goals = [(-0.5, 1.0, 0.0), (1.5, -0.8, 0.0)]
    robots = [gr1.GR1RobotCfg(name='r', position=(0, 0, 1.05), controllers=[gr1.move_to_point_cfg])] * 2
    with _env(make_config, robots) as env:
        env.reset()
        first = [None, None]
        for step in range(240 * 20):
            obs, *_ = env.step([{'r': {'move_to_point': [goal]}} for goal in goals])
            for k in range(2):
                finished = obs[k]['r']['controllers']['move_to_point']['finished']
                if finished and first[k] is None:
                    first[k] = step
                if first[k] is not None:
                    assert finished, (k, step / 240)
                    assert np.linalg.norm(obs[k]['r']['position'][:2] - goals[k][:2]) < 0.1, (k, step / 240)
        assert None not in first and max(first) < 240 * 12, first
