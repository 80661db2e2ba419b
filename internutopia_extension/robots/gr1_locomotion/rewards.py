"""The reward terms a GR1 walking policy is to be trained with, and the fall check.

The terms have H1's names and meaning (:mod:`internutopia_extension.robots.h1_locomotion.rewards`:
one ``LocomotionTask`` table serves every walking robot) and GR1's numbers: its standing pelvis
height, its narrower stance (soles 0.107 m either side of the pelvis), the hip roll and yaw
columns of its 12 leg joints. The scales are H1's, a starting point for GR1's first training run.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from internutopia_extension.robots.gr1_locomotion.gait import GAIT_PERIOD, STANCE_FRACTION
from internutopia_extension.robots.gr1_model import STANDING_HEIGHT
from internutopia_extension.robots.h1_locomotion.rewards import (  # noqa: F401  (ONCE_TERMS: the task reads it here)
    ONCE_TERMS,
    planar_velocity_error_sq,
    track_kernel,
)
from internutopia_extension.robots.h1_locomotion.walker import WalkState

#: Pelvis height the policy is asked to keep (m): the standing pose's, a centimetre lower for the
#: servos' sag under the robot's weight.
BASE_HEIGHT = round(STANDING_HEIGHT - 0.01, 3)
#: Height a swinging sole should reach (m).
SWING_HEIGHT = 0.08
#: Normal force above which a sole counts as on the ground (N).
CONTACT_FORCE = 5.0
#: A robot has fallen when its pelvis is below this (m) or tilted so far that gravity's
#: body-frame z component is above :data:`FALL_GRAVITY_Z` (about 50 degrees).
FALL_HEIGHT = 0.55
FALL_GRAVITY_Z = -0.65
#: A sole's sideways offset from the pelvis in the standing pose (m; left +, right -).
FOOT_OFFSET = 0.107
#: Where a swinging sole is asked to land sideways for a lateral command ``v`` (see H1's).
LANDING_LEAD = 0.5 * STANCE_FRACTION * GAIT_PERIOD
#: Hip roll and yaw columns of the 12 leg joints (left 0, 1; right 6, 7).
HIP_COLUMNS = [0, 1, 6, 7]
FINE_TRACKING_SIGMA = 0.05
FOOT_PLACEMENT_SIGMA = 0.01




def fallen(state: WalkState) -> np.ndarray:
    """Robots that have fallen (k,) bool."""
    return (state.height < FALL_HEIGHT) | (state.gravity[:, 2] > FALL_GRAVITY_Z)


TERMS: dict[str, Callable[[WalkState], np.ndarray]] = {
    'track_lin_vel': lambda s: track_kernel(planar_velocity_error_sq(s)),
    'track_ang_vel': lambda s: track_kernel((s.command[:, 2] - s.ang_vel[:, 2]) ** 2),
    'track_lin_vel_fine': lambda s: track_kernel(planar_velocity_error_sq(s), FINE_TRACKING_SIGMA),
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
    'foot_placement': lambda s: np.sum(track_kernel((s.foot_lateral - np.array([FOOT_OFFSET, -FOOT_OFFSET])
                                               - LANDING_LEAD * s.command[:, 1:2]) ** 2, FOOT_PLACEMENT_SIGMA)
                                       * ~s.stance, axis=1) * s.moving,
    'termination': lambda s: fallen(s).astype(float),
    'stand_still': lambda s: (np.hypot(s.lin_vel[:, 0], s.lin_vel[:, 1]) + 0.5 * np.abs(s.ang_vel[:, 2])) * ~s.moving,
}

#: Scale of each term (H1's).
REWARD_SCALES: dict[str, float] = {
    'track_lin_vel': 1.0, 'track_ang_vel': 0.5, 'lin_vel_z': -2.0, 'ang_vel_xy': -0.05, 'orientation': -1.0,
    'base_height': -10.0, 'action_rate': -0.01, 'joint_vel': -1e-3, 'hip_pos': -1.0, 'contact': 0.18,
    'swing_height': -20.0, 'foot_slip': -0.2, 'alive': 0.15, 'stand_still': -5.0, 'foot_placement': 0.0,
    'track_lin_vel_fine': 0.0, 'termination': 0.0,
}


def reward_terms(state: WalkState) -> dict[str, np.ndarray]:
    """Every term of :data:`TERMS` for ``state``, by name."""
    return {name: term(state) for name, term in TERMS.items()}
