"""What Aliengo's walking controller sees and commands: one definition for training and deployment.

The names are those of H1's :mod:`~internutopia_extension.robots.h1_locomotion.gait` (the shared
walker reads them); the numbers are a quadruped's. The controller runs at 50 Hz: each tick it
reads the observation of :func:`observe` (50 numbers per robot) and outputs 12 numbers in
[-1, 1], one per leg joint (:data:`LEG_JOINTS`, the model's order: leg by leg, hip, thigh, calf);
joint ``j``'s servo target is ``STANDING_POSE[j] + ACTION_SCALE[j] * action[j]``.

A trot clock gives the legs their rhythm: diagonal pairs swing together (front-left with
rear-right, then front-right with rear-left half a stride later), one stride per
:data:`GAIT_PERIOD` seconds. As H1's, the clock stops at 0 (all four feet down) when the command
drops to zero, once both pairs are down, and the robot stands.

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

from internutopia_extension.robots.h1_locomotion.gait import (  # noqa: F401  (the walker reads them here)
    ACTION_SCALE_METADATA,
    CONTROL_DT,
    PHYSICS_DT,
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
    return np.array([by_kind[joint_kind(name)] for name in LEG_JOINTS])


ACTION_SCALE = action_scale(ACTION_SCALE_BY_KIND)

#: Command limits: forward, lateral (m/s), yaw rate (rad/s); commands are clipped to them.
#: InternUtopia's Aliengo configs ask for up to 1 m/s forward and (``rotate``) 2 rad/s.
COMMAND_LOW = np.array([-0.8, -0.6, -2.0])
COMMAND_HIGH = np.array([1.2, 0.6, 2.0])
#: How fast the command the legs follow may change (m/s per s, m/s per s, rad/s per s).
COMMAND_RATE = np.array([2.0, 2.0, 4.0])

#: Observation scales (H1's).
LIN_VEL_SCALE = 2.0
ANG_VEL_SCALE = 0.25
COMMAND_SCALE = np.array([2.0, 2.0, 0.25])
JOINT_VEL_SCALE = 0.05
OBS_SIZE = 3 + 3 + 3 + 3 + 12 + 12 + 12 + 2
ACTION_SIZE = len(LEG_JOINTS)
#: First of the trot clock's two columns (sin, cos), the observation's last.
CLOCK_COLUMN = OBS_SIZE - 2

#: Mirroring across the sagittal plane: each leg becomes its left/right twin (FL <-> FR,
#: RL <-> RR) with the hip (abduction) negated; the trot clock moves half a stride on (the twin
#: legs are half a stride apart), so its (sin, cos) flips, and a standing clock mirrors to itself.
LEG_MIRROR_INDEX = np.r_[3:6, 0:3, 9:12, 6:9]
LEG_MIRROR_SIGN = np.array([-1.0, 1.0, 1.0] * 4)
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


def ramp_command(followed: np.ndarray, requested: np.ndarray) -> np.ndarray:
    """One control tick of the command the legs follow towards the requested one (:data:`COMMAND_RATE`)."""
    step = COMMAND_RATE * CONTROL_DT
    return followed + np.clip(requested - followed, -step, step)


def clock_running(phase: np.ndarray, command: np.ndarray) -> np.ndarray:
    """Robots whose trot clock runs ``(k,)`` bool: told to move, or finishing a stride."""
    return (np.linalg.norm(command, axis=1) >= STAND_COMMAND) | (phase > 0.0)


def advance_phase(phase: np.ndarray, moving: np.ndarray) -> np.ndarray:
    """The trot phase one tick later: on while ``moving``; otherwise on until all four feet are
    down, then 0 (stopped)."""
    after = (phase + CONTROL_DT / GAIT_PERIOD) % 1.0
    all_down = (phase % 0.5) < (STANCE_FRACTION - 0.5)
    return np.where(moving | ((phase > 0.0) & ~all_down), after, 0.0)


def expected_stance(phase: np.ndarray, running: np.ndarray) -> np.ndarray:
    """Which feet should be on the ground, ``(k, 4)`` bool (FL, FR, RL, RR): all while standing."""
    legs = (phase[:, None] + LEG_PHASE_OFFSET) % 1.0
    return (legs < STANCE_FRACTION) | ~running[:, None]


def observe(quat: np.ndarray, lin_vel: np.ndarray, ang_vel: np.ndarray, leg_q: np.ndarray, leg_dq: np.ndarray,
            last_action: np.ndarray, command: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """The policy's observation ``(k, OBS_SIZE)`` float32 (the arguments as H1's
    :func:`~internutopia_extension.robots.h1_locomotion.gait.observe`, with 12 leg joints)."""
    return np.concatenate([lin_vel * LIN_VEL_SCALE, ang_vel * ANG_VEL_SCALE, projected_gravity(quat), command * COMMAND_SCALE,
                           leg_q - LEG_STANDING, leg_dq * JOINT_VEL_SCALE, last_action, phase_signal(phase)], axis=1).astype(np.float32)


def leg_targets(action: np.ndarray) -> np.ndarray:
    """Servo targets ``(k, 12)`` of the leg joints for actions ``(k, 12)`` (clipped to [-1, 1])."""
    return LEG_STANDING + ACTION_SCALE * np.clip(action, -1.0, 1.0)
