"""What Aliengo's walking controller sees and commands: one definition for training and deployment.

The names are those of H1's :mod:`~internutopia_extension.robots.h1_locomotion.gait` (the shared
walker reads them); the numbers are a quadruped's. The controller runs at 50 Hz: each tick it
reads the observation of :func:`observe` (50 numbers per robot) and outputs 12 numbers in
[-1, 1], one per leg joint (:data:`LEG_JOINTS`, the model's order: leg by leg, hip, thigh, calf);
joint ``j``'s servo target is ``STANDING_POSE[j] + ACTION_SCALE[j] * action[j]``.

A trot clock gives the legs their rhythm: diagonal pairs swing together (front-left with
rear-right, then front-right with rear-left half a stride later), one stride per
:data:`GAIT_PERIOD` seconds. As H1's, the clock stops at 0 (all four feet down) when the command
drops to zero, once both pairs are down, and the robot stands. The functions are
:class:`~internutopia_extension.robots.locomotion_gait.GaitSpec`'s, bound to Aliengo's numbers (:data:`SPEC`).

>>> import numpy as np
>>> obs = observe(np.array([[1.0, 0, 0, 0]]), np.zeros((1, 3)), np.zeros((1, 3)), np.zeros((1, 12)), np.zeros((1, 12)),
...               np.zeros((1, 12)), np.array([[0.5, 0.0, 0.0]]), np.zeros(1))
>>> obs.shape, (obs[0, 6:9] + 0.0).tolist()  # projected gravity of an upright base
((1, 50), [0.0, 0.0, -1.0])
>>> expected_stance(np.array([0.2]), np.array([True])).tolist()  # FL and RR down, FR and RL swinging
[[True, False, False, True]]
"""

from __future__ import annotations

import numpy as np

from internutopia_extension.robots.locomotion_gait import (  # noqa: F401  (the walker reads them here)
    ACTION_SCALE_METADATA,
    ANG_VEL_SCALE,
    COMMAND_SCALE,
    CONTROL_DT,
    JOINT_VEL_SCALE,
    LIN_VEL_SCALE,
    PHYSICS_DT,
    GaitSpec,
    kind_scales,
    phase_signal,
    projected_gravity,
    to_body,
)

#: One stride (each diagonal pair swings once), s.
GAIT_PERIOD = 0.5
#: Fraction of its phase a leg is in stance: a little over half, so that all four feet are down
#: for a moment between the pairs' swings (where the clock may stop).
STANCE_FRACTION = 0.6
#: Below this command norm (m/s and rad/s together) the robot stands: the trot clock stops.
STAND_COMMAND = 0.1
#: Each leg's phase offset in strides (FL, FR, RL, RR): diagonal pairs half a stride apart.
LEG_PHASE_OFFSET = np.array([0.0, 0.5, 0.5, 0.0])

LEGS = ('FL', 'FR', 'RL', 'RR')
#: The joints the policy drives, in the model's order (a contiguous run of the state).
LEG_JOINTS = tuple(f'{leg}_{joint}_joint' for leg in LEGS for joint in ('hip', 'thigh', 'calf'))
#: Standing pose (rad): InternUtopia's Aliengo policy's default pose.
STANDING_POSE: dict[str, float] = {**{f'{leg}_thigh_joint': 0.8 for leg in LEGS}, **{f'{leg}_calf_joint': -1.5 for leg in LEGS}}
LEG_STANDING = np.array([STANDING_POSE.get(name, 0.0) for name in LEG_JOINTS])
#: Servo target range per unit of action (rad) by joint kind.
ACTION_SCALE_BY_KIND = {'hip': 0.25, 'thigh': 0.4, 'calf': 0.4}


def joint_kind(name: str) -> str:
    """A leg joint's kind: ``'FL_thigh_joint'`` -> ``'thigh'``."""
    return name.split('_')[1]


def action_scale(by_kind: dict[str, float]) -> np.ndarray:
    """Per-joint scales ``(12,)`` in :data:`LEG_JOINTS` order from scales by joint kind."""
    return kind_scales(LEG_JOINTS, joint_kind, by_kind)


ACTION_SCALE = action_scale(ACTION_SCALE_BY_KIND)

#: Command limits: forward, lateral (m/s), yaw rate (rad/s); commands are clipped to them.
#: InternUtopia's Aliengo configs ask for up to 1 m/s forward and (``rotate``) 2 rad/s.
COMMAND_LOW = np.array([-0.8, -0.6, -2.0])
COMMAND_HIGH = np.array([1.2, 0.6, 2.0])
#: How fast the command the legs follow may change (m/s per s, m/s per s, rad/s per s).
COMMAND_RATE = np.array([2.0, 2.0, 4.0])

#: Mirroring across the sagittal plane: each leg becomes its left/right twin (FL <-> FR,
#: RL <-> RR) with the hip (abduction) negated; the trot clock moves half a stride on (the twin
#: legs are half a stride apart), so its (sin, cos) flips, and a standing clock mirrors to itself.
LEG_MIRROR_INDEX = np.r_[3:6, 0:3, 9:12, 6:9]
LEG_MIRROR_SIGN = np.array([-1.0, 1.0, 1.0] * 4)

#: Aliengo's gait: the functions below are its methods.
SPEC = GaitSpec(leg_standing=LEG_STANDING, action_scale=ACTION_SCALE, command_rate=COMMAND_RATE, gait_period=GAIT_PERIOD,
                stance_fraction=STANCE_FRACTION, stand_command=STAND_COMMAND, leg_phase_offset=LEG_PHASE_OFFSET,
                leg_mirror_index=LEG_MIRROR_INDEX, leg_mirror_sign=LEG_MIRROR_SIGN)
OBS_SIZE = 3 + 3 + 3 + 3 + 12 + 12 + 12 + 2
ACTION_SIZE = len(LEG_JOINTS)
#: First of the trot clock's two columns (sin, cos), the observation's last.
CLOCK_COLUMN = SPEC.clock_column
OBS_MIRROR_INDEX, OBS_MIRROR_SIGN = SPEC.obs_mirror_index, SPEC.obs_mirror_sign

mirror_observation = SPEC.mirror_observation
mirror_action = SPEC.mirror_action
ramp_command = SPEC.ramp_command
clock_running = SPEC.clock_running
advance_phase = SPEC.advance_phase
expected_stance = SPEC.expected_stance
observe = SPEC.observe
leg_targets = SPEC.leg_targets
