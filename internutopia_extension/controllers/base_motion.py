"""The base-motion controllers shared by every mobile robot, vectorized over slots.

``move_to_point`` steers towards a goal, ``move_along_path`` walks waypoints through
``move_to_point``, ``rotate`` turns in place; all end in the robot's own velocity controller
(``move_by_speed``), a :class:`~internutopia.core.controller.base.BaseVelocityController`.
Goals and paths are env-local, as the robot's observed position is.
"""

from __future__ import annotations

import itertools
import math
import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.controller.base import BaseController, BaseVelocityController, as_float_array
from internutopia.core.robot.base import rows_of, take_rows
from internutopia.core.util.jit import Kernel
from internutopia.core.util.math import quat_to_yaw, wrap_angle
from internutopia_extension.configs.controllers.move_along_path_points_controller import MoveAlongPathPointsControllerCfg
from internutopia_extension.configs.controllers.move_to_point_by_speed_controller import MoveToPointBySpeedControllerCfg
from internutopia_extension.configs.controllers.rotate_controller import RotateControllerCfg

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack

#: Heading error (rad) beyond which the base turns in place before driving forward.
_TURN_IN_PLACE = np.pi / 4
#: Proportional gain of the heading loop (rad/s per rad), clipped to ``rotation_speed``.
_HEADING_GAIN = 3.0


def steer_towards(position: np.ndarray, orientation: np.ndarray, goal: np.ndarray, forward_speed: float,
                  rotation_speed: float, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Body-frame velocities ``(k, 3)`` that take bases at ``position`` to ``goal``, and arrival flags.

    Forward speed falls off with heading error (zero beyond 45 degrees) and near the goal; yaw
    rate is proportional to heading error. Bases within ``threshold`` (xy) of the goal stop.
    Runs compiled when numba is available (:mod:`internutopia.core.util.jit`), else with numpy.

    >>> velocity, arrived = steer_towards(np.zeros((1, 3)), np.array([[1.0, 0, 0, 0]]), np.array([[2.0, 0, 0]]), 0.5, 1.0, 0.1)
    >>> velocity.tolist(), arrived.tolist()
    ([[0.5, 0.0, 0.0]], [False])
    """
    if _steer_kernel.available:
        return steer_towards_each(position, orientation, goal, forward_speed, rotation_speed, np.full(len(goal), float(threshold)))
    return _steer_numpy(position, orientation, goal, forward_speed, rotation_speed, threshold)


def steer_towards_each(position: np.ndarray, orientation: np.ndarray, goal: np.ndarray, forward_speed: float,
                       rotation_speed: float, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`steer_towards` with an arrival threshold per base (``thresholds``, shape ``(k,)``):
    one compiled pass whatever the thresholds, else one numpy pass per distinct threshold.

    >>> velocity, arrived = steer_towards_each(np.zeros((2, 3)), np.array([[1.0, 0, 0, 0]] * 2),
    ...                                        np.array([[0.2, 0, 0]] * 2), 0.5, 1.0, np.array([0.1, 0.3]))
    >>> arrived.tolist()
    [False, True]
    """
    thresholds = np.asarray(thresholds, dtype=np.float64)
    velocity = np.empty((len(goal), 3))
    arrived = np.empty(len(goal), dtype=bool)
    if _steer_kernel.available:
        _steer_kernel(position, orientation, goal, float(forward_speed), float(rotation_speed), thresholds, velocity, arrived)
        return velocity, arrived
    for threshold in np.unique(thresholds):
        rows = thresholds == threshold
        velocity[rows], arrived[rows] = _steer_numpy(position[rows], orientation[rows], goal[rows], forward_speed,
                                                     rotation_speed, float(threshold))
    return velocity, arrived


def _steer_numpy(position: np.ndarray, orientation: np.ndarray, goal: np.ndarray, forward_speed: float,
                 rotation_speed: float, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    # Runs every step for every robot: written in place, so that it is few numpy calls.
    dx = goal[:, 0] - position[:, 0]
    dy = goal[:, 1] - position[:, 1]
    distance = np.hypot(dx, dy)
    error = np.arctan2(dy, dx)
    error -= quat_to_yaw(orientation)
    error += np.pi  # wrapped into [-pi, pi)
    np.remainder(error, 2 * np.pi, out=error)
    error -= np.pi
    velocity = np.zeros((len(goal), 3))
    forward, yaw_rate = velocity[:, 0], velocity[:, 2]
    np.abs(error, out=forward)  # alignment: 1 facing the goal, 0 from 45 degrees off
    forward *= -1.0 / _TURN_IN_PLACE
    forward += 1.0
    np.maximum(forward, 0.0, out=forward)
    slow_down = distance * (1.0 / max(4 * threshold, 0.3))
    np.maximum(slow_down, 0.15, out=slow_down)
    np.minimum(slow_down, 1.0, out=slow_down)
    forward *= slow_down
    forward *= forward_speed
    np.multiply(error, _HEADING_GAIN, out=yaw_rate)
    np.maximum(yaw_rate, -rotation_speed, out=yaw_rate)
    np.minimum(yaw_rate, rotation_speed, out=yaw_rate)
    arrived = distance < threshold
    if np.count_nonzero(arrived):
        velocity[arrived] = 0.0
    return velocity, arrived


def _steer_rows(position: np.ndarray, orientation: np.ndarray, goal: np.ndarray, forward_speed: float,
                rotation_speed: float, thresholds: np.ndarray, velocity: np.ndarray, arrived: np.ndarray) -> None:
    """The same law as :func:`_steer_numpy`, one robot per iteration, each with its own arrival
    threshold (compiled by numba)."""
    for i in range(goal.shape[0]):
        threshold = thresholds[i]
        inverse_slow_distance = 1.0 / max(4.0 * threshold, 0.3)
        dx = goal[i, 0] - position[i, 0]
        dy = goal[i, 1] - position[i, 1]
        w, x, y, z = orientation[i, 0], orientation[i, 1], orientation[i, 2], orientation[i, 3]
        error = math.atan2(dy, dx) - math.atan2(w * z + x * y, 0.5 - (y * y + z * z))
        error = (error + math.pi) % (2.0 * math.pi) - math.pi
        distance = math.hypot(dx, dy)
        arrived[i] = distance < threshold
        velocity[i, 1] = 0.0
        if arrived[i]:
            velocity[i, 0] = 0.0
            velocity[i, 2] = 0.0
            continue
        alignment = max(1.0 - abs(error) / _TURN_IN_PLACE, 0.0)
        slow_down = min(max(distance * inverse_slow_distance, 0.15), 1.0)
        velocity[i, 0] = forward_speed * alignment * slow_down
        velocity[i, 2] = min(max(_HEADING_GAIN * error, -rotation_speed), rotation_speed)


_steer_kernel = Kernel(_steer_rows)
#: The compiled steering law (:func:`steer_towards_each`'s), for kernels that compile it into theirs (``Kernel``'s ``uses``).
STEER_KERNEL = _steer_kernel


def warm_steering() -> None:
    """Compile (or load) the steering kernel now, ahead of a first step that steers."""
    rows, flags = np.zeros((0, 3)), np.zeros(0, dtype=bool)
    _steer_kernel.warm(rows, np.zeros((0, 4)), rows, 1.0, 1.0, np.zeros(0), rows, flags)


def _follow_rows(paths: np.ndarray, slots: np.ndarray, points: np.ndarray, total_points: np.ndarray,
                 current_index: np.ndarray, current_point: np.ndarray, finished: np.ndarray, point_finished: np.ndarray,
                 positions: np.ndarray, orientations: np.ndarray, forward_speed: float, rotation_speed: float, threshold: float, velocity: np.ndarray) -> None:
    """One step of ``move_along_path`` for ``slots``, one robot per iteration (compiled by numba).

    The whole chain of :meth:`MoveAlongPathPointsController.apply` in one call: restart the slots
    whose commanded path ``paths[i]`` differs from the one they follow, then, for each slot still
    running, steer towards its current waypoint as :func:`_steer_rows` does (``velocity[i]``, zero
    for finished slots), mark arrival on the ``move_to_point`` sub-controller (``point_finished``)
    and move on to the next waypoint. The robots' poses are read in place in the state
    (:attr:`~internutopia.core.robot.base.Entity.pose_views`). State arrays are indexed by slot,
    ``paths`` and ``velocity`` by row ``i``.
    """
    length = paths.shape[1]
    width = points.shape[1]
    inverse_slow_distance = 1.0 / max(4.0 * threshold, 0.3)
    for i in range(slots.shape[0]):
        slot = slots[i]
        same = total_points[slot] == length
        if same:
            for j in range(width):
                for c in range(3):
                    expected = paths[i, j, c] if j < length else 0.0
                    if points[slot, j, c] != expected:
                        same = False
        if not same:
            for j in range(width):
                for c in range(3):
                    points[slot, j, c] = paths[i, j, c] if j < length else 0.0
            current_index[slot] = 0
            total_points[slot] = length
            finished[slot] = False
        velocity[i, 0] = 0.0
        velocity[i, 1] = 0.0
        velocity[i, 2] = 0.0
        index = current_index[slot]
        for c in range(3):
            current_point[slot, c] = points[slot, index, c]
        dx = points[slot, index, 0] - positions[slot, 0]
        dy = points[slot, index, 1] - positions[slot, 1]
        w, x, y, z = orientations[slot, 0], orientations[slot, 1], orientations[slot, 2], orientations[slot, 3]
        error = math.atan2(dy, dx) - math.atan2(w * z + x * y, 0.5 - (y * y + z * z))
        error = (error + math.pi) % (2.0 * math.pi) - math.pi
        distance = math.hypot(dx, dy)
        arrived = distance < threshold
        point_finished[slot] = arrived
        last = index >= total_points[slot] - 1
        finished[slot] = arrived and last  # (not latched: a robot pushed off its last point goes back)
        if not arrived:
            alignment = max(1.0 - abs(error) / _TURN_IN_PLACE, 0.0)
            slow_down = min(max(distance * inverse_slow_distance, 0.15), 1.0)
            velocity[i, 0] = forward_speed * alignment * slow_down
            velocity[i, 2] = min(max(_HEADING_GAIN * error, -rotation_speed), rotation_speed)
            continue
        if not last:
            current_index[slot] = index + 1


_follow_kernel = Kernel(_follow_rows)


class MoveToPointBySpeedController(BaseController):
    """``[goal_xyz]`` -> velocity commands; observation ``finished``."""

    config: MoveToPointBySpeedControllerCfg

    def __init__(self, config: Any, robot: Any) -> None:
        super().__init__(config, robot)
        self.velocity_controller = self.sub_controller(BaseVelocityController)
        self.finished = np.zeros(self.env_num, dtype=bool)

    def bind(self, world: Pack) -> None:
        super().bind(world)
        warm_steering()

    def parse_action(self, action: Any) -> np.ndarray:
        goal = as_float_array(action, None, 'move_to_point expects [goal_xyz]; goal')
        if goal.shape == (1, 3) or goal.shape == (1, 2):
            goal = goal[0]
        if goal.shape == (2,):
            goal = np.append(goal, 0.0)
        if goal.shape != (3,):
            raise ValueError(f'move_to_point expects [goal_xyz] (3 numbers); got shape {goal.shape}')
        return goal

    def parse_batch(self, actions: Any) -> np.ndarray:
        goals = as_float_array(actions, None, 'move_to_point expects one [goal_xyz] per env; goals')
        if goals.ndim == 3 and goals.shape[1] == 1:
            goals = goals[:, 0]
        if goals.ndim != 2 or goals.shape[1] not in (2, 3):
            raise ValueError(f'move_to_point expects goals of shape (envs, 3); got {goals.shape}')
        return np.hstack([goals, np.zeros((len(goals), 1))]) if goals.shape[1] == 2 else goals

    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        self.drive(slots, batch)

    def drive(self, slots: np.ndarray, goals: np.ndarray) -> np.ndarray:
        """Steer ``slots`` towards ``goals`` ``(k, 3)``; return which have arrived."""
        position, orientation = self.robot.poses(slots)
        velocity, arrived = steer_towards(position, orientation, goals, self.config.forward_speed,
                                          self.config.rotation_speed, self.config.threshold)
        self.velocity_controller.apply_base_velocity(slots, velocity)
        self.finished[rows_of(slots, self.env_num)] = arrived
        return arrived

    def reset(self, slots: np.ndarray) -> None:
        super().reset(slots)
        self.finished[slots] = False

    def get_obs(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        return {'finished': take_rows(self.finished, slots)}


class MoveAlongPathPointsController(BaseController):
    """``[[p0, p1, ...]]`` -> follow the waypoints in order.

    Observations: ``current_index``, ``current_point``, ``total_points``, ``finished`` (at the last
    point and within ``threshold`` of it now: a robot pushed away is steered back). Sending a
    different path restarts from its first point; sending the same path again continues.
    """

    config: MoveAlongPathPointsControllerCfg

    def __init__(self, config: Any, robot: Any) -> None:
        super().__init__(config, robot)
        self.point_controller = self.sub_controller(MoveToPointBySpeedController)
        #: Waypoints per slot, padded to the longest path seen: ``(env_num, max_points, 3)``.
        self.points = np.zeros((self.env_num, 1, 3))
        self.current_index = np.zeros(self.env_num, dtype=np.int64)
        self.total_points = np.zeros(self.env_num, dtype=np.int64)
        self.current_point = np.zeros((self.env_num, 3))
        self.finished = np.zeros(self.env_num, dtype=bool)
        self._follow_kernel: Any = None  # set by bind

    def parse_action(self, action: Any) -> Any:
        if isinstance(action, (list, tuple)) and len(action) == 1:
            action = action[0]
        path = as_float_array(action, None, 'move_along_path expects [[p0, p1, ...]]; path')
        if path.ndim != 2 or path.shape[0] == 0 or path.shape[1] not in (2, 3):
            raise ValueError(f'move_along_path expects [[p0, p1, ...]] with 2D or 3D points; got shape {path.shape}')
        if path.shape[1] == 2:
            path = np.hstack([path, np.zeros((len(path), 1))])
        return path

    def batch(self, parsed: list[np.ndarray]) -> list[np.ndarray] | np.ndarray:
        first = parsed[0]
        # One path for every slot (``shared``: one action object sent to every slot): one array of them.
        if getattr(parsed, 'shared', False) or all(map(operator.is_, parsed, itertools.repeat(first))):
            return first[None].repeat(len(parsed), axis=0)
        return parsed

    def parse_batch(self, actions: Any) -> list[np.ndarray] | np.ndarray:
        if isinstance(actions, np.ndarray) and actions.ndim == 3 and actions.shape[1] > 0 and actions.shape[2] in (2, 3):
            paths = as_float_array(actions, None, 'move_along_path expects one [[p0, p1, ...]] per env; paths')
            if paths.shape[2] == 2:
                paths = np.concatenate([paths, np.zeros(paths.shape[:2] + (1,))], axis=2)
            return paths
        return [self.parse_action(path) for path in actions]

    def bind(self, world: Pack) -> None:
        super().bind(world)
        #: The compiled step, when it runs here and can read the robot's pose in place (else numpy).
        self._follow_kernel = _follow_kernel.compiled_or(None) if self.robot.pose_views is not None else None
        if self._follow_kernel is not None:
            # compiled (or loaded) now, for the robot's state arrays, in start-up rather than the first step
            self._follow(np.zeros(0, dtype=np.intp), np.zeros((0, 1, 3)), np.zeros((0, 3)))

    def _follow(self, slots: np.ndarray, paths: np.ndarray, velocity: np.ndarray) -> None:
        flags = paths.flags
        if not (flags.c_contiguous and flags.writeable):  # the one layout the kernel is compiled for
            paths = np.array(paths)
        if paths.shape[1] > self.points.shape[1]:
            self._fit(paths.shape[1])
        config = self.point_controller.config
        positions, orientations = self.robot.pose_views
        self._follow_kernel(paths, slots, self.points, self.total_points, self.current_index, self.current_point,
                            self.finished, self.point_controller.finished, positions, orientations,
                            float(config.forward_speed), float(config.rotation_speed), float(config.threshold), velocity)

    def _start_paths(self, slots: np.ndarray, paths: list[np.ndarray] | np.ndarray) -> None:
        """Restart the slots whose commanded path differs from the one they follow."""
        if isinstance(paths, np.ndarray) or all(path is paths[0] for path in paths):
            # One array for all slots (the array API, or one shared path): compare in one go.
            stacked = paths if isinstance(paths, np.ndarray) else paths[0][None]
            length = stacked.shape[1]
            self._fit(length)
            rows = rows_of(slots, self.env_num)
            points = self.points[rows]
            if (self.total_points[rows] == length).all() and (points[:, :length] == stacked).all() \
                    and (length == points.shape[1] or not points[:, length:].any()):
                return  # the usual case: every slot keeps its path
            same = (self.total_points[slots] == length) & (points[:, :length] == stacked).all(axis=(1, 2))
            if length < points.shape[1]:
                same &= (points[:, length:] == 0).all(axis=(1, 2))
            changed = ~same
            if changed.any():
                restart = slots[changed]
                self.points[restart] = 0.0
                self.points[restart, :length] = stacked[changed] if len(stacked) > 1 else stacked[0]
                self._restart(restart, length)
            return
        for slot, path in zip(slots.tolist(), paths, strict=True):
            length = len(path)
            if self.total_points[slot] == length and np.array_equal(self.points[slot, :length], path):
                continue
            self._fit(length)
            self.points[slot] = 0.0
            self.points[slot, :length] = path
            self._restart(np.array([slot]), length)

    def _fit(self, length: int) -> None:
        if length > self.points.shape[1]:
            grown = np.zeros((self.env_num, length, 3))
            grown[:, :self.points.shape[1]] = self.points
            self.points = grown

    def _restart(self, slots: np.ndarray, length: int) -> None:
        self.current_index[slots] = 0
        self.total_points[slots] = length
        self.finished[slots] = False

    def apply(self, slots: np.ndarray, paths: list[np.ndarray] | np.ndarray) -> None:
        if self._follow_kernel is not None and isinstance(paths, np.ndarray):
            self._apply_compiled(slots, paths)
        else:
            self._apply_numpy(slots, paths)

    def _apply_compiled(self, slots: np.ndarray, paths: np.ndarray) -> None:
        """:meth:`_apply_numpy` in one compiled call, which reads the robots' poses in place in the
        state, then one velocity command for all slots (zero for the finished ones, as there)."""
        velocity = np.empty((len(slots), 3))
        self._follow(slots, paths, velocity)
        self.point_controller.velocity_controller.apply_base_velocity(slots, velocity)

    def _apply_numpy(self, slots: np.ndarray, paths: list[np.ndarray] | np.ndarray) -> None:
        """The reference: restart changed paths, steer every slot towards its current waypoint, move
        on from a waypoint reached; at the last one, ``finished`` says whether the robot is there
        now (as InternUtopia's does), so a robot pushed off its goal is steered back."""
        self._start_paths(slots, paths)
        rows = rows_of(slots, self.env_num)
        index = self.current_index[rows]
        targets = self.points[slots, index]
        self.current_point[rows] = targets
        arrived = self.point_controller.drive(slots, targets)
        last = index >= self.total_points[rows] - 1
        self.finished[rows] = arrived & last
        self.current_index[slots[arrived & ~last]] += 1

    def reset(self, slots: np.ndarray) -> None:
        super().reset(slots)
        self.points[slots] = 0.0
        self.current_index[slots] = 0
        self.total_points[slots] = 0
        self.current_point[slots] = 0.0
        self.finished[slots] = False

    def get_obs(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        if len(slots) == self.env_num:  # take_rows, without a call per array: this runs every step
            return {'current_index': self.current_index.copy(), 'current_point': self.current_point.copy(),
                    'total_points': self.total_points.copy(), 'finished': self.finished.copy()}
        return {'current_index': self.current_index[slots], 'current_point': self.current_point[slots],
                'total_points': self.total_points[slots], 'finished': self.finished[slots]}


class RotateController(BaseController):
    """``[goal_quat_wxyz]`` -> turn in place to that heading; observation ``finished``."""

    config: RotateControllerCfg

    def __init__(self, config: Any, robot: Any) -> None:
        super().__init__(config, robot)
        self.velocity_controller = self.sub_controller(BaseVelocityController)
        self.finished = np.zeros(self.env_num, dtype=bool)

    def parse_action(self, action: Any) -> np.ndarray:
        quat = as_float_array(action, None, 'rotate expects [goal_quat_wxyz]; goal')
        if quat.shape == (1, 4):
            quat = quat[0]
        if quat.shape != (4,) or not np.linalg.norm(quat) > 0:
            raise ValueError(f'rotate expects [goal_quat_wxyz] (4 numbers, non-zero); got {action!r}')
        return quat / np.linalg.norm(quat)

    def parse_batch(self, actions: Any) -> np.ndarray:
        quats = as_float_array(actions, None, 'rotate expects one [goal_quat_wxyz] per env; goals')
        if quats.ndim == 3 and quats.shape[1] == 1:
            quats = quats[:, 0]
        norms = np.linalg.norm(quats, axis=-1, keepdims=True) if quats.ndim == 2 and quats.shape[1] == 4 else np.zeros(1)
        if not (norms > 0).all():
            raise ValueError(f'rotate expects non-zero goal quaternions of shape (envs, 4); got {quats.shape}')
        return quats / norms

    def apply(self, slots: np.ndarray, goals: np.ndarray) -> None:
        _, orientation = self.robot.poses(slots)
        error = wrap_angle(quat_to_yaw(goals) - quat_to_yaw(orientation))
        done = np.abs(error) < self.config.threshold
        velocity = np.zeros((len(slots), 3))
        velocity[:, 2] = np.where(done, 0.0, np.clip(_HEADING_GAIN * error, -self.config.rotation_speed, self.config.rotation_speed))
        self.velocity_controller.apply_base_velocity(slots, velocity)
        self.finished[slots] = done

    def reset(self, slots: np.ndarray) -> None:
        super().reset(slots)
        self.finished[slots] = False

    def get_obs(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        return {'finished': take_rows(self.finished, slots)}


BaseController.register('MoveToPointBySpeedController')(MoveToPointBySpeedController)
BaseController.register('MoveAlongPathPointsController')(MoveAlongPathPointsController)
BaseController.register('RotateController')(RotateController)
