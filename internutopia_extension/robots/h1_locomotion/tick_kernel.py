"""The compiled twin of :meth:`H1Walker.tick <.walker.H1Walker.tick>` around the network, for every walker.

A tick of the numpy walker spends longer in numpy than the network takes for a few robots: some
forty calls on ``k``-row arrays (the body-frame velocity, gravity, the clock's sin and cos, the
observation's concatenation and its mirror image, then the mean with the mirrored action, the
clips, the servo targets, the command ramp and the clock). Here they are two compiled passes
(:mod:`internutopia.core.util.jit`), one before the onnxruntime call and one after, reading the
robots' state straight from the batch's ``qpos``/``qvel`` rows and writing their ``ctrl`` rows in
place. They do the numpy path's arithmetic in the same order on the same types, so the
observations, actions and servo targets are the same bit for bit (``tests/test_h1_tick_kernel.py``
compares both through many ticks); the numpy path stays the reference and the path without numba.
Every walking robot's gait is one implementation (:mod:`~internutopia_extension.robots.locomotion_gait`)
with its own numbers, so the passes serve them all (H1's, Aliengo's, GR1's: the walker's
``gait`` module gives the numbers); a stand hold's command (GR1's) is worked out between the two
passes, as the numpy tick does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from internutopia.core.util.jit import Kernel
from internutopia_extension.robots.walk_state_kernel import holds_batch_arrays

__all__ = ['CompiledTick', 'compiled_tick']

# Offsets into the packed observation constants (the per-leg ones last: any number of legs).
_LIN, _ANG, _CMD, _JV, _TWO_PI, _STAND = 0, 1, 2, 5, 6, 7
# Offsets into the packed action constants (the per-leg ones last: standing pose, then action scale).
_A_STEP, _A_PHASE_STEP, _A_STAND_CMD, _A_BOTH_DOWN, _A_STAND = 0, 3, 4, 5, 6


def _observe_rows(qpos, qvel, slots, layout, action, followed, phase, constants, mirror_index, mirror_sign,
                  obs):  # pragma: no cover - compiled
    """Observation row ``r`` of the robot of slot ``slots[r]`` (:func:`.gait.observe` of the
    walker's state), and when ``obs`` has twice the rows, row ``k + r`` its mirror image
    (:func:`.gait.mirror_observation`).

    ``layout``: root qpos address, root dof address, first leg qpos and dof addresses."""
    root, dof, leg_q, leg_v = layout[0], layout[1], layout[2], layout[3]
    k = slots.shape[0]
    size = obs.shape[1]
    mirrored = obs.shape[0] >= 2 * k
    row = np.empty(size)
    for r in range(k):
        s = slots[r]
        w, x, y, z = qpos[s, root + 3], qpos[s, root + 4], qpos[s, root + 5], qpos[s, root + 6]
        vx, vy, vz = qvel[s, dof], qvel[s, dof + 1], qvel[s, dof + 2]
        # gait.to_body: v - w (2 u x v) + u x (2 u x v)
        tx = 2.0 * (y * vz - z * vy)
        ty = 2.0 * (z * vx - x * vz)
        tz = 2.0 * (x * vy - y * vx)
        lin = constants[_LIN]
        row[0] = (vx - w * tx + (y * tz - z * ty)) * lin
        row[1] = (vy - w * ty + (z * tx - x * tz)) * lin
        row[2] = (vz - w * tz + (x * ty - y * tx)) * lin
        for i in range(3):
            row[3 + i] = qvel[s, dof + 3 + i] * constants[_ANG]
        row[6] = 2.0 * (w * y - x * z)
        row[7] = -2.0 * (y * z + w * x)
        row[8] = -(1.0 - 2.0 * (x * x + y * y))
        for i in range(3):
            row[9 + i] = followed[s, i] * constants[_CMD + i]
        legs = action.shape[1]
        for j in range(legs):
            row[12 + j] = qpos[s, leg_q + j] - constants[_STAND + j]
            row[12 + legs + j] = qvel[s, leg_v + j] * constants[_JV]
            row[12 + 2 * legs + j] = action[s, j]
        angle = constants[_TWO_PI] * phase[s]
        row[size - 2] = math.sin(angle)
        row[size - 1] = math.cos(angle)
        for c in range(size):
            obs[r, c] = np.float32(row[c])
        if mirrored:
            standing = obs[r, size - 2] == 0.0 and obs[r, size - 1] == 1.0
            for c in range(size):
                obs[k + r, c] = np.float32(obs[r, mirror_index[c]] * mirror_sign[c])
            if standing:  # the standing clock (phase 0 on both feet) mirrors to itself
                obs[k + r, size - 2] = obs[r, size - 2]
                obs[k + r, size - 1] = obs[r, size - 1]


def _act_rows(raw, slots, symmetric, mirror_index, mirror_sign, action, last_action, ctrl, ctrl_start, followed, command,
              phase, constants):  # pragma: no cover - compiled
    """The rest of a tick for robot ``r`` (slot ``slots[r]``): its action (row ``r`` of ``raw``, or
    with ``symmetric`` the mean of it and the mirror of row ``k + r``) clipped to [-1, 1], kept as
    the action and the last one, its leg servo targets in ``ctrl``, the followed command ramped
    towards ``command`` and the gait clock advanced (:meth:`.walker.H1Walker.tick`)."""
    k = slots.shape[0]
    legs = action.shape[1]
    mixed = np.empty(legs)
    for r in range(k):
        s = slots[r]
        for j in range(legs):
            value = np.float64(raw[r, j])
            if symmetric:
                value = 0.5 * (value + np.float64(raw[k + r, mirror_index[j]]) * mirror_sign[j])
            mixed[j] = min(max(value, -1.0), 1.0)
        for j in range(legs):
            last_action[s, j] = action[s, j]
            action[s, j] = mixed[j]
            ctrl[s, ctrl_start + j] = constants[_A_STAND + j] + constants[_A_STAND + legs + j] * min(max(mixed[j], -1.0), 1.0)
        for i in range(3):
            step = constants[_A_STEP + i]
            followed[s, i] = followed[s, i] + min(max(command[s, i] - followed[s, i], -step), step)
        f0, f1, f2 = followed[s, 0], followed[s, 1], followed[s, 2]
        moving = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2) >= constants[_A_STAND_CMD]
        p = phase[s]
        after = (p + constants[_A_PHASE_STEP]) % 1.0
        both_down = (p % 0.5) < constants[_A_BOTH_DOWN]
        phase[s] = after if (moving or (p > 0.0 and not both_down)) else 0.0


_observe_kernel = Kernel(_observe_rows)
_act_kernel = Kernel(_act_rows)


class CompiledTick:
    """The observation and the tick of an :class:`~.walker.H1Walker` (or a walker of another gait
    module: Aliengo's, GR1's), in two compiled passes (see the module docstring).

    Args:
        walker: the bound walker whose arrays (action, clocks, commands) it reads and writes.
    """

    def __init__(self, walker: Any) -> None:
        self.walker = walker
        gait = walker.gait
        self._layout = np.array([walker._root_q, walker._root_v, walker._legs_q.start, walker._legs_v.start], dtype=np.intp)
        self._obs_constants = np.concatenate([[gait.LIN_VEL_SCALE, gait.ANG_VEL_SCALE], gait.COMMAND_SCALE,
                                              [gait.JOINT_VEL_SCALE, 2.0 * np.pi], gait.LEG_STANDING]).astype(float)
        self._act_constants = np.concatenate([gait.COMMAND_RATE * gait.CONTROL_DT,
                                              [gait.CONTROL_DT / gait.GAIT_PERIOD, gait.STAND_COMMAND, gait.STANCE_FRACTION - 0.5],
                                              gait.LEG_STANDING, gait.ACTION_SCALE]).astype(float)
        self._obs_mirror_index = gait.OBS_MIRROR_INDEX.astype(np.intp)
        self._obs_mirror_sign = gait.OBS_MIRROR_SIGN.astype(float)
        self._leg_mirror_index = gait.LEG_MIRROR_INDEX.astype(np.intp)
        self._leg_mirror_sign = gait.LEG_MIRROR_SIGN.astype(float)
        self._ctrl_start = int(walker._legs_ctrl.start)
        self._obs = np.empty((2 * len(walker.phase), gait.OBS_SIZE), dtype=np.float32)
        observe, act = _observe_kernel.compiled_or(None), _act_kernel.compiled_or(None)
        if observe is None or act is None:
            raise RuntimeError('CompiledTick needs the compiled kernels: use compiled_tick(), which is None without them')
        self._observe, self._act = observe, act

    def observe(self, slots: np.ndarray, mirrored: bool = False) -> np.ndarray:
        """The policy's observation rows of ``slots`` (intp), and below them their mirror images
        when ``mirrored``: a view of a buffer that the next call overwrites."""
        walker, data = self.walker, self.walker.data
        obs = self._obs[:2 * len(slots) if mirrored else len(slots)]
        self._observe(data.qpos, data.qvel, slots, self._layout, walker.action, walker.followed, walker.phase,
                      self._obs_constants, self._obs_mirror_index, self._obs_mirror_sign, obs)
        return obs

    def tick(self, slots: np.ndarray) -> None:
        """:meth:`.walker.H1Walker.tick` for ``slots`` (intp)."""
        walker = self.walker
        policy = walker.policy
        if policy is None:
            raw, symmetric = walker.pending_action[slots], False
        else:
            symmetric = bool(policy.symmetric)
            raw = policy.run(self.observe(slots, mirrored=symmetric))
        command = walker.command
        if walker.stand_hold is not None:  # (the numpy tick's stand hold, on the same inputs: the pass leaves them as they are until its ramp)
            requested = command[slots]
            held = walker.held_command_of(slots, requested)
            if held is not requested:  # (a robot told to stand is led back to its spot)
                command = command.copy()
                command[slots] = held
        self._act(raw, slots, symmetric, self._leg_mirror_index, self._leg_mirror_sign, walker.action, walker.last_action,
                  walker.data.ctrl, self._ctrl_start, walker.followed, command, walker.phase, self._act_constants)

    def warm(self) -> None:
        """Compile (or load) both kernels for the layouts :meth:`tick` passes, on no rows."""
        walker = self.walker
        none = np.zeros(0, dtype=np.intp)
        _observe_kernel.warm(walker.data.qpos, walker.data.qvel, none, self._layout, walker.action, walker.followed,
                             walker.phase, self._obs_constants, self._obs_mirror_index, self._obs_mirror_sign, self._obs[:0])
        for raw in (np.zeros((0, walker.gait.ACTION_SIZE), dtype=np.float32), np.zeros((0, walker.gait.ACTION_SIZE))):
            _act_kernel.warm(raw, none, False, self._leg_mirror_index, self._leg_mirror_sign, walker.action,
                             walker.last_action, walker.data.ctrl, self._ctrl_start, walker.followed, walker.command,
                             walker.phase, self._act_constants)


def compiled_tick(walker: Any) -> CompiledTick | None:
    """A warmed :class:`CompiledTick` for a bound ``walker`` when it can serve it: numba available,
    the state arrays of the batch's layout; else ``None`` (the numpy tick)."""
    if not (_observe_kernel.available and _act_kernel.available):
        return None
    if not holds_batch_arrays(walker.data, 'qpos', 'qvel', 'ctrl'):
        return None
    tick = CompiledTick(walker)
    tick.warm()
    return tick
