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

#: Policy period (s).
CONTROL_DT = 0.02
#: Longest physics step the servos and the policy were trained with (s).
PHYSICS_DT = 0.005
#: One stride (both legs swing once), s.
GAIT_PERIOD = 0.8
#: Fraction of its phase a leg is in stance (the rest it swings).
STANCE_FRACTION = 0.55
#: Below this command norm (m/s and rad/s together) the robot stands: the gait clock stops.
STAND_COMMAND = 0.1

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
#: Metadata key under which an exported policy records the action scale it was trained with.
ACTION_SCALE_METADATA = 'action_scale'


def joint_kind(name: str) -> str:
    """A leg joint's kind, its name without side and suffix: ``'left_hip_roll_joint'`` -> ``'hip_roll'``."""
    return name.split('_', 1)[1].rsplit('_', 1)[0]


def action_scale(by_kind: dict[str, float]) -> np.ndarray:
    """Per-joint scales ``(10,)`` in :data:`LEG_JOINTS` order from scales by joint kind."""
    return np.array([by_kind[joint_kind(name)] for name in LEG_JOINTS])


ACTION_SCALE = action_scale(ACTION_SCALE_BY_KIND)

#: Command limits: forward, lateral (m/s), yaw rate (rad/s); commands are clipped to them.
COMMAND_LOW = np.array([-0.5, -0.5, -1.0])
COMMAND_HIGH = np.array([1.0, 0.5, 1.0])
#: How fast the command the legs follow may change: forward and lateral (m/s per s), yaw rate
#: (rad/s per s). A navigation controller's command can jump (a waypoint reached, a new goal behind
#: the robot); a jump from walking to turning in place tips a humanoid, a ramp of a few strides does not.
COMMAND_RATE = np.array([1.0, 1.0, 2.0])

#: Observation scales (the inputs of the network are kept near unit size).
LIN_VEL_SCALE = 2.0
ANG_VEL_SCALE = 0.25
COMMAND_SCALE = np.array([2.0, 2.0, 0.25])
JOINT_VEL_SCALE = 0.05
OBS_SIZE = 3 + 3 + 3 + 3 + 10 + 10 + 10 + 2
ACTION_SIZE = len(LEG_JOINTS)
#: First of the gait clock's two columns (sin, cos), the observation's last.
CLOCK_COLUMN = OBS_SIZE - 2


#: Mirroring a robot across its sagittal plane (left <-> right): each leg column of the mirrored
#: robot is the other leg's, with hip yaw and roll negated (both legs turn about the same axes).
#: Pitch, knee and ankle keep their sign. Used to train a symmetric gait (``train --mirror-loss``).
LEG_MIRROR_INDEX = np.r_[5:10, 0:5]
LEG_MIRROR_SIGN = np.array([-1.0, -1.0, 1.0, 1.0, 1.0] * 2)
#: The observation's columns mirrored: linear velocity and gravity flip their y, the angular
#: velocity its x (roll) and z (yaw), the command its lateral part and yaw rate; the legs as
#: above; the gait clock moves half a stride on (the other leg's phase), i.e. (sin, cos) flips,
#: except while standing (phase 0 on both feet), which mirrors to itself (:func:`mirror_observation`).
OBS_MIRROR_INDEX = np.r_[0:12, 12 + LEG_MIRROR_INDEX, 22 + LEG_MIRROR_INDEX, 32 + LEG_MIRROR_INDEX, CLOCK_COLUMN, CLOCK_COLUMN + 1]
OBS_MIRROR_SIGN = np.r_[[1.0, -1.0, 1.0], [-1.0, 1.0, -1.0], [1.0, -1.0, 1.0], [1.0, -1.0, -1.0],
                        LEG_MIRROR_SIGN, LEG_MIRROR_SIGN, LEG_MIRROR_SIGN, [-1.0, -1.0]]


def mirror_observation(obs: np.ndarray) -> np.ndarray:
    """What the mirror image of each robot observes ``(k, OBS_SIZE)``.

    >>> obs = np.zeros((1, OBS_SIZE)); obs[0, 10] = 0.5; obs[0, 13] = 0.2; obs[0, CLOCK_COLUMN:] = (0.0, 1.0)
    >>> mirrored = mirror_observation(obs)
    >>> float(mirrored[0, 10]), float(mirrored[0, 18]), mirrored[0, CLOCK_COLUMN:].tolist()  # lateral, right hip roll, standing clock
    (-0.5, -0.2, [0.0, 1.0])
    """
    mirrored = obs[:, OBS_MIRROR_INDEX] * OBS_MIRROR_SIGN
    clock = obs[:, CLOCK_COLUMN:]
    standing = (clock[:, 0] == 0.0) & (clock[:, 1] == 1.0)
    mirrored[standing, CLOCK_COLUMN:] = clock[standing]
    return mirrored.astype(obs.dtype, copy=False)


def mirror_action(action: np.ndarray) -> np.ndarray:
    """The leg actions ``(k, 10)`` of each robot's mirror image."""
    return action[:, LEG_MIRROR_INDEX] * LEG_MIRROR_SIGN


def ramp_command(followed: np.ndarray, requested: np.ndarray) -> np.ndarray:
    """One control tick of the command the legs follow towards the requested one (:data:`COMMAND_RATE`).

    >>> ramp_command(np.zeros((1, 3)), np.array([[1.0, 0.0, -1.0]])).round(3).tolist()
    [[0.02, 0.0, -0.04]]
    """
    step = COMMAND_RATE * CONTROL_DT
    return followed + np.clip(requested - followed, -step, step)


def projected_gravity(quat: np.ndarray) -> np.ndarray:
    """Gravity's direction in the body frame, ``R^T (0, 0, -1)``, for wxyz quaternions ``(k, 4)``."""
    w, x, y, z = quat[:, 0], quat[:, 1], quat[:, 2], quat[:, 3]
    return np.stack([2.0 * (w * y - x * z), -2.0 * (y * z + w * x), -(1.0 - 2.0 * (x * x + y * y))], axis=1)


def to_body(quat: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """World-frame vectors ``(k, 3)`` in the body frame of wxyz quaternions ``(k, 4)``: ``R^T v``."""
    w, u = quat[:, :1], quat[:, 1:]
    # R^T v = v - 2w (u x v) + 2 u x (u x v), for the unit quaternion (w, u).
    twice_cross = 2.0 * _cross(u, vector)
    return vector - w * twice_cross + _cross(u, twice_cross)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of ``(k, 3)`` arrays (``np.cross`` costs about 40 us a call on a few rows)."""
    return np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1], a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                     a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)


def phase_signal(phase: np.ndarray) -> np.ndarray:
    """``(sin, cos)`` of the gait phase (in strides), ``(k, 2)``; (0, 1) while standing (phase 0)."""
    angle = 2.0 * np.pi * phase
    return np.stack([np.sin(angle), np.cos(angle)], axis=1)


def clock_running(phase: np.ndarray, command: np.ndarray) -> np.ndarray:
    """Robots whose gait clock runs ``(k,)`` bool: told to move, or finishing a stride."""
    return (np.linalg.norm(command, axis=1) >= STAND_COMMAND) | (phase > 0.0)


def advance_phase(phase: np.ndarray, moving: np.ndarray) -> np.ndarray:
    """The gait phase one tick later: on while ``moving``; otherwise on until both feet are down,
    then 0 (stopped)."""
    after = (phase + CONTROL_DT / GAIT_PERIOD) % 1.0
    both_down = (phase % 0.5) < (STANCE_FRACTION - 0.5)
    return np.where(moving | ((phase > 0.0) & ~both_down), after, 0.0)


def expected_stance(phase: np.ndarray, running: np.ndarray) -> np.ndarray:
    """Which feet should be on the ground, ``(k, 2)`` bool (left, right): both while standing."""
    legs = np.stack([phase % 1.0, (phase + 0.5) % 1.0], axis=1)
    return (legs < STANCE_FRACTION) | ~running[:, None]


def observe(quat: np.ndarray, lin_vel: np.ndarray, ang_vel: np.ndarray, leg_q: np.ndarray, leg_dq: np.ndarray,
            last_action: np.ndarray, command: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """The policy's observation ``(k, OBS_SIZE)`` float32.

    Args:
        quat: pelvis orientation, wxyz ``(k, 4)``.
        lin_vel: pelvis linear velocity in the pelvis frame ``(k, 3)`` (a simulator knows it; a
            real robot would estimate it).
        ang_vel: pelvis angular velocity in the pelvis frame ``(k, 3)`` (a free joint's ``qvel[3:6]``).
        leg_q, leg_dq: leg joint positions and velocities in :data:`LEG_JOINTS` order ``(k, 10)``.
        last_action: the previous tick's action ``(k, 10)``.
        command: ``[forward, lateral, yaw_rate]`` in the pelvis heading frame ``(k, 3)``.
        phase: gait phase in strides ``(k,)`` (0 while standing).
    """
    return np.concatenate([lin_vel * LIN_VEL_SCALE, ang_vel * ANG_VEL_SCALE, projected_gravity(quat), command * COMMAND_SCALE,
                           leg_q - LEG_STANDING, leg_dq * JOINT_VEL_SCALE, last_action, phase_signal(phase)], axis=1).astype(np.float32)


def leg_targets(action: np.ndarray) -> np.ndarray:
    """Servo targets ``(k, 10)`` of the leg joints for actions ``(k, 10)`` (clipped to [-1, 1])."""
    return LEG_STANDING + ACTION_SCALE * np.clip(action, -1.0, 1.0)
