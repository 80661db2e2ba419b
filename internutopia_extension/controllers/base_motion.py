"""The base-motion controllers shared by every mobile robot, vectorized over slots.

``move_to_point`` steers towards a goal, ``move_along_path`` walks waypoints through
``move_to_point``, ``rotate`` turns in place; all end in the robot's own velocity controller
(``move_by_speed``), a :class:`~internutopia.core.controller.base.BaseVelocityController`.
Goals and paths are env-local, as the robot's observed position is.

A goal held (the same command sent every step, as InternUtopia's scripts do) stays reached: once a
slot is within ``threshold`` of its goal (its last waypoint, its heading), it is commanded to stand
and reports ``finished`` until its error exceeds ``RELEASE`` times the threshold (a walking robot's
stopping stride, or its creep while standing, no longer restarts the gait every few steps), or a
new goal comes. Near a point goal, a robot whose ``move_by_speed`` takes a lateral speed (the
walkers, the carried base) steps straight to it, sideways or back, rather than turning in place
around it; ``rotate`` never commands a yaw rate too small for a walker's gait to act on.
"""

from __future__ import annotations

import itertools
import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.controller.base import BaseController, BaseVelocityController, as_float_array
from internutopia.core.robot.base import rows_of, take_rows
from internutopia.core.util.math import quat_to_yaw, wrap_angle
from internutopia_extension.configs.controllers.move_along_path_points_controller import MoveAlongPathPointsControllerCfg
from internutopia_extension.configs.controllers.move_to_point_by_speed_controller import MoveToPointBySpeedControllerCfg
from internutopia_extension.configs.controllers.rotate_controller import RotateControllerCfg
from internutopia_extension.controllers.steering import (
    FOLLOW_KERNEL,
    HEADING_GAIN,
    MIN_TURN_RATE,
    RELEASE,
    moves_sideways,
    steer_and_hold,
    stopping_rate,
    warm_holding,
)

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack

# (the steering laws live in steering.py; the names below stay importable from here, as they were)
__all__ = ['MIN_TURN_RATE', 'RELEASE', 'MoveAlongPathPointsController', 'MoveToPointBySpeedController', 'RotateController']



class MoveToPointBySpeedController(BaseController):
    """``[goal_xyz]`` -> velocity commands; observation ``finished``.

    ``finished`` turns true within ``threshold`` of the goal and, while the same goal is sent,
    stays true (the base commanded to stand) until the base is more than ``RELEASE`` thresholds
    from it; then the base is steered back. A new goal starts afresh.
    """

    config: MoveToPointBySpeedControllerCfg

    def __init__(self, config: Any, robot: Any) -> None:
        super().__init__(config, robot)
        self.velocity_controller = self.sub_controller(BaseVelocityController)
        self.finished = np.zeros(self.env_num, dtype=bool)
        #: The goal each slot was last sent (what ``finished`` holds for).
        self.goal = np.zeros((self.env_num, 3))
        #: Whether the base takes a lateral speed (steps straight to a near goal), see :func:`moves_sideways`.
        self.sideways = moves_sideways(self.velocity_controller)
        #: The deceleration (m/s^2) the approach allows for, 0 for none: see :func:`stopping_rate`.
        self.decel = 0.0

    def bind(self, world: Pack) -> None:
        super().bind(world)  # (the velocity controller first: it finds the robot's walker)
        self.decel = stopping_rate(self.velocity_controller)
        warm_holding()

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
        """Steer ``slots`` towards ``goals`` ``(k, 3)``, a goal reached before and sent again held;
        return which have arrived."""
        rows = rows_of(slots, self.env_num)
        held = self.finished[rows] & (self.goal[rows] == goals).all(axis=1)
        self.goal[rows] = goals
        return self.steer(slots, goals, held, self.config.forward_speed, self.config.rotation_speed, self.config.threshold)

    def steer(self, slots: np.ndarray, goals: np.ndarray, held: np.ndarray, forward_speed: float, rotation_speed: float,
              threshold: float) -> np.ndarray:
        """Steer ``slots`` towards ``goals`` with these speeds and threshold (``move_along_path``
        passes its own, as InternUtopia's does), the slots ``held`` holding a goal reached
        (:func:`steer_and_hold`); set ``finished`` and return which have arrived."""
        position, orientation = self.robot.poses(slots)
        velocity, arrived = steer_and_hold(position, orientation, goals, forward_speed, rotation_speed, threshold,
                                           self.sideways, held, self.decel)
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

    Waypoints are reached within this controller's own ``threshold``, at its own speeds (as
    InternUtopia's passes them to its ``move_to_point``; the sub-controller's are not used).
    Observations: ``current_index``, ``current_point``, ``total_points``, ``finished`` (at the last
    point, reached within ``threshold`` and held while within ``RELEASE`` thresholds of it: a robot
    pushed further is steered back). Sending a different path restarts from its first point;
    sending the same path again continues.
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
        if (isinstance(action, (list, tuple)) or isinstance(action, np.ndarray) and action.ndim == 3) and len(action) == 1:
            action = action[0]  # ([[p0, p1, ...]] as a list or as InternUtopia's one-element array of a path)
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
        # (a sub-controller that drives its own way, as the oracle does, is driven by the numpy chain)
        steers = type(self.point_controller).drive is MoveToPointBySpeedController.drive
        self._follow_kernel = FOLLOW_KERNEL.compiled_or(None) if self.robot.pose_views is not None and steers else None
        if self._follow_kernel is not None:
            # compiled (or loaded) now, for the robot's state arrays, in start-up rather than the first step
            self._follow(np.zeros(0, dtype=np.intp), np.zeros((0, 1, 3)), np.zeros((0, 3)))

    def _follow(self, slots: np.ndarray, paths: np.ndarray, velocity: np.ndarray) -> None:
        flags = paths.flags
        if not (flags.c_contiguous and flags.writeable):  # the one layout the kernel is compiled for
            paths = np.array(paths)
        if paths.shape[1] > self.points.shape[1]:
            self._fit(paths.shape[1])
        config = self.config  # (the path's own speeds and threshold, as InternUtopia's passes them to move_to_point)
        positions, orientations = self.robot.pose_views
        self._follow_kernel(paths, slots, self.points, self.total_points, self.current_index, self.current_point,
                            self.finished, self.point_controller.finished, positions, orientations,
                            float(config.forward_speed), float(config.rotation_speed), float(config.threshold),
                            bool(self.point_controller.sideways), float(self.point_controller.decel), velocity)

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
        """The reference: restart changed paths, steer every slot towards its current waypoint with
        this controller's speeds and threshold (InternUtopia's passes its own to ``move_to_point``),
        move on from a waypoint reached; at the last one, ``finished`` turns true within
        ``threshold`` and stays true while the robot is within ``RELEASE`` thresholds (held), so a
        robot pushed further off its goal is steered back."""
        self._start_paths(slots, paths)
        rows = rows_of(slots, self.env_num)
        index = self.current_index[rows]
        targets = self.points[slots, index]
        self.current_point[rows] = targets
        point = self.point_controller
        if type(point).drive is MoveToPointBySpeedController.drive:
            config = self.config
            arrived = point.steer(slots, targets, self.finished[rows], config.forward_speed, config.rotation_speed,
                                  config.threshold)
        else:  # a sub-controller that drives its own way (the oracle's jumps)
            arrived = point.drive(slots, targets)
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
    """``[goal_quat_wxyz]`` -> turn in place to that heading; observation ``finished``.

    The yaw rate is proportional to the heading error, between ``MIN_TURN_RATE`` (or
    ``rotation_speed``, if less) and ``rotation_speed``. ``finished`` turns true within
    ``threshold`` and, while the same goal is sent, stays true (the base commanded to stand) until
    the error exceeds ``RELEASE`` thresholds; then the base turns back. A new goal starts afresh.
    """

    config: RotateControllerCfg

    def __init__(self, config: Any, robot: Any) -> None:
        super().__init__(config, robot)
        self.velocity_controller = self.sub_controller(BaseVelocityController)
        self.finished = np.zeros(self.env_num, dtype=bool)
        #: The goal each slot was last sent (what ``finished`` holds for).
        self.goal = np.zeros((self.env_num, 4))

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
        rows = rows_of(slots, self.env_num)
        held = self.finished[rows] & (self.goal[rows] == goals).all(axis=1)
        self.goal[rows] = goals
        error = wrap_angle(quat_to_yaw(goals) - quat_to_yaw(orientation))
        size = np.abs(error)
        threshold, speed = self.config.threshold, self.config.rotation_speed
        done = size < threshold
        done |= held & (size < RELEASE * threshold)
        velocity = np.zeros((len(slots), 3))
        rate = velocity[:, 2]
        np.clip(size * HEADING_GAIN, min(MIN_TURN_RATE, speed), speed, out=rate)
        rate *= np.sign(error)
        rate[done] = 0.0
        self.velocity_controller.apply_base_velocity(slots, velocity)
        self.finished[rows] = done

    def reset(self, slots: np.ndarray) -> None:
        super().reset(slots)
        self.finished[slots] = False

    def get_obs(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        return {'finished': take_rows(self.finished, slots)}


BaseController.register('MoveToPointBySpeedController')(MoveToPointBySpeedController)
BaseController.register('MoveAlongPathPointsController')(MoveAlongPathPointsController)
BaseController.register('RotateController')(RotateController)
