"""What GR1's walking controller will see and command: one definition for training and deployment.

The names are those of H1's :mod:`~internutopia_extension.robots.h1_locomotion.gait` (the shared
walker reads them), and so is the gait clock (a biped's: the left leg swings in the second half of
its phase, the right half a stride later, the clock stops at 0 with both feet down). What is GR1's:
12 leg joints (:data:`LEG_JOINTS`, the model's order: left leg then right, hip roll, yaw, pitch,
knee, ankle pitch, roll), Fourier's standing pose, and the mirror map of GR1's joint axes (both
legs turn about the same axes in the URDF, so the mirror negates roll and yaw). Each 50 Hz tick
the observation of :func:`observe` (50 numbers per robot) gives 12 actions in [-1, 1]; joint
``j``'s servo target is ``STANDING_POSE[j] + ACTION_SCALE[j] * action[j]``.

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
    COMMAND_HIGH,
    COMMAND_LOW,
    COMMAND_RATE,
    CONTROL_DT,
    GAIT_PERIOD,
    PHYSICS_DT,
    STANCE_FRACTION,
    STAND_COMMAND,
    advance_phase,
    clock_running,
    expected_stance,
    phase_signal,
    projected_gravity,
    ramp_command,
    to_body,
)

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
    return np.array([by_kind[joint_kind(name)] for name in LEG_JOINTS])


ACTION_SCALE = action_scale(ACTION_SCALE_BY_KIND)

#: Observation scales (H1's).
LIN_VEL_SCALE = 2.0
ANG_VEL_SCALE = 0.25
COMMAND_SCALE = np.array([2.0, 2.0, 0.25])
JOINT_VEL_SCALE = 0.05
OBS_SIZE = 3 + 3 + 3 + 3 + 12 + 12 + 12 + 2
ACTION_SIZE = len(LEG_JOINTS)
#: First of the gait clock's two columns (sin, cos), the observation's last.
CLOCK_COLUMN = OBS_SIZE - 2

#: Mirroring across the sagittal plane (left <-> right): each leg column becomes the other leg's,
#: roll and yaw negated (the URDF turns both legs about the same axes); pitch keeps its sign.
LEG_MIRROR_INDEX = np.r_[6:12, 0:6]
LEG_MIRROR_SIGN = np.array([-1.0, -1.0, 1.0, 1.0, 1.0, -1.0] * 2)
#: The observation's columns mirrored: linear velocity and gravity flip their y, the angular
#: velocity its x and z, the command its lateral part and yaw rate; the legs as above; the clock
#: moves half a stride on ((sin, cos) flips), except while standing (:func:`mirror_observation`).
OBS_MIRROR_INDEX = np.r_[0:12, 12 + LEG_MIRROR_INDEX, 24 + LEG_MIRROR_INDEX, 36 + LEG_MIRROR_INDEX, CLOCK_COLUMN, CLOCK_COLUMN + 1]
OBS_MIRROR_SIGN = np.r_[[1.0, -1.0, 1.0], [-1.0, 1.0, -1.0], [1.0, -1.0, 1.0], [1.0, -1.0, -1.0],
                        LEG_MIRROR_SIGN, LEG_MIRROR_SIGN, LEG_MIRROR_SIGN, [-1.0, -1.0]]


def mirror_observation(obs: np.ndarray) -> np.ndarray:
    """What the mirror image of each robot observes ``(k, OBS_SIZE)``."""
    mirrored = obs[:, OBS_MIRROR_INDEX] * OBS_MIRROR_SIGN
    clock = obs[:, CLOCK_COLUMN:]
    standing = (clock[:, 0] == 0.0) & (clock[:, 1] == 1.0)
    mirrored[standing, CLOCK_COLUMN:] = clock[standing]
    return mirrored.astype(obs.dtype, copy=False)


def mirror_action(action: np.ndarray) -> np.ndarray:
    """The leg actions ``(k, 12)`` of each robot's mirror image."""
    return action[:, LEG_MIRROR_INDEX] * LEG_MIRROR_SIGN


def observe(quat: np.ndarray, lin_vel: np.ndarray, ang_vel: np.ndarray, leg_q: np.ndarray, leg_dq: np.ndarray,
            last_action: np.ndarray, command: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """The policy's observation ``(k, OBS_SIZE)`` float32 (the arguments as H1's
    :func:`~internutopia_extension.robots.h1_locomotion.gait.observe`, with 12 leg joints)."""
    return np.concatenate([lin_vel * LIN_VEL_SCALE, ang_vel * ANG_VEL_SCALE, projected_gravity(quat), command * COMMAND_SCALE,
                           leg_q - LEG_STANDING, leg_dq * JOINT_VEL_SCALE, last_action, phase_signal(phase)], axis=1).astype(np.float32)


def leg_targets(action: np.ndarray) -> np.ndarray:
    """Servo targets ``(k, 12)`` of the leg joints for actions ``(k, 12)`` (clipped to [-1, 1])."""
    return LEG_STANDING + ACTION_SCALE * np.clip(action, -1.0, 1.0)
