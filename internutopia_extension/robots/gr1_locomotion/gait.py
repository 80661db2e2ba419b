"""What GR1's walking controller will see and command: one definition for training and deployment.

The names are those of H1's :mod:`~internutopia_extension.robots.h1_locomotion.gait` (the shared
walker reads them), and so is the gait clock (a biped's: the left leg swings in the second half of
its phase, the right half a stride later, the clock stops at 0 with both feet down). What is GR1's:
12 leg joints (:data:`LEG_JOINTS`, the model's order: left leg then right, hip roll, yaw, pitch,
knee, ankle pitch, roll), Fourier's standing pose, and the mirror map of GR1's joint axes (both
legs turn about the same axes in the URDF, so the mirror negates roll and yaw). Each 50 Hz tick
the observation of :func:`observe` (50 numbers per robot) gives 12 actions in [-1, 1]; joint
``j``'s servo target is ``STANDING_POSE[j] + ACTION_SCALE[j] * action[j]``. The functions are
:class:`~internutopia_extension.robots.locomotion_gait.GaitSpec`'s, bound to GR1's numbers (:data:`SPEC`).

>>> import numpy as np
>>> obs = observe(np.array([[1.0, 0, 0, 0]]), np.zeros((1, 3)), np.zeros((1, 3)), np.zeros((1, 12)), np.zeros((1, 12)),
...               np.zeros((1, 12)), np.array([[0.5, 0.0, 0.0]]), np.zeros(1))
>>> obs.shape, (obs[0, 6:9] + 0.0).tolist()  # projected gravity of an upright pelvis
((1, 50), [0.0, 0.0, -1.0])
>>> bool(np.array_equal(mirror_action(mirror_action(np.arange(12.0)[None])), np.arange(12.0)[None]))
True
"""

from __future__ import annotations

import numpy as np

from internutopia_extension.robots.gr1_model import STANDING_POSE as _BODY_STANDING_POSE
from internutopia_extension.robots.h1_locomotion.gait import (  # noqa: F401  (the walker reads them here)
    ACTION_SCALE_METADATA,
    ANG_VEL_SCALE,
    COMMAND_HIGH,
    COMMAND_LOW,
    COMMAND_RATE,
    COMMAND_SCALE,
    CONTROL_DT,
    GAIT_PERIOD,
    JOINT_VEL_SCALE,
    LEG_PHASE_OFFSET,
    LIN_VEL_SCALE,
    PHYSICS_DT,
    STANCE_FRACTION,
    STAND_COMMAND,
    phase_signal,
    projected_gravity,
    to_body,
)
from internutopia_extension.robots.locomotion_gait import GaitSpec, kind_scales

#: The joints the policy drives, in the model's order (a contiguous run of the state).
LEG_JOINTS = tuple(f'{side}_{joint}_joint' for side in ('left', 'right')
                   for joint in ('hip_roll', 'hip_yaw', 'hip_pitch', 'knee_pitch', 'ankle_pitch', 'ankle_roll'))
#: Standing pose (rad), every actuated joint (Fourier's, as the carried GR1 stands).
STANDING_POSE: dict[str, float] = dict(_BODY_STANDING_POSE)
LEG_STANDING = np.array([STANDING_POSE.get(name, 0.0) for name in LEG_JOINTS])
#: Servo target range per unit of action (rad) by joint kind (H1's for the kinds they share; the
#: ankle roll, which H1 lacks, as little as the hip roll). A first choice, to be tuned by training.
ACTION_SCALE_BY_KIND = {'hip_roll': 0.3, 'hip_yaw': 0.3, 'hip_pitch': 0.8, 'knee_pitch': 1.0, 'ankle_pitch': 0.5,
                        'ankle_roll': 0.3}


def joint_kind(name: str) -> str:
    """A leg joint's kind: ``'left_knee_pitch_joint'`` -> ``'knee_pitch'``."""
    return name.split('_', 1)[1].removesuffix('_joint')


def action_scale(by_kind: dict[str, float]) -> np.ndarray:
    """Per-joint scales ``(12,)`` in :data:`LEG_JOINTS` order from scales by joint kind."""
    return kind_scales(LEG_JOINTS, joint_kind, by_kind)


ACTION_SCALE = action_scale(ACTION_SCALE_BY_KIND)

#: Mirroring across the sagittal plane (left <-> right): each leg column becomes the other leg's,
#: roll and yaw negated (the URDF turns both legs about the same axes); pitch keeps its sign.
LEG_MIRROR_INDEX = np.r_[6:12, 0:6]
LEG_MIRROR_SIGN = np.array([-1.0, -1.0, 1.0, 1.0, 1.0, -1.0] * 2)

#: GR1's gait: the functions below are its methods.
SPEC = GaitSpec(leg_standing=LEG_STANDING, action_scale=ACTION_SCALE, command_rate=COMMAND_RATE, gait_period=GAIT_PERIOD,
                stance_fraction=STANCE_FRACTION, stand_command=STAND_COMMAND, leg_phase_offset=LEG_PHASE_OFFSET,
                leg_mirror_index=LEG_MIRROR_INDEX, leg_mirror_sign=LEG_MIRROR_SIGN)
OBS_SIZE = 3 + 3 + 3 + 3 + 12 + 12 + 12 + 2
ACTION_SIZE = len(LEG_JOINTS)
#: First of the gait clock's two columns (sin, cos), the observation's last.
CLOCK_COLUMN = SPEC.clock_column
#: The observation's columns mirrored: the legs as above; the clock moves half a stride on
#: ((sin, cos) flips), except while standing.
OBS_MIRROR_INDEX, OBS_MIRROR_SIGN = SPEC.obs_mirror_index, SPEC.obs_mirror_sign

mirror_observation = SPEC.mirror_observation
mirror_action = SPEC.mirror_action
ramp_command = SPEC.ramp_command
clock_running = SPEC.clock_running
advance_phase = SPEC.advance_phase
expected_stance = SPEC.expected_stance
observe = SPEC.observe
leg_targets = SPEC.leg_targets
