"""The reward terms H1's walking policy is trained with, and the fall check.

Each term is a function of a :class:`~.walker.WalkState` giving one value per robot; the reward
of a tick is ``sum(scale * term) * CONTROL_DT`` over :data:`REWARD_SCALES` (the style of
legged_gym and MuJoCo Playground: tracking terms are kernels in [0, 1], the rest are penalties
with negative scales). The terms of :data:`ONCE_TERMS` are the exception: paid once, on the step
a robot falls, and not per second. The scales are data: a training run may override them. The
terms are :class:`~internutopia_extension.robots.locomotion_rewards.WalkRewardSpec`'s (every walking
robot's), with H1's numbers (:data:`SPEC`).
"""

from __future__ import annotations

from internutopia_extension.robots.h1_locomotion.gait import GAIT_PERIOD, STANCE_FRACTION
from internutopia_extension.robots.locomotion_rewards import (  # noqa: F401  (other robots' rewards read them here)
    ONCE_TERMS,
    WalkRewardSpec,
    planar_velocity_error_sq,
    track_kernel,
)

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
#: Hip yaw and roll (columns 0, 1 of each leg), which ``hip_pos`` keeps straight.
HIP_COLUMNS = (0, 1, 5, 6)

#: H1's reward numbers; the terms and the fall check below are its.
SPEC = WalkRewardSpec(base_height=BASE_HEIGHT, swing_height=SWING_HEIGHT, fall_height=FALL_HEIGHT, fall_gravity_z=FALL_GRAVITY_Z,
                      hip_columns=HIP_COLUMNS, contact_force=CONTACT_FORCE, fine_tracking_sigma=FINE_TRACKING_SIGMA,
                      foot_offset=FOOT_OFFSET, landing_lead=LANDING_LEAD, foot_placement_sigma=FOOT_PLACEMENT_SIGMA)
TERMS = SPEC.terms
fallen = SPEC.fallen
reward_terms = SPEC.reward_terms

#: Scale of each term (Unitree's RL examples for H1 use similar ones).
REWARD_SCALES: dict[str, float] = {
    'track_lin_vel': 1.0, 'track_ang_vel': 0.5, 'lin_vel_z': -2.0, 'ang_vel_xy': -0.05, 'orientation': -1.0,
    'base_height': -10.0, 'action_rate': -0.01, 'joint_vel': -1e-3, 'hip_pos': -1.0, 'contact': 0.18,
    'swing_height': -20.0, 'foot_slip': -0.2, 'alive': 0.15, 'stand_still': -5.0, 'foot_placement': 0.0,
    'track_lin_vel_fine': 0.0, 'termination': 0.0, 'stand_foot_speed': 0.0,
}
