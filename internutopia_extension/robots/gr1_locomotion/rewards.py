"""The reward terms a GR1 walking policy is to be trained with, and the fall check.

The terms have H1's names and meaning (:mod:`internutopia_extension.robots.h1_locomotion.rewards`:
one ``LocomotionTask`` table serves every walking robot) and GR1's numbers: its standing pelvis
height, its narrower stance (soles 0.107 m either side of the pelvis), the hip roll and yaw
columns of its 12 leg joints. The scales are H1's, a starting point for GR1's first training run.
The terms are :class:`~internutopia_extension.robots.locomotion_rewards.WalkRewardSpec`'s, with
GR1's numbers (:data:`SPEC`).
"""

from __future__ import annotations

from internutopia_extension.robots.gr1_locomotion.gait import GAIT_PERIOD, STANCE_FRACTION
from internutopia_extension.robots.gr1_model import STANDING_HEIGHT
from internutopia_extension.robots.locomotion_rewards import ONCE_TERMS, WalkRewardSpec  # noqa: F401  (the task reads ONCE_TERMS here)

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
HIP_COLUMNS = (0, 1, 6, 7)
FINE_TRACKING_SIGMA = 0.05
FOOT_PLACEMENT_SIGMA = 0.01

#: GR1's reward numbers; the terms and the fall check below are its.
SPEC = WalkRewardSpec(base_height=BASE_HEIGHT, swing_height=SWING_HEIGHT, fall_height=FALL_HEIGHT, fall_gravity_z=FALL_GRAVITY_Z,
                      hip_columns=HIP_COLUMNS, contact_force=CONTACT_FORCE, fine_tracking_sigma=FINE_TRACKING_SIGMA,
                      foot_offset=FOOT_OFFSET, landing_lead=LANDING_LEAD, foot_placement_sigma=FOOT_PLACEMENT_SIGMA)
TERMS = SPEC.terms
fallen = SPEC.fallen
reward_terms = SPEC.reward_terms

#: Scale of each term (H1's).
REWARD_SCALES: dict[str, float] = {
    'track_lin_vel': 1.0, 'track_ang_vel': 0.5, 'lin_vel_z': -2.0, 'ang_vel_xy': -0.05, 'orientation': -1.0,
    'base_height': -10.0, 'action_rate': -0.01, 'joint_vel': -1e-3, 'hip_pos': -1.0, 'contact': 0.18,
    'swing_height': -20.0, 'foot_slip': -0.2, 'alive': 0.15, 'stand_still': -5.0, 'foot_placement': 0.0,
    'track_lin_vel_fine': 0.0, 'termination': 0.0, 'stand_foot_speed': 0.0,
}
