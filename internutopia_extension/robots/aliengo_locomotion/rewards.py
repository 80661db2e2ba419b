"""The reward terms Aliengo's walking policy is trained with, and the fall check.

The terms have H1's names (:mod:`internutopia_extension.robots.h1_locomotion.rewards`: one
``LocomotionTask`` table serves both) and a quadruped's numbers: four feet following the trot
clock, a lower base, a fall when the base sinks or tips. Terms H1 needs and a quadruped does not
(side-step foot placement, the narrow tracking kernel) keep a zero scale.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from internutopia_extension.robots.h1_locomotion.rewards import (  # noqa: F401  (ONCE_TERMS: the task reads it here)
    ONCE_TERMS,
    planar_velocity_error_sq,
    track_kernel,
)
from internutopia_extension.robots.h1_locomotion.walker import WalkState

#: Base height the policy is asked to keep (m; the standing pose under the walking servos).
BASE_HEIGHT = 0.35
#: Height a swinging foot's centre should reach (m; the foot sphere's radius is 0.0265 m).
SWING_HEIGHT = 0.09
#: Normal force above which a foot counts as on the ground (N).
CONTACT_FORCE = 5.0
#: A robot has fallen when its base is below this (m) or tilted so far that gravity's body-frame
#: z component is above :data:`FALL_GRAVITY_Z` (about 60 degrees).
FALL_HEIGHT = 0.2
FALL_GRAVITY_Z = -0.5
#: Width of the yaw-rate tracking kernel ((rad/s)^2).
YAW_SIGMA = 0.5
#: Hip (abduction) columns of the 12 leg joints.
HIP_COLUMNS = [0, 3, 6, 9]




def fallen(state: WalkState) -> np.ndarray:
    """Robots that have fallen (k,) bool."""
    return (state.height < FALL_HEIGHT) | (state.gravity[:, 2] > FALL_GRAVITY_Z)


TERMS: dict[str, Callable[[WalkState], np.ndarray]] = {
    'track_lin_vel': lambda s: track_kernel(planar_velocity_error_sq(s)),
    # Wider than the linear kernel: yaw commands span +-2 rad/s, and at sigma 0.25 an untrained
    # policy's 1 rad/s error earns almost nothing, so turning got no gradient (2.5 M steps, 0.78
    # rad/s error).
    'track_ang_vel': lambda s: track_kernel((s.command[:, 2] - s.ang_vel[:, 2]) ** 2, YAW_SIGMA),
    'track_lin_vel_fine': lambda s: track_kernel(planar_velocity_error_sq(s), 0.05),
    'lin_vel_z': lambda s: s.lin_vel[:, 2] ** 2,
    'ang_vel_xy': lambda s: np.sum(s.ang_vel[:, :2] ** 2, axis=1),
    'orientation': lambda s: np.sum(s.gravity[:, :2] ** 2, axis=1),
    'base_height': lambda s: (s.height - BASE_HEIGHT) ** 2,
    'action_rate': lambda s: np.sum((s.action - s.last_action) ** 2, axis=1),
    'joint_vel': lambda s: np.sum(s.leg_dq ** 2, axis=1),
    'hip_pos': lambda s: np.sum(s.leg_q[:, HIP_COLUMNS] ** 2, axis=1),
    'contact': lambda s: np.sum((s.touch > CONTACT_FORCE) == s.stance, axis=1).astype(float),
    'swing_height': lambda s: np.sum((s.foot_height - SWING_HEIGHT) ** 2 * ~s.stance, axis=1),
    'foot_slip': lambda s: np.sum(s.foot_speed ** 2 * (s.touch > CONTACT_FORCE), axis=1),
    'alive': lambda s: np.ones(len(s.height)),
    'foot_placement': lambda s: np.zeros(len(s.height)),
    'termination': lambda s: fallen(s).astype(float),
    # Told to stand (clock stopped): any planar speed or turning is drift.
    'stand_still': lambda s: (np.hypot(s.lin_vel[:, 0], s.lin_vel[:, 1]) + 0.5 * np.abs(s.ang_vel[:, 2])) * ~s.moving,
}

#: Scale of each term (legged_gym's quadruped scales where it has the term). ``stand_still`` was
#: -2 for the first 12 M steps; at that scale the policy crept backwards about 1 cm/s after
#: stopping (2026-11-25), so the rest of the run used -10.
REWARD_SCALES: dict[str, float] = {
    'track_lin_vel': 1.5, 'track_ang_vel': 1.0, 'lin_vel_z': -2.0, 'ang_vel_xy': -0.05, 'orientation': -2.0,
    'base_height': -10.0, 'action_rate': -0.01, 'joint_vel': -5e-4, 'hip_pos': -0.5, 'contact': 0.1,
    'swing_height': -20.0, 'foot_slip': -0.2, 'alive': 0.15, 'stand_still': -10.0, 'foot_placement': 0.0,
    'track_lin_vel_fine': 0.0, 'termination': 0.0,
}


def reward_terms(state: WalkState) -> dict[str, np.ndarray]:
    """Every term of :data:`TERMS` for ``state``, by name."""
    return {name: term(state) for name, term in TERMS.items()}
