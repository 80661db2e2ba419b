"""The steering laws of the base-motion controllers (:mod:`~internutopia_extension.controllers.base_motion`),
vectorized over robots, each compiled by numba where it is available and in numpy otherwise (the
two give the same results; ``tests/test_jit.py`` and ``tests/test_controller_hold.py`` compare them).

- :func:`steer_towards` (and :func:`steer_towards_each`): body-frame velocities towards goal
  points, turning in place beyond a heading error, slowing near the goal (a locomotion task's goal
  steering compiles it into its own pass);
- :func:`steer_and_hold`: the same for goals that are held: a goal reached stays reached until the
  base is ``RELEASE`` thresholds from it; a robot that moves sideways (:func:`moves_sideways`) steps
  straight to a near goal; a walker slows to stop by it (:func:`stopping_rate`);
- the path kernel: one step of ``move_along_path`` for every slot in one call.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from internutopia.core.util.jit import Kernel
from internutopia.core.util.math import quat_to_yaw
from internutopia_extension.controllers.holonomic_base import HolonomicBaseController

#: Heading error (rad) beyond which the base turns in place before driving forward.
_TURN_IN_PLACE = np.pi / 4
#: Proportional gain of the heading loop (rad/s per rad), clipped to ``rotation_speed``.
HEADING_GAIN = 3.0
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
    np.multiply(error, HEADING_GAIN, out=yaw_rate)
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
        velocity[i, 2] = min(max(HEADING_GAIN * error, -rotation_speed), rotation_speed)


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
    velocity[i, 2] = min(max(HEADING_GAIN * error, -rotation_speed), rotation_speed)
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
    velocity[:, 2] = np.clip(HEADING_GAIN * error, -rotation_speed, rotation_speed)
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
#: The path kernel (``move_along_path``'s step for every slot), for the controller.
FOLLOW_KERNEL = _follow_kernel


__all__ = ['FOLLOW_KERNEL', 'HEADING_GAIN', 'MIN_TURN_RATE', 'RELEASE', 'STEER_KERNEL', 'moves_sideways', 'steer_and_hold', 'steer_towards', 'steer_towards_each',
           'stopping_rate', 'warm_holding', 'warm_steering']
