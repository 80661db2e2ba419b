"""The reward terms H1's walking policy is trained with, and the fall check.

Each term is a function of a :class:`~.walker.WalkState` giving one value per robot; the reward
of a tick is ``sum(scale * term) * CONTROL_DT`` over :data:`REWARD_SCALES` (the style of
legged_gym and MuJoCo Playground: tracking terms are kernels in [0, 1], the rest are penalties
with negative scales). The terms of :data:`ONCE_TERMS` are the exception: paid once, on the step
a robot falls, and not per second. The scales are data: a training run may override them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from internutopia_extension.robots.h1_locomotion.gait import GAIT_PERIOD, STANCE_FRACTION
from internutopia_extension.robots.h1_locomotion.walker import WalkState

#: Pelvis height the policy is asked to keep (m; standing on the slightly bent knees of the standing pose).
BASE_HEIGHT = 0.98
#: Height a swinging sole should reach (m).
SWING_HEIGHT = 0.08
#: Normal force above which a sole counts as on the ground (N).
CONTACT_FORCE = 5.0
#: A robot has fallen when its pelvis is below this (m) or tilted so far that gravity's
#: body-frame z component is above :data:`FALL_GRAVITY_Z` (about 50 degrees).
FALL_HEIGHT = 0.6
FALL_GRAVITY_Z = -0.65
#: A sole's sideways offset from the pelvis in the standing pose (m; left +, right -).
FOOT_OFFSET = 0.2
#: Where a swinging sole is asked to land sideways for a lateral command ``v``: ``FOOT_OFFSET + v *
#: LANDING_LEAD`` (s), half a stance ahead (Raibert's rule: the pelvis then passes over the foot
#: during the stance and moves ``v`` times the stance time sideways). H1 has no ankle roll: it
#: moves sideways only by where it puts its feet.
LANDING_LEAD = 0.5 * STANCE_FRACTION * GAIT_PERIOD
#: Width of the narrow velocity-tracking kernel (m^2/s^2; 0.82 at 0.1 m/s off, 0.45 at 0.2 m/s off).
FINE_TRACKING_SIGMA = 0.05
#: Width of the foot-placement kernel (m^2).
FOOT_PLACEMENT_SIGMA = 0.01


def track_kernel(error_sq: np.ndarray, sigma: float = 0.25) -> np.ndarray:
    """The tracking kernel ``exp(-error_sq / sigma)`` (1 at no error; every walking robot's rewards use it)."""
    return np.exp(-error_sq / sigma)


def planar_velocity_error_sq(s: WalkState) -> np.ndarray:
    return np.sum((s.command[:, :2] - s.lin_vel[:, :2]) ** 2, axis=1)


def fallen(state: WalkState) -> np.ndarray:
    """Robots that have fallen (k,) bool."""
    return (state.height < FALL_HEIGHT) | (state.gravity[:, 2] > FALL_GRAVITY_Z)


TERMS: dict[str, Callable[[WalkState], np.ndarray]] = {
    'track_lin_vel': lambda s: track_kernel(planar_velocity_error_sq(s)),
    'track_ang_vel': lambda s: track_kernel((s.command[:, 2] - s.ang_vel[:, 2]) ** 2),
    # The same error under a narrow kernel: the wide one is nearly flat within 0.1 m/s of the
    # command (0.96 there), so a policy 20 % short of a 0.5 m/s side-step loses almost nothing.
    'track_lin_vel_fine': lambda s: track_kernel(planar_velocity_error_sq(s), FINE_TRACKING_SIGMA),
    'lin_vel_z': lambda s: s.lin_vel[:, 2] ** 2,
    'ang_vel_xy': lambda s: np.sum(s.ang_vel[:, :2] ** 2, axis=1),
    'orientation': lambda s: np.sum(s.gravity[:, :2] ** 2, axis=1),
    'base_height': lambda s: (s.height - BASE_HEIGHT) ** 2,
    'action_rate': lambda s: np.sum((s.action - s.last_action) ** 2, axis=1),
    'joint_vel': lambda s: np.sum(s.leg_dq ** 2, axis=1),
    # Hip yaw and roll (columns 0, 1 of each leg) away from straight.
    'hip_pos': lambda s: np.sum(s.leg_q[:, [0, 1, 5, 6]] ** 2, axis=1),
    'contact': lambda s: np.sum((s.touch > CONTACT_FORCE) == s.stance, axis=1).astype(float),
    'swing_height': lambda s: np.sum((s.foot_height - SWING_HEIGHT) ** 2 * ~s.stance, axis=1),
    'foot_slip': lambda s: np.sum(s.foot_speed ** 2 * (s.touch > CONTACT_FORCE), axis=1),
    'alive': lambda s: np.ones(len(s.height)),
    # Swinging soles near where a side-step needs them to land (see LANDING_LEAD), while walking.
    'foot_placement': lambda s: np.sum(track_kernel((s.foot_lateral - np.array([FOOT_OFFSET, -FOOT_OFFSET])
                                               - LANDING_LEAD * s.command[:, 1:2]) ** 2, FOOT_PLACEMENT_SIGMA)
                                       * ~s.stance, axis=1) * s.moving,
    # A fall (paid once, see ONCE_TERMS): the end of the episode alone costs a fast side-step's
    # fall no more than the few seconds of reward it forgoes, which the narrow kernel outbids.
    'termination': lambda s: fallen(s).astype(float),
    # Told to stand (clock stopped): any planar speed or turning is drift. Linear in the speed, so a
    # slow creep costs as much per metre as a fast one (a squared term barely sees 2 cm/s).
    'stand_still': lambda s: (np.hypot(s.lin_vel[:, 0], s.lin_vel[:, 1]) + 0.5 * np.abs(s.ang_vel[:, 2])) * ~s.moving,
}

#: Scale of each term (Unitree's RL examples for H1 use similar ones).
REWARD_SCALES: dict[str, float] = {
    'track_lin_vel': 1.0, 'track_ang_vel': 0.5, 'lin_vel_z': -2.0, 'ang_vel_xy': -0.05, 'orientation': -1.0,
    'base_height': -10.0, 'action_rate': -0.01, 'joint_vel': -1e-3, 'hip_pos': -1.0, 'contact': 0.18,
    'swing_height': -20.0, 'foot_slip': -0.2, 'alive': 0.15, 'stand_still': -5.0, 'foot_placement': 0.0,
    'track_lin_vel_fine': 0.0, 'termination': 0.0,
}

#: Terms paid once, on the step a robot falls, instead of per second: the task adds ``scale * term``
#: after the clip at zero (legged_gym's order; a penalty the clip swallowed would cost nothing).
ONCE_TERMS = ('termination',)


def reward_terms(state: WalkState) -> dict[str, np.ndarray]:
    """Every term of :data:`TERMS` for ``state``, by name."""
    return {name: term(state) for name, term in TERMS.items()}
