"""The reward terms Aliengo's walking policy is trained with, and the fall check.

The terms have H1's names (:mod:`internutopia_extension.robots.h1_locomotion.rewards`: one
``LocomotionTask`` table serves both) and a quadruped's numbers: four feet following the trot
clock, a lower base, a fall when the base sinks or tips. Terms H1 needs and a quadruped does not
(side-step foot placement, the narrow tracking kernel) keep a zero scale. The terms are
:class:`~internutopia_extension.robots.locomotion_rewards.WalkRewardSpec`'s, with Aliengo's numbers (:data:`SPEC`).
"""

from __future__ import annotations

from internutopia_extension.robots.locomotion_rewards import ONCE_TERMS, WalkRewardSpec  # noqa: F401  (the task reads ONCE_TERMS here)

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
#: Width of the yaw-rate tracking kernel ((rad/s)^2): wider than the linear kernel's 0.25. Yaw
#: commands span +-2 rad/s, and at sigma 0.25 an untrained policy's 1 rad/s error earns almost
#: nothing, so turning got no gradient (2.5 M steps, 0.78 rad/s error).
YAW_SIGMA = 0.5
#: Hip (abduction) columns of the 12 leg joints.
HIP_COLUMNS = (0, 3, 6, 9)

#: Aliengo's reward numbers (no side-step foot placement: that term is zero); the terms and the
#: fall check below are its.
SPEC = WalkRewardSpec(base_height=BASE_HEIGHT, swing_height=SWING_HEIGHT, fall_height=FALL_HEIGHT, fall_gravity_z=FALL_GRAVITY_Z,
                      hip_columns=HIP_COLUMNS, contact_force=CONTACT_FORCE, yaw_sigma=YAW_SIGMA)
TERMS = SPEC.terms
fallen = SPEC.fallen
reward_terms = SPEC.reward_terms

#: Scale of each term (legged_gym's quadruped scales where it has the term). ``stand_still`` was
#: -2 for the first 12 M steps; at that scale the policy crept backwards about 1 cm/s after
#: stopping (2026-11-25), so the rest of the run used -10.
REWARD_SCALES: dict[str, float] = {
    'track_lin_vel': 1.5, 'track_ang_vel': 1.0, 'lin_vel_z': -2.0, 'ang_vel_xy': -0.05, 'orientation': -2.0,
    'base_height': -10.0, 'action_rate': -0.01, 'joint_vel': -5e-4, 'hip_pos': -0.5, 'contact': 0.1,
    'swing_height': -20.0, 'foot_slip': -0.2, 'alive': 0.15, 'stand_still': -10.0, 'foot_placement': 0.0,
    'track_lin_vel_fine': 0.0, 'termination': 0.0, 'stand_foot_speed': 0.0,
}
