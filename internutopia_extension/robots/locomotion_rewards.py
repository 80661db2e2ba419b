"""The reward terms every walking robot is trained with, and its fall check, one implementation
driven by the robot's numbers (:class:`WalkRewardSpec`).

Each term is a function of a :class:`~internutopia_extension.robots.h1_locomotion.walker.WalkState`
giving one value per robot; ``LocomotionTask`` pays ``sum(scale * term) * CONTROL_DT`` a tick over
the robot's ``REWARD_SCALES`` (legged_gym's and MuJoCo Playground's style: tracking terms are
kernels in [0, 1], the rest penalties with negative scales). Every robot has the same term names
(one task table serves them all); each ``*_locomotion/rewards.py`` holds its numbers, its scales
and ``TERMS = SPEC.terms``.

>>> spec = WalkRewardSpec(base_height=0.98, swing_height=0.08, fall_height=0.6, fall_gravity_z=-0.65, hip_columns=(0, 5))
>>> sorted(spec.terms)[:3]
['action_rate', 'alive', 'ang_vel_xy']
>>> float(track_kernel(np.array([0.0]))[0])  # no tracking error: the full kernel
1.0
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from internutopia_extension.robots.h1_locomotion.walker import WalkState

#: A reward term: one value per robot of a walk state.
Term = Callable[['WalkState'], np.ndarray]


def track_kernel(error_sq: np.ndarray, sigma: float = 0.25) -> np.ndarray:
    """The tracking kernel ``exp(-error_sq / sigma)`` (1 at no error; every walking robot's rewards use it)."""
    return np.exp(-error_sq / sigma)


def planar_velocity_error_sq(s: WalkState) -> np.ndarray:
    """Squared gap between the commanded and the actual planar velocity ``(k,)``."""
    return np.sum((s.command[:, :2] - s.lin_vel[:, :2]) ** 2, axis=1)


@dataclass(frozen=True, eq=False)
class WalkRewardSpec:
    """One walking robot's reward numbers, its fall check (:meth:`fallen`) and its terms (:attr:`terms`)."""

    base_height: float  #: pelvis (base) height the policy is asked to keep (m)
    swing_height: float  #: height a swinging sole should reach (m)
    fall_height: float  #: a robot has fallen when its pelvis is below this (m) ...
    fall_gravity_z: float  #: ... or gravity's body-frame z component is above this (tipped over)
    hip_columns: tuple[int, ...]  #: leg columns of the joints ``hip_pos`` keeps straight
    contact_force: float = 5.0  #: normal force above which a sole counts as on the ground (N)
    yaw_sigma: float = 0.25  #: width of the yaw-rate tracking kernel ((rad/s)^2)
    #: Width of the narrow velocity-tracking kernel (m^2/s^2; 0.82 at 0.1 m/s off, 0.45 at 0.2 m/s off).
    fine_tracking_sigma: float = 0.05
    #: A sole's sideways offset from the pelvis standing (m; left +, right -); ``None``: no
    #: ``foot_placement`` term (it is zero).
    foot_offset: float | None = None
    #: Where a swinging sole is asked to land sideways for a lateral command ``v``:
    #: ``foot_offset + v * landing_lead`` (s; Raibert's rule, see H1's rewards).
    landing_lead: float = 0.0
    foot_placement_sigma: float = 0.01  #: width of the foot-placement kernel (m^2)
    #: The terms by name (built from the numbers above).
    terms: dict[str, Term] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, 'terms', self._terms())

    def fallen(self, state: WalkState) -> np.ndarray:
        """Robots that have fallen (k,) bool."""
        return (state.height < self.fall_height) | (state.gravity[:, 2] > self.fall_gravity_z)

    def reward_terms(self, state: WalkState) -> dict[str, np.ndarray]:
        """Every term of :attr:`terms` for ``state``, by name."""
        return {name: term(state) for name, term in self.terms.items()}

    def _foot_placement(self, s: WalkState) -> np.ndarray:
        """Swinging soles near where a side-step needs them to land, while walking."""
        if self.foot_offset is None:
            return np.zeros(len(s.height))
        return np.sum(track_kernel((s.foot_lateral - np.array([self.foot_offset, -self.foot_offset])
                                    - self.landing_lead * s.command[:, 1:2]) ** 2, self.foot_placement_sigma)
                      * ~s.stance, axis=1) * s.moving

    def _terms(self) -> dict[str, Term]:
        hips, contact = list(self.hip_columns), self.contact_force
        return {
            'track_lin_vel': lambda s: track_kernel(planar_velocity_error_sq(s)),
            'track_ang_vel': lambda s: track_kernel((s.command[:, 2] - s.ang_vel[:, 2]) ** 2, self.yaw_sigma),
            # The same error under a narrow kernel: the wide one is nearly flat within 0.1 m/s of
            # the command (0.96 there), so a policy 20 % short of a 0.5 m/s side-step loses almost nothing.
            'track_lin_vel_fine': lambda s: track_kernel(planar_velocity_error_sq(s), self.fine_tracking_sigma),
            'lin_vel_z': lambda s: s.lin_vel[:, 2] ** 2,
            'ang_vel_xy': lambda s: np.sum(s.ang_vel[:, :2] ** 2, axis=1),
            'orientation': lambda s: np.sum(s.gravity[:, :2] ** 2, axis=1),
            'base_height': lambda s: (s.height - self.base_height) ** 2,
            'action_rate': lambda s: np.sum((s.action - s.last_action) ** 2, axis=1),
            'joint_vel': lambda s: np.sum(s.leg_dq ** 2, axis=1),
            'hip_pos': lambda s: np.sum(s.leg_q[:, hips] ** 2, axis=1),
            'contact': lambda s: np.sum((s.touch > contact) == s.stance, axis=1).astype(float),
            'swing_height': lambda s: np.sum((s.foot_height - self.swing_height) ** 2 * ~s.stance, axis=1),
            'foot_slip': lambda s: np.sum(s.foot_speed ** 2 * (s.touch > contact), axis=1),
            'alive': lambda s: np.ones(len(s.height)),
            'foot_placement': self._foot_placement,
            # A fall (paid once, see ONCE_TERMS): the end of the episode alone costs a fast
            # side-step's fall no more than the few seconds of reward it forgoes, which the narrow kernel outbids.
            'termination': lambda s: self.fallen(s).astype(float),
            # Told to stand (clock stopped): any planar speed or turning is drift. Linear in the speed, so a
            # slow creep costs as much per metre as a fast one (a squared term barely sees 2 cm/s).
            'stand_still': lambda s: (np.hypot(s.lin_vel[:, 0], s.lin_vel[:, 1]) + 0.5 * np.abs(s.ang_vel[:, 2])) * ~s.moving,
            # Told to stand: soles moving at all, down or lifted. ``stand_still`` sees the pelvis and
            # ``foot_slip`` only loaded soles (squared): a shuffle that lifts a sole a centimetre and
            # slides it escapes both, and the pelvis creeps at a few cm/s (GR1 at 68-76 M steps).
            'stand_foot_speed': lambda s: np.sum(s.foot_speed, axis=1) * ~s.moving,
        }


#: Terms paid once, on the step a robot falls, instead of per second: the task adds ``scale * term``
#: after the clip at zero (legged_gym's order; a penalty the clip swallowed would cost nothing).
ONCE_TERMS = ('termination',)

__all__ = ['ONCE_TERMS', 'Term', 'WalkRewardSpec', 'planar_velocity_error_sq', 'track_kernel']
