"""The stand hold a walker puts over a velocity policy (:mod:`internutopia_extension.robots.stand_hold`):
when it takes its anchor, what it sends back, and that a user's command always wins."""

from __future__ import annotations

import numpy as np
import pytest

from internutopia_extension.robots.stand_hold import StandHold, StandHoldSpec

DT = 0.02


def _ticks(hold, n, requested, xy, yaw, stopped):
    command = None
    for _ in range(n):
        command = hold.apply(np.arange(len(xy)), requested, xy, yaw, stopped, DT)
    return command


def test_the_anchor_is_taken_a_delay_after_the_clock_stops_and_the_robot_is_sent_back_to_it():
    hold = StandHold(StandHoldSpec(delay=0.1, gain=2.0, yaw_gain=1.0, limit=(0.08, 0.08, 0.1)), env_num=1)
    zero, yaw = np.zeros((1, 3)), np.array([np.pi / 2])  # facing +y
    # still stepping (clock running): no hold, the anchor follows the robot however long it lasts
    assert np.array_equal(_ticks(hold, 50, zero, np.array([[5.0, 5.0]]), yaw, np.array([False])), zero)
    # clock stopped: the anchor keeps following for ``delay`` (5 ticks), then stays put
    assert np.array_equal(_ticks(hold, 5, zero, np.array([[1.0, 2.0]]), yaw, np.array([True])), zero)
    command = _ticks(hold, 1, zero, np.array([[1.0, 2.0]]), yaw, np.array([True]))
    np.testing.assert_allclose(hold.anchor[0], [1.0, 2.0])
    np.testing.assert_allclose(command, 0.0, atol=1e-12)  # on the spot: nothing to correct
    # 1 cm east of the anchor, facing north: the way back is 1 cm to its left, at 2 cm/s
    command = _ticks(hold, 1, zero, np.array([[1.01, 2.0]]), yaw, np.array([True]))
    np.testing.assert_allclose(command, [[0.0, 0.02, 0.0]], atol=1e-9)
    # 1 cm short of the anchor and turned 0.05 rad left: forward 2 cm/s, turn right 0.05 rad/s
    command = _ticks(hold, 1, zero, np.array([[1.0, 1.99]]), yaw + 0.05, np.array([True]))
    assert command[0, 0] == pytest.approx(0.02, abs=2e-3) and command[0, 2] == pytest.approx(-0.05)


def test_the_way_back_is_capped_and_the_heading_error_wraps():
    hold = StandHold(StandHoldSpec(delay=0.0, limit=(0.08, 0.05, 0.1)), env_num=1)
    zero, stopped = np.zeros((1, 3)), np.array([True])
    _ticks(hold, 1, zero, np.zeros((1, 2)), np.array([np.pi - 0.01]), stopped)  # anchor: facing -x, just short of pi
    command = _ticks(hold, 1, zero, np.array([[3.0, 3.0]]), np.array([-np.pi + 0.01]), stopped)  # 0.02 rad past pi
    np.testing.assert_allclose(np.abs(command[0, :2]), [0.08, 0.05])  # capped per axis
    assert command[0, 2] == pytest.approx(-0.02)  # turn back the short way, not 2 pi - 0.02


def test_a_users_command_replaces_the_hold_and_a_new_stand_takes_a_new_anchor():
    hold = StandHold(StandHoldSpec(delay=0.0), env_num=2)
    zero, yaw, stopped = np.zeros((2, 3)), np.zeros(2), np.ones(2, dtype=bool)
    _ticks(hold, 2, zero, np.zeros((2, 2)), yaw, stopped)
    walk = np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.2]])  # slot 1 told to walk
    command = _ticks(hold, 1, walk, np.array([[0.1, 0.0], [0.1, 0.0]]), yaw, stopped)
    assert command[0, 0] < 0.0  # slot 0 still held (sent back)
    np.testing.assert_array_equal(command[1], walk[1])  # slot 1's command, untouched
    assert hold.standing_for[1] == 0.0
    _ticks(hold, 2, zero, np.array([[0.1, 0.0], [2.0, 1.0]]), yaw, stopped)
    np.testing.assert_allclose(hold.anchor[1], [2.0, 1.0])  # where it stopped this time
    hold.reset(np.array([0]))
    assert hold.standing_for[0] == 0.0


def test_the_requested_array_is_not_changed():
    hold = StandHold(StandHoldSpec(delay=0.0), env_num=1)
    requested = np.zeros((1, 3))
    _ticks(hold, 3, requested, np.array([[0.3, 0.0]]), np.zeros(1), np.array([True]))
    _ticks(hold, 1, requested, np.array([[0.5, 0.0]]), np.zeros(1), np.array([True]))
    assert not requested.any()
