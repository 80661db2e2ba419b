"""The compiled twin of the walking reward (:class:`~.locomotion_rewards.WalkRewardSpec`'s terms) and of
the locomotion task's payment around it.

On every control tick ``LocomotionTask`` computes each walking robot's 18 reward terms from its
:class:`~internutopia_extension.robots.h1_locomotion.walker.WalkState`, fills its term table,
weighs the terms by the slot's scales, sums them and checks falls: about seventy numpy calls on
``k``-row arrays, some 260 us a tick at 64 robots, while the arithmetic itself is a few hundred
flops a robot. :func:`pay_rows` does it in one compiled pass over the robots. The numpy terms
(:meth:`WalkRewardSpec.reward_terms`) stay the reference: the same formulas in the same order,
equal to rounding (``tests/test_locomotion_rewards_kernel.py`` compares both on random states of
every walking robot, to a few ulp; numpy sums some rows pairwise and its ``exp`` is its own).

>>> from internutopia_extension.robots.h1_locomotion import rewards
>>> numbers = spec_numbers(rewards.SPEC)
>>> numbers.shape
(11,)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from internutopia.core.util.jit import Kernel

__all__ = ['PAY_KERNEL', 'TERM_ORDER', 'CompiledPayment', 'pay_rows', 'spec_numbers']

#: The terms the kernel computes, in its column order (a task maps them to its own table's columns).
TERM_ORDER = ('track_lin_vel', 'track_ang_vel', 'track_lin_vel_fine', 'lin_vel_z', 'ang_vel_xy', 'orientation', 'base_height',
              'action_rate', 'joint_vel', 'hip_pos', 'contact', 'swing_height', 'foot_slip', 'alive', 'foot_placement',
              'termination', 'stand_still', 'stand_foot_speed')
# Offsets into the spec's numbers (spec_numbers).
_BASE, _SWING, _FALL_H, _FALL_GZ, _CONTACT, _YAW_SIGMA, _FINE_SIGMA, _HAS_FOOT, _FOOT_OFFSET, _LEAD, _FOOT_SIGMA = range(11)
#: The velocity-tracking kernel's width (``track_kernel``'s default).
_TRACK_SIGMA = 0.25


def spec_numbers(spec: Any) -> np.ndarray:
    """A :class:`WalkRewardSpec`'s numbers as the kernel reads them (float64, offsets above)."""
    return np.array([spec.base_height, spec.swing_height, spec.fall_height, spec.fall_gravity_z, spec.contact_force,
                     spec.yaw_sigma, spec.fine_tracking_sigma, 0.0 if spec.foot_offset is None else 1.0,
                     spec.foot_offset or 0.0, spec.landing_lead, spec.foot_placement_sigma])


def pay_rows(height, gravity, lin_vel, ang_vel, leg_q, leg_dq, action, last_action, command, stance, moving, touch,
             foot_height, foot_speed, foot_lateral, numbers, hips, columns, once, scales, span, members, table, reward,
             once_reward, fell, tracking_error, yaw_rate_error):  # pragma: no cover - compiled
    """For robot ``r`` of a walk state (slot ``members[r]``): its terms into row ``members[r]`` of
    ``table`` (term ``t`` of :data:`TERM_ORDER` in column ``columns[t]``); ``reward[r]`` and
    ``once_reward[r]``, the sums of ``scales[members[r]] * table row`` over the per-second and the
    once columns (``once[c]``), left to right; ``fell[r]``; and ``span[r]`` times the planar and
    yaw-rate tracking errors added to ``tracking_error`` and ``yaw_rate_error`` at ``members[r]``."""
    k = height.shape[0]
    legs = leg_q.shape[1]
    feet = touch.shape[1]
    terms = np.empty(len(TERM_ORDER))
    for r in range(k):
        ex = command[r, 0] - lin_vel[r, 0]
        ey = command[r, 1] - lin_vel[r, 1]
        error_sq = ex * ex + ey * ey
        yaw_error = command[r, 2] - ang_vel[r, 2]
        fallen = height[r] < numbers[_FALL_H] or gravity[r, 2] > numbers[_FALL_GZ]
        still = 0.0 if moving[r] else 1.0
        action_rate = 0.0
        joint_vel = 0.0
        for j in range(legs):
            change = action[r, j] - last_action[r, j]
            action_rate += change * change
            joint_vel += leg_dq[r, j] * leg_dq[r, j]
        hip_pos = 0.0
        for h in range(hips.shape[0]):
            hip_pos += leg_q[r, hips[h]] * leg_q[r, hips[h]]
        contact = 0.0
        swing = 0.0
        slip = 0.0
        placement = 0.0
        sole_speed = 0.0
        for f in range(feet):
            down = touch[r, f] > numbers[_CONTACT]
            if down == stance[r, f]:
                contact += 1.0
            if not stance[r, f]:
                lift = foot_height[r, f] - numbers[_SWING]
                swing += lift * lift
            if down:
                slip += foot_speed[r, f] * foot_speed[r, f]
            sole_speed += foot_speed[r, f]
            if numbers[_HAS_FOOT] != 0.0 and not stance[r, f]:
                side = numbers[_FOOT_OFFSET] if f == 0 else -numbers[_FOOT_OFFSET]
                miss = foot_lateral[r, f] - side - numbers[_LEAD] * command[r, 1]
                placement += math.exp(-(miss * miss) / numbers[_FOOT_SIGMA])
        terms[0] = math.exp(-error_sq / _TRACK_SIGMA)
        terms[1] = math.exp(-(yaw_error * yaw_error) / numbers[_YAW_SIGMA])
        terms[2] = math.exp(-error_sq / numbers[_FINE_SIGMA])
        terms[3] = lin_vel[r, 2] * lin_vel[r, 2]
        terms[4] = ang_vel[r, 0] * ang_vel[r, 0] + ang_vel[r, 1] * ang_vel[r, 1]
        terms[5] = gravity[r, 0] * gravity[r, 0] + gravity[r, 1] * gravity[r, 1]
        terms[6] = (height[r] - numbers[_BASE]) * (height[r] - numbers[_BASE])
        terms[7] = action_rate
        terms[8] = joint_vel
        terms[9] = hip_pos
        terms[10] = contact
        terms[11] = swing
        terms[12] = slip
        terms[13] = 1.0
        terms[14] = placement if moving[r] else 0.0
        terms[15] = 1.0 if fallen else 0.0
        terms[16] = (math.hypot(lin_vel[r, 0], lin_vel[r, 1]) + 0.5 * abs(ang_vel[r, 2])) * still
        terms[17] = sole_speed * still
        m = members[r]
        for t in range(len(TERM_ORDER)):
            table[m, columns[t]] = terms[t]
        per_second = 0.0
        paid_once = 0.0
        for c in range(table.shape[1]):
            weighted = scales[m, c] * table[m, c]
            if once[c]:
                paid_once += weighted
            else:
                per_second += weighted
        reward[r] = per_second
        once_reward[r] = paid_once
        fell[r] = fallen
        tracking_error[m] += span[r] * math.sqrt(error_sq)
        yaw_rate_error[m] += span[r] * abs(yaw_error)


_pay_kernel = Kernel(pay_rows)
#: The compiled :func:`pay_rows`, for kernels that compile it into theirs (``Kernel``'s ``uses``).
PAY_KERNEL = _pay_kernel

#: The walk state's fields in the kernel's argument order.
_STATE_FIELDS = ('height', 'gravity', 'lin_vel', 'ang_vel', 'leg_q', 'leg_dq', 'action', 'last_action', 'command', 'stance',
                 'moving', 'touch', 'foot_height', 'foot_speed', 'foot_lateral')


class CompiledPayment:
    """:func:`pay_rows` for one task's tables: ``LocomotionTask`` pays a robot group's walk state
    with :meth:`pay`. The state's fields are passed C-contiguous (the walker's are column views
    of its gathered rows), so one compiled version serves every call, made when this is created.

    Args:
        names: the task's term columns, by name (every name of :data:`TERM_ORDER` among them).
        once: which of those columns are paid once, not per second (bool, one per column).
        scales, table, tracking_error, yaw_rate_error: the task's per-slot arrays (float64) it
            reads and writes.
    """

    def __init__(self, names: list[str], once: np.ndarray, scales: np.ndarray, table: np.ndarray, tracking_error: np.ndarray,
                 yaw_rate_error: np.ndarray) -> None:
        self.columns = np.array([names.index(name) for name in TERM_ORDER], dtype=np.intp)
        self.once = np.ascontiguousarray(once, dtype=bool)
        self.scales, self.table = scales, table
        self.tracking_error, self.yaw_rate_error = tracking_error, yaw_rate_error
        self._numbers: dict[int, tuple[Any, np.ndarray, np.ndarray]] = {}  # id(spec) -> (spec, numbers, hip columns)
        self._kernel: Any = _pay_kernel.compiled_or(None)
        if self._kernel is not None:
            self._warm()

    @property
    def available(self) -> bool:
        """Whether the compiled kernel runs here (numba available and not turned off)."""
        return self._kernel is not None

    def spec_arrays(self, spec: Any) -> tuple[np.ndarray, np.ndarray]:
        """A ``WalkRewardSpec``'s numbers (:func:`spec_numbers`) and hip columns, as the kernel reads them (made once per spec)."""
        entry = self._numbers.get(id(spec))
        if entry is None or entry[0] is not spec:
            entry = self._numbers[id(spec)] = (spec, spec_numbers(spec), np.array(spec.hip_columns, dtype=np.intp))
        return entry[1], entry[2]

    def pay(self, spec: Any, state: Any, span: np.ndarray, members: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fill the task's table rows of ``members`` from ``state`` (robots in ``members`` order)
        and add their tracking errors times ``span``; return each robot's per-second and once
        rewards (weighted by the task's scales, summed) and whether it has fallen."""
        kernel = self._kernel
        if kernel is None:
            raise RuntimeError('the compiled payment needs numba (see available); pay with the numpy terms')
        numbers, hips = self.spec_arrays(spec)
        k = len(members)
        reward, once_reward, fell = np.empty(k), np.empty(k), np.empty(k, dtype=bool)
        fields = [np.ascontiguousarray(getattr(state, name)) for name in _STATE_FIELDS]
        kernel(*fields, numbers, hips, self.columns, self.once, self.scales, np.ascontiguousarray(span, dtype=np.int64),
                     np.ascontiguousarray(members, dtype=np.intp), self.table, reward, once_reward, fell, self.tracking_error,
                     self.yaw_rate_error)
        return reward, once_reward, fell

    def _warm(self) -> None:
        """Compile (or load) the one version :meth:`pay` calls: zero robots, the same types."""
        feet = np.zeros((0, 2))
        legs = np.zeros((0, 1))
        fields = [np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), legs, legs, legs, legs, np.zeros((0, 3)),
                  np.zeros((0, 2), dtype=bool), np.zeros(0, dtype=bool), feet, feet, feet, feet]
        _pay_kernel.warm(*fields, np.zeros(11), np.zeros(0, dtype=np.intp), self.columns, self.once, self.scales,
                         np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.intp), self.table, np.zeros(0), np.zeros(0),
                         np.zeros(0, dtype=bool), self.tracking_error, self.yaw_rate_error)
