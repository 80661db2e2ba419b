"""What H1's walking controller sees and commands: one definition for training and deployment.

The controller runs at 50 Hz. Each tick it reads the observation of :func:`observe` (44 numbers
per robot) and outputs 10 numbers in [-1, 1], one per leg joint (:data:`LEG_JOINTS`, the model's
order); joint ``j``'s servo target is ``STANDING_POSE[j] + ACTION_SCALE[j] * action[j]``. The
torso and arms hold :data:`STANDING_POSE`.

A gait clock gives the legs their rhythm: while the robot is told to move, the phase runs at
one stride per :data:`GAIT_PERIOD` seconds (the left leg swings in the second half of its phase,
the right leg half a period later). When the command drops to zero the clock runs on until both
feet are down (a double-stance moment of the stride), then stops at 0 and the robot stands: a
leg is never told to plant mid-swing. The clock is an input of the policy, not something it controls.

The functions are :class:`~internutopia_extension.robots.locomotion_gait.GaitSpec`'s (every
walking robot's), bound to H1's numbers (:data:`SPEC`).

>>> import numpy as np
>>> obs = observe(np.array([[1.0, 0, 0, 0]]), np.zeros((1, 3)), np.zeros((1, 3)), np.zeros((1, 10)), np.zeros((1, 10)),
...               np.zeros((1, 10)), np.array([[0.5, 0.0, 0.0]]), np.zeros(1))
>>> obs.shape, (obs[0, 6:9] + 0.0).tolist()  # projected gravity of an upright pelvis
((1, 44), [0.0, 0.0, -1.0])
>>> advance_phase(np.array([0.3, 0.52, 0.3]), np.array([False, False, True])).round(3).tolist()  # swing ends first
[0.325, 0.0, 0.325]
"""

from __future__ import annotations

import numpy as np

from internutopia_extension.robots.locomotion_gait import (  # noqa: F401  (the walker and the trainer read them here)
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

#: One stride (both legs swing once), s.
GAIT_PERIOD = 0.8
#: Fraction of its phase a leg is in stance (the rest it swings).
STANCE_FRACTION = 0.55
#: Below this command norm (m/s and rad/s together) the robot stands: the gait clock stops.
STAND_COMMAND = 0.1
#: Each leg's phase offset in strides (left, right): the right leg half a stride after the left.
LEG_PHASE_OFFSET = np.array([0.0, 0.5])

#: The joints the policy drives, in the model's order (a contiguous run of the state).
LEG_JOINTS = tuple(f'{side}_{joint}_joint' for side in ('left', 'right')
                   for joint in ('hip_yaw', 'hip_roll', 'hip_pitch', 'knee', 'ankle'))
#: Standing pose (rad), every actuated joint; knees slightly bent, as Unitree's examples stand H1.
STANDING_POSE: dict[str, float] = {
    **{f'{side}_hip_pitch_joint': -0.1 for side in ('left', 'right')},
    **{f'{side}_knee_joint': 0.3 for side in ('left', 'right')},
    **{f'{side}_ankle_joint': -0.2 for side in ('left', 'right')},
}
LEG_STANDING = np.array([STANDING_POSE.get(name, 0.0) for name in LEG_JOINTS])
#: Servo target range per unit of action (rad) by joint kind: hips' yaw and roll a little, pitch
#: and knee a lot. The shipped policy was trained with these; an exported policy records them
#: (:data:`ACTION_SCALE_METADATA`), and a run may change them and start from a policy trained
#: with others (``train --init-from``, which rescales its action head).
ACTION_SCALE_BY_KIND = {'hip_yaw': 0.3, 'hip_roll': 0.3, 'hip_pitch': 0.8, 'knee': 1.0, 'ankle': 0.5}


def joint_kind(name: str) -> str:
    """A leg joint's kind, its name without side and suffix: ``'left_hip_roll_joint'`` -> ``'hip_roll'``."""
    return name.split('_', 1)[1].rsplit('_', 1)[0]


def action_scale(by_kind: dict[str, float]) -> np.ndarray:
    """Per-joint scales ``(10,)`` in :data:`LEG_JOINTS` order from scales by joint kind."""
    return kind_scales(LEG_JOINTS, joint_kind, by_kind)


ACTION_SCALE = action_scale(ACTION_SCALE_BY_KIND)

#: Command limits: forward, lateral (m/s), yaw rate (rad/s); commands are clipped to them.
COMMAND_LOW = np.array([-0.5, -0.5, -1.0])
COMMAND_HIGH = np.array([1.0, 0.5, 1.0])
#: How fast the command the legs follow may change: forward and lateral (m/s per s), yaw rate
#: (rad/s per s). A navigation controller's command can jump (a waypoint reached, a new goal behind
#: the robot); a jump from walking to turning in place tips a humanoid, a ramp of a few strides does not.
COMMAND_RATE = np.array([1.0, 1.0, 2.0])

#: Mirroring a robot across its sagittal plane (left <-> right): each leg column of the mirrored
#: robot is the other leg's, with hip yaw and roll negated (both legs turn about the same axes).
#: Pitch, knee and ankle keep their sign. Used to train a symmetric gait (``train --mirror-loss``).
LEG_MIRROR_INDEX = np.r_[5:10, 0:5]
LEG_MIRROR_SIGN = np.array([-1.0, -1.0, 1.0, 1.0, 1.0] * 2)

#: H1's gait: the functions below are its methods.
SPEC = GaitSpec(leg_standing=LEG_STANDING, action_scale=ACTION_SCALE, command_rate=COMMAND_RATE, gait_period=GAIT_PERIOD,
                stance_fraction=STANCE_FRACTION, stand_command=STAND_COMMAND, leg_phase_offset=LEG_PHASE_OFFSET,
                leg_mirror_index=LEG_MIRROR_INDEX, leg_mirror_sign=LEG_MIRROR_SIGN)
OBS_SIZE = 3 + 3 + 3 + 3 + 10 + 10 + 10 + 2
ACTION_SIZE = len(LEG_JOINTS)
#: First of the gait clock's two columns (sin, cos), the observation's last.
CLOCK_COLUMN = SPEC.clock_column
#: The observation's columns mirrored (:func:`~internutopia_extension.robots.locomotion_gait.observation_mirror`):
#: the legs as above; the gait clock moves half a stride on (the other leg's phase), i.e.
#: (sin, cos) flips, except while standing (phase 0 on both feet), which mirrors to itself.
OBS_MIRROR_INDEX, OBS_MIRROR_SIGN = SPEC.obs_mirror_index, SPEC.obs_mirror_sign

mirror_observation = SPEC.mirror_observation
mirror_action = SPEC.mirror_action
ramp_command = SPEC.ramp_command
clock_running = SPEC.clock_running
advance_phase = SPEC.advance_phase
expected_stance = SPEC.expected_stance
observe = SPEC.observe
leg_targets = SPEC.leg_targets
