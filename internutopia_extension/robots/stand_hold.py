"""Standing still where told to stop: a position hold on top of a velocity policy.

A walking policy told to stand (a zero velocity command) keeps its balance by small steps and
corrections; a policy whose stand is not perfectly still creeps (GR1's, about 5 mm/s, where H1's
moves less than 0.1 mm/s). :class:`StandHold` closes that loop the way a deployed legged robot's
stand mode does: once a robot told to stand has finished its last stride (its gait clock
stopped) and :attr:`StandHoldSpec.delay` seconds more have passed to settle, the spot and heading
it stands at become its anchor, and while the zero command lasts the policy is fed a small velocity command back towards
it (proportional to the error in the pelvis's heading frame, capped below a walking speed). The
policy itself is unchanged; a nonzero command from the user replaces the hold at once.

>>> import numpy as np
>>> hold = StandHold(StandHoldSpec(delay=0.04), env_num=2)
>>> slots, xy, yaw, stopped = np.arange(2), np.zeros((2, 2)), np.zeros(2), np.ones(2, dtype=bool)
>>> zero = np.zeros((2, 3))
>>> for _ in range(3):  # told to stand: the anchors follow the robots for ``delay`` seconds ...
...     command = hold.apply(slots, zero, xy, yaw, stopped, control_dt=0.02)
>>> command = hold.apply(slots, zero, xy + [[0.01, 0.0], [0.0, -0.5]], yaw, stopped, control_dt=0.02)
>>> command.round(3).tolist()  # ... then each is sent back to its anchor (the second capped)
[[-0.01, 0.0, 0.0], [0.0, 0.08, 0.0]]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ['StandHold', 'StandHoldSpec']


@dataclass(frozen=True)
class StandHoldSpec:
    """How a robot holds the spot it stopped at (a robot's walker names one, or none)."""

    #: Seconds from the end of the last stride (the gait clock stopped) to fixing the anchor.
    delay: float = 0.5
    #: Command per metre of position error (m/s per m, forward and sideways) ...
    gain: float = 1.0
    #: ... and per radian of heading error (rad/s per rad).
    yaw_gain: float = 1.0
    #: The largest command the hold sends on each axis (m/s, m/s, rad/s). A creep's correction is
    #: millimetres per second and leaves the gait clock stopped; a robot pushed off its spot gets a
    #: slow walk back (the clock runs above ``STAND_COMMAND`` of the command's norm).
    limit: tuple[float, float, float] = (0.08, 0.08, 0.1)


class StandHold:
    """The anchors and stand timers of ``env_num`` robots (see the module docstring)."""

    def __init__(self, spec: StandHoldSpec, env_num: int) -> None:
        self.spec = spec
        self.anchor = np.zeros((env_num, 2))  #: where each robot holds, world xy (m)
        self.anchor_yaw = np.zeros(env_num)  #: the heading it holds (rad)
        #: seconds it has stood since its gait clock stopped (0: told to move, or still stepping)
        self.standing_for = np.zeros(env_num)
        self._limit = np.array(spec.limit)

    def reset(self, slots: np.ndarray) -> None:
        """Slots taking a new episode: not standing yet (the anchor is taken after ``delay``)."""
        self.standing_for[slots] = 0.0

    def apply(self, slots: np.ndarray, requested: np.ndarray, xy: np.ndarray, yaw: np.ndarray,
              clock_stopped: np.ndarray, control_dt: float) -> np.ndarray:
        """One control tick: the command ``(k, 3)`` the legs should follow for ``slots``: the
        ``requested`` one, or for a robot told to stand (exactly zero) that has settled, the way
        back to its anchor. ``xy`` and ``yaw``: the pelvises' world position and heading now;
        ``clock_stopped``: whose gait clocks stand at 0 (no stride under way)."""
        spec = self.spec
        stands = ~np.any(requested, axis=1)
        if not stands.any():  # every robot walks (the anchors are taken when they stop)
            self.standing_for[slots] = 0.0
            return requested
        before = self.standing_for[slots]
        # (the time counts from the first tick its clock is found stopped; a correction that
        # restarts the clock, after a push, does not restart the settling)
        standing_for = np.where(stands & (clock_stopped | (before > 0.0)), before + control_dt, 0.0)
        self.standing_for[slots] = standing_for
        settling = before <= spec.delay + 1e-9  # (the tick that stops the clock takes the anchor when delay is 0)
        if np.any(settling):  # the anchor follows the robot until it has settled
            follow = slots[settling]
            self.anchor[follow] = xy[settling]
            self.anchor_yaw[follow] = yaw[settling]
        holding = stands & ~settling
        if not np.any(holding):
            return requested
        error = self.anchor[slots] - xy
        cos, sin = np.cos(yaw), np.sin(yaw)
        forward = cos * error[:, 0] + sin * error[:, 1]
        sideways = -sin * error[:, 0] + cos * error[:, 1]
        turn = np.angle(np.exp(1j * (self.anchor_yaw[slots] - yaw)))  # wrapped to (-pi, pi]
        back = np.stack([spec.gain * forward, spec.gain * sideways, spec.yaw_gain * turn], axis=1)
        back = np.clip(back, -self._limit, self._limit)
        return np.where(holding[:, None], back, requested)
