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
from internutopia_extension.controllers.holonomic_base import HolonomicBaseController

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack

#: Heading error (rad) beyond which the base turns in place before driving forward.
_TURN_IN_PLACE = np.pi / 4
#: Proportional gain of the heading loop (rad/s per rad), clipped to ``rotation_speed``.
_HEADING_GAIN = 3.0
#: A reached goal is held (commanded to stand, ``finished``) until the error exceeds this many thresholds.
RELEASE = 3.0
#: ``rotate``'s least yaw rate while turning (rad/s; at most ``rotation_speed``): twice what a
#: walker's gait takes for standing (``STAND_COMMAND``, 0.1), so that the last of a turn is walked.
MIN_TURN_RATE = 0.2


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


def _hold_law(velocity: np.ndarray, i: int, dx: float, dy: float, w: float, x: float, y: float, z: float,
              forward_speed: float, rotation_speed: float, threshold: float, sideways: bool, decel: float,
              held: bool) -> bool:
    """The steering law of a held goal for one robot (compiled into the kernels that use it):
    write ``velocity[i]`` for a goal at ``(dx, dy)`` from a base of orientation ``(w, x, y, z)``,
    and return whether the goal is reached (within ``threshold``, or within ``RELEASE`` times it
    when ``held``: reached before). :func:`_hold_numpy` is the same law over rows."""
    distance = math.hypot(dx, dy)
    velocity[i, 0] = 0.0
    velocity[i, 1] = 0.0
    velocity[i, 2] = 0.0
    if distance < threshold or (held and distance < RELEASE * threshold):
        return True
    error = math.atan2(dy, dx) - math.atan2(w * z + x * y, 0.5 - (y * y + z * z))
    error = (error + math.pi) % (2.0 * math.pi) - math.pi
    slow_distance = max(4.0 * threshold, 0.3)
    slow_down = distance * (1.0 / slow_distance)
    if decel > 0.0:  # no faster than a stop at ``decel`` m/s^2 by the threshold
        slow_down = min(slow_down, math.sqrt(2.0 * decel * max(distance - threshold, 0.0)) / forward_speed)
    slow_down = min(max(slow_down, 0.15), 1.0)
    if sideways and distance < slow_distance:  # near: step straight to the goal, no turn
        speed = forward_speed * slow_down
        velocity[i, 0] = speed * math.cos(error)
        velocity[i, 1] = speed * math.sin(error)
        return False
    alignment = max(1.0 - abs(error) / _TURN_IN_PLACE, 0.0)
    velocity[i, 0] = forward_speed * alignment * slow_down
    velocity[i, 2] = min(max(_HEADING_GAIN * error, -rotation_speed), rotation_speed)
    return False


_hold_law_kernel = Kernel(_hold_law)


def _hold_rows(position: np.ndarray, orientation: np.ndarray, goal: np.ndarray, forward_speed: float,
               rotation_speed: float, threshold: float, sideways: bool, decel: float, held: np.ndarray,
               velocity: np.ndarray, arrived: np.ndarray) -> None:
    """:func:`_hold_law` for each row (compiled by numba)."""
    for i in range(goal.shape[0]):
        w, x, y, z = orientation[i, 0], orientation[i, 1], orientation[i, 2], orientation[i, 3]
        arrived[i] = _hold_law(velocity, i, goal[i, 0] - position[i, 0], goal[i, 1] - position[i, 1], w, x, y, z,
                               forward_speed, rotation_speed, threshold, sideways, decel, held[i])


_hold_kernel = Kernel(_hold_rows, uses={'_hold_law': _hold_law_kernel})


def _hold_numpy(position: np.ndarray, orientation: np.ndarray, goal: np.ndarray, forward_speed: float,
                rotation_speed: float, threshold: float, sideways: bool, decel: float,
                held: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    dx = goal[:, 0] - position[:, 0]
    dy = goal[:, 1] - position[:, 1]
    distance = np.hypot(dx, dy)
    arrived = distance < threshold
    arrived |= held & (distance < RELEASE * threshold)
    error = np.arctan2(dy, dx)
    error -= quat_to_yaw(orientation)
    error += np.pi  # wrapped into [-pi, pi)
    np.remainder(error, 2 * np.pi, out=error)
    error -= np.pi
    slow_distance = max(4.0 * threshold, 0.3)
    slow_down = distance * (1.0 / slow_distance)
    if decel > 0.0:
        stop = np.maximum(distance - threshold, 0.0)
        stop *= 2.0 * decel
        np.sqrt(stop, out=stop)
        stop /= forward_speed
        np.minimum(slow_down, stop, out=slow_down)
    np.clip(slow_down, 0.15, 1.0, out=slow_down)
    velocity = np.zeros((len(goal), 3))
    alignment = np.maximum(1.0 - np.abs(error) / _TURN_IN_PLACE, 0.0)
    velocity[:, 0] = forward_speed * alignment * slow_down
    velocity[:, 2] = np.clip(_HEADING_GAIN * error, -rotation_speed, rotation_speed)
    if sideways:
        near = distance < slow_distance
        if near.any():
            speed = forward_speed * slow_down[near]
            velocity[near, 0] = speed * np.cos(error[near])
            velocity[near, 1] = speed * np.sin(error[near])
            velocity[near, 2] = 0.0
    velocity[arrived] = 0.0
    return velocity, arrived


def steer_and_hold(position: np.ndarray, orientation: np.ndarray, goal: np.ndarray, forward_speed: float,
                   rotation_speed: float, threshold: float, sideways: bool, held: np.ndarray,
                   decel: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`steer_towards` for goals that are held: body-frame velocities ``(k, 3)`` and
    whether each goal is reached, where a goal reached before (``held``, ``(k,)``) stays reached
    (zero velocity) until the base is more than ``RELEASE`` times ``threshold`` from it. With
    ``sideways`` (a ``move_by_speed`` that takes a lateral speed), a base nearer than the slow-down
    distance (``max(4 * threshold, 0.3)``) steps straight to the goal (forward and lateral, no
    yaw) rather than turning in place first. ``decel`` (m/s^2, 0 for none): no faster than a stop
    at that deceleration by the threshold (a walker's command follows at a limited rate, so a
    walker sent at speed to the goal walks past it). Compiled when numba is available, else numpy.

    >>> start, facing = np.zeros((2, 3)), np.array([[1.0, 0, 0, 0]] * 2)
    >>> velocity, arrived = steer_and_hold(start, facing, np.array([[0.12, 0, 0]] * 2), 0.5, 1.0, 0.05, False,
    ...                                    np.array([True, False]))
    >>> arrived.tolist(), np.round(velocity, 6).tolist()  # the first reached before: held; the second goes on
    ([True, False], [[0.0, 0.0, 0.0], [0.2, 0.0, 0.0]])
    >>> velocity, _ = steer_and_hold(start, facing, np.array([[0.0, -0.2, 0]] * 2), 0.5, 1.0, 0.05, True, np.zeros(2, bool))
    >>> np.round(velocity[0], 6).tolist()  # the goal on the right, near: a step to the right
    [0.0, -0.333333, 0.0]
    """
    held = np.asarray(held, dtype=bool)
    if _hold_kernel.available:
        velocity = np.empty((len(goal), 3))
        arrived = np.empty(len(goal), dtype=bool)
        _hold_kernel(np.ascontiguousarray(position, dtype=np.float64), np.ascontiguousarray(orientation, dtype=np.float64),
                     np.ascontiguousarray(goal, dtype=np.float64), float(forward_speed), float(rotation_speed),
                     float(threshold), bool(sideways), float(decel), held, velocity, arrived)
        return velocity, arrived
    return _hold_numpy(position, orientation, goal, forward_speed, rotation_speed, threshold, sideways, decel, held)


def moves_sideways(velocity_controller: Any) -> bool:
    """Whether a ``move_by_speed`` controller takes a lateral speed: its ``moves_sideways``
    attribute where it has one, else true for a holonomic base (walking or carried: H1, GR1,
    Aliengo) and false otherwise (the jetbot's differential drive ignores lateral speed)."""
    own = getattr(velocity_controller, 'moves_sideways', None)
    if own is not None:
        return bool(own)
    return isinstance(velocity_controller, HolonomicBaseController)


def stopping_rate(velocity_controller: Any) -> float:
    """The deceleration (m/s^2) a walking robot's approach to a goal allows for: half the rate at
    which its walker's command may change (``COMMAND_RATE`` of its gait: 0.5 for H1 and GR1), so
    that the command it follows is near zero at the goal; 0 (no limit) for a robot that does not
    walk (the jetbot, a carried base), which stops when told to."""
    walker = getattr(velocity_controller, 'walker', None)
    if walker is None:
        return 0.0
    rate = getattr(getattr(walker, 'gait', None), 'COMMAND_RATE', None)
    return 0.5 * float(np.min(rate[:2])) if rate is not None else 0.5


def warm_holding() -> None:
    """Compile (or load) :func:`steer_and_hold`'s kernel now, ahead of a first step that steers."""
    rows, flags = np.zeros((0, 3)), np.zeros(0, dtype=bool)
    _hold_kernel.warm(rows, np.zeros((0, 4)), rows, 1.0, 1.0, 1.0, False, 0.0, flags, rows, flags)


def _follow_rows(paths: np.ndarray, slots: np.ndarray, points: np.ndarray, total_points: np.ndarray,
                 current_index: np.ndarray, current_point: np.ndarray, finished: np.ndarray, point_finished: np.ndarray,
                 positions: np.ndarray, orientations: np.ndarray, forward_speed: float, rotation_speed: float, threshold: float,
                 sideways: bool, decel: float, velocity: np.ndarray) -> None:
    """One step of ``move_along_path`` for ``slots``, one robot per iteration (compiled by numba).

    The whole chain of :meth:`MoveAlongPathPointsController.apply` in one call: restart the slots
    whose commanded path ``paths[i]`` differs from the one they follow, then, for each slot, steer
    towards its current waypoint by :func:`_hold_law` (``velocity[i]``, zero for the slots that
    reached it, a finished slot's last point held), mark arrival on the ``move_to_point``
    sub-controller (``point_finished``) and move on to the next waypoint. The robots' poses are
    read in place in the state (:attr:`~internutopia.core.robot.base.Entity.pose_views`). State
    arrays are indexed by slot, ``paths`` and ``velocity`` by row ``i``.
    """
    length = paths.shape[1]
    width = points.shape[1]
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
        index = current_index[slot]
        for c in range(3):
            current_point[slot, c] = points[slot, index, c]
        w, x, y, z = orientations[slot, 0], orientations[slot, 1], orientations[slot, 2], orientations[slot, 3]
        arrived = _hold_law(velocity, i, points[slot, index, 0] - positions[slot, 0], points[slot, index, 1] - positions[slot, 1],
                            w, x, y, z, forward_speed, rotation_speed, threshold, sideways, decel, finished[slot])
        point_finished[slot] = arrived
        last = index >= total_points[slot] - 1
        finished[slot] = arrived and last  # (held within RELEASE thresholds; a robot pushed further goes back)
        if arrived and not last:
            current_index[slot] = index + 1


_follow_kernel = Kernel(_follow_rows, uses={'_hold_law': _hold_law_kernel})


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
        # (a sub-controller that drives its own way, as the oracle does, is driven by the numpy chain)
        steers = type(self.point_controller).drive is MoveToPointBySpeedController.drive
        self._follow_kernel = _follow_kernel.compiled_or(None) if self.robot.pose_views is not None and steers else None
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
        np.clip(size * _HEADING_GAIN, min(MIN_TURN_RATE, speed), speed, out=rate)
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
