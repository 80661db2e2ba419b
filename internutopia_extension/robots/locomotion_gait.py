"""The gait of every walking robot, one implementation: what a walking controller observes, how its
actions become servo targets, the gait clock and the command ramp, driven by a robot's numbers
(:class:`GaitSpec`).

Each robot's ``*_locomotion/gait.py`` holds its numbers (leg joints, standing pose, action
scales, command limits, stride, mirror map) and binds this module's functions to them under the
names the walker, the tick kernel, the trainer and the task read (``observe``, ``leg_targets``,
``mirror_observation``, ...). The observation, ``(k, 12 + 3 * legs + 2)`` float32, is: pelvis
linear velocity, angular velocity, projected gravity, command, leg positions about the standing
pose, leg velocities, the last action, and the gait clock's (sin, cos).

A gait clock gives the legs their rhythm: while the robot is told to move, the phase runs at one
stride per ``gait_period`` seconds, each foot offset by its ``leg_phase_offset`` (a biped's right
leg, a quadruped's other diagonal pair, half a stride on). When the command drops to zero the
clock runs on until every foot is down (the double-stance moment of the stride, which needs a
``stance_fraction`` above one half), then stops at 0 and the robot stands: a leg is never told to
plant mid-swing. The clock is an input of the policy, not something it controls.

>>> spec = GaitSpec(leg_standing=np.zeros(2), action_scale=np.ones(2), command_rate=np.array([1.0, 1.0, 2.0]),
...                 gait_period=0.8, stance_fraction=0.55, stand_command=0.1, leg_phase_offset=np.array([0.0, 0.5]),
...                 leg_mirror_index=np.array([1, 0]), leg_mirror_sign=np.ones(2))
>>> obs = spec.observe(np.array([[1.0, 0, 0, 0]]), np.zeros((1, 3)), np.zeros((1, 3)), np.zeros((1, 2)), np.zeros((1, 2)),
...                    np.zeros((1, 2)), np.array([[0.5, 0.0, 0.0]]), np.zeros(1))
>>> obs.shape, (obs[0, 6:9] + 0.0).tolist()  # projected gravity of an upright pelvis
((1, 20), [0.0, 0.0, -1.0])
>>> spec.advance_phase(np.array([0.3, 0.52, 0.3]), np.array([False, False, True])).round(3).tolist()  # swing ends first
[0.325, 0.0, 0.325]
>>> spec.ramp_command(np.zeros((1, 3)), np.array([[1.0, 0.0, -1.0]])).round(3).tolist()
[[0.02, 0.0, -0.04]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

#: Policy period (s).
CONTROL_DT = 0.02
#: Longest physics step the servos and the policies were trained with (s).
PHYSICS_DT = 0.005
#: Metadata key under which an exported policy records the action scale it was trained with.
ACTION_SCALE_METADATA = 'action_scale'
#: Observation scales (the inputs of the network are kept near unit size).
LIN_VEL_SCALE = 2.0
ANG_VEL_SCALE = 0.25
COMMAND_SCALE = np.array([2.0, 2.0, 0.25])
JOINT_VEL_SCALE = 0.05
#: Signs of the first 12 observation columns under the left-right mirror: linear velocity and
#: gravity flip their y, the angular velocity its x (roll) and z (yaw), the command its lateral
#: part and yaw rate.
_BODY_MIRROR_SIGN = np.r_[[1.0, -1.0, 1.0], [-1.0, 1.0, -1.0], [1.0, -1.0, 1.0], [1.0, -1.0, -1.0]]


def kind_scales(leg_joints: Sequence[str], joint_kind: Callable[[str], str], by_kind: dict[str, float]) -> np.ndarray:
    """Per-joint values in ``leg_joints`` order from values by joint kind.

    >>> kind_scales(['left_knee', 'right_knee'], lambda name: name.split('_')[1], {'knee': 0.5}).tolist()
    [0.5, 0.5]
    """
    return np.array([by_kind[joint_kind(name)] for name in leg_joints])


def observation_mirror(leg_mirror_index: np.ndarray, leg_mirror_sign: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The observation's mirror map (column index, sign) from the legs' (each leg column becomes
    its twin's): the body columns as :data:`_BODY_MIRROR_SIGN`, the leg positions, velocities and
    last action as the legs, and the clock's (sin, cos) flipped (half a stride on; a standing clock
    is kept by :meth:`GaitSpec.mirror_observation`)."""
    legs = len(leg_mirror_index)
    clock = 12 + 3 * legs
    index = np.r_[0:12, 12 + leg_mirror_index, 12 + legs + leg_mirror_index, 12 + 2 * legs + leg_mirror_index, clock, clock + 1]
    sign = np.r_[_BODY_MIRROR_SIGN, leg_mirror_sign, leg_mirror_sign, leg_mirror_sign, [-1.0, -1.0]]
    return index, sign


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


@dataclass(frozen=True, eq=False)
class GaitSpec:
    """One walking robot's gait numbers, and the gait functions of them (see the module docstring)."""

    leg_standing: np.ndarray  #: standing pose of the leg joints (rad), ``(legs,)``
    action_scale: np.ndarray  #: servo target range per unit of action (rad), ``(legs,)``
    command_rate: np.ndarray  #: how fast the followed command may change (m/s per s, m/s per s, rad/s per s)
    gait_period: float  #: one stride (s)
    stance_fraction: float  #: fraction of its phase a foot is in stance (above one half)
    stand_command: float  #: below this command norm the robot stands (the clock stops)
    leg_phase_offset: np.ndarray  #: each foot's phase offset in strides, ``(feet,)``
    leg_mirror_index: np.ndarray  #: leg column of each leg column's mirror twin, ``(legs,)``
    leg_mirror_sign: np.ndarray  #: its sign under the mirror, ``(legs,)``
    #: The observation's mirror map (:func:`observation_mirror`), and its clock's first column.
    obs_mirror_index: np.ndarray = field(init=False)
    obs_mirror_sign: np.ndarray = field(init=False)
    clock_column: int = field(init=False)

    def __post_init__(self) -> None:
        index, sign = observation_mirror(self.leg_mirror_index, self.leg_mirror_sign)
        object.__setattr__(self, 'obs_mirror_index', index)
        object.__setattr__(self, 'obs_mirror_sign', sign)
        object.__setattr__(self, 'clock_column', 12 + 3 * len(self.leg_standing))

    def mirror_observation(self, obs: np.ndarray) -> np.ndarray:
        """What the mirror image of each robot observes ``(k, obs_size)``: a standing clock (0, 1)
        mirrors to itself."""
        mirrored = obs[:, self.obs_mirror_index] * self.obs_mirror_sign
        clock = obs[:, self.clock_column:]
        standing = (clock[:, 0] == 0.0) & (clock[:, 1] == 1.0)
        mirrored[standing, self.clock_column:] = clock[standing]
        return mirrored.astype(obs.dtype, copy=False)

    def mirror_action(self, action: np.ndarray) -> np.ndarray:
        """The leg actions ``(k, legs)`` of each robot's mirror image."""
        return action[:, self.leg_mirror_index] * self.leg_mirror_sign

    def ramp_command(self, followed: np.ndarray, requested: np.ndarray) -> np.ndarray:
        """One control tick of the command the legs follow towards the requested one (``command_rate``)."""
        step = self.command_rate * CONTROL_DT
        return followed + np.clip(requested - followed, -step, step)

    def clock_running(self, phase: np.ndarray, command: np.ndarray) -> np.ndarray:
        """Robots whose gait clock runs ``(k,)`` bool: told to move, or finishing a stride."""
        return (np.linalg.norm(command, axis=1) >= self.stand_command) | (phase > 0.0)

    def advance_phase(self, phase: np.ndarray, moving: np.ndarray) -> np.ndarray:
        """The gait phase one tick later: on while ``moving``; otherwise on until every foot is
        down, then 0 (stopped)."""
        after = (phase + CONTROL_DT / self.gait_period) % 1.0
        all_down = (phase % 0.5) < (self.stance_fraction - 0.5)
        return np.where(moving | ((phase > 0.0) & ~all_down), after, 0.0)

    def expected_stance(self, phase: np.ndarray, running: np.ndarray) -> np.ndarray:
        """Which feet should be on the ground, ``(k, feet)`` bool: all while standing."""
        legs = (phase[:, None] + self.leg_phase_offset) % 1.0
        return (legs < self.stance_fraction) | ~running[:, None]

    def observe(self, quat: np.ndarray, lin_vel: np.ndarray, ang_vel: np.ndarray, leg_q: np.ndarray, leg_dq: np.ndarray,
                last_action: np.ndarray, command: np.ndarray, phase: np.ndarray) -> np.ndarray:
        """The policy's observation ``(k, obs_size)`` float32.

        Args:
            quat: pelvis orientation, wxyz ``(k, 4)``.
            lin_vel: pelvis linear velocity in the pelvis frame ``(k, 3)`` (a simulator knows it; a
                real robot would estimate it).
            ang_vel: pelvis angular velocity in the pelvis frame ``(k, 3)`` (a free joint's ``qvel[3:6]``).
            leg_q, leg_dq: leg joint positions and velocities in the robot's leg order ``(k, legs)``.
            last_action: the previous tick's action ``(k, legs)``.
            command: ``[forward, lateral, yaw_rate]`` in the pelvis heading frame ``(k, 3)``.
            phase: gait phase in strides ``(k,)`` (0 while standing).
        """
        return np.concatenate([lin_vel * LIN_VEL_SCALE, ang_vel * ANG_VEL_SCALE, projected_gravity(quat), command * COMMAND_SCALE,
                               leg_q - self.leg_standing, leg_dq * JOINT_VEL_SCALE, last_action, phase_signal(phase)],
                              axis=1).astype(np.float32)

    def leg_targets(self, action: np.ndarray) -> np.ndarray:
        """Servo targets ``(k, legs)`` of the leg joints for actions ``(k, legs)`` (clipped to [-1, 1])."""
        return self.leg_standing + self.action_scale * np.clip(action, -1.0, 1.0)


__all__ = ['ACTION_SCALE_METADATA', 'ANG_VEL_SCALE', 'COMMAND_SCALE', 'CONTROL_DT', 'JOINT_VEL_SCALE', 'LIN_VEL_SCALE',
           'PHYSICS_DT', 'GaitSpec', 'kind_scales', 'observation_mirror', 'phase_signal', 'projected_gravity', 'to_body']
