"""The compiled twin of :meth:`H1Walker.state <internutopia_extension.robots.h1_locomotion.walker.H1Walker.state>`:
what rewards and fall checks read of walking robots, gathered in one pass.

The numpy state is some thirty calls on ``k``-row arrays (the rows gathered from the batch's
state, the pelvis heading and its sine and cosine, the body-frame velocity, gravity, the gait
clock's stance, the soles' heights, speeds and sideways offsets), about 100 us a control tick at
64 robots; the arithmetic is a few dozen flops a robot. :class:`CompiledWalkState` reads the
batch's ``qpos``, ``qvel`` and ``sensordata`` rows directly and fills the same
:class:`~internutopia_extension.robots.h1_locomotion.walker.WalkState` fields with the same
formulas, for any walking robot (the gait's numbers and the feet's sensor columns are arguments).
The numpy state stays the reference (``tests/test_walk_state_kernel.py`` compares both for H1,
Aliengo and GR1, to rounding).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from internutopia.core.util.jit import Kernel

__all__ = ['STATE_KERNEL', 'CompiledWalkState', 'compiled_walk_state', 'holds_batch_arrays', 'state_rows']


def state_rows(qpos, qvel, sensordata, slots, layout, touch_adr, foot_pos_adr, foot_vel_adr, action, last_action, followed, phase,
               clock, leg_phase_offset, height, gravity, lin_vel, ang_vel, leg_q, leg_dq, action_out, last_action_out, command,
               stance, moving, touch, foot_height, foot_speed, foot_lateral):  # pragma: no cover - compiled
    """Row ``r`` of each output for the robot of slot ``slots[r]``.

    ``layout``: root qpos address, root dof address, first leg qpos and dof addresses; ``clock``:
    the gait's stand command (below it the clock stops) and stance fraction."""
    root, dof, leg_q0, leg_v0 = layout[0], layout[1], layout[2], layout[3]
    legs = leg_q.shape[1]
    feet = touch.shape[1]
    for r in range(slots.shape[0]):
        s = slots[r]
        w, x, y, z = qpos[s, root + 3], qpos[s, root + 4], qpos[s, root + 5], qpos[s, root + 6]
        heading = 2.0 * math.atan2(z, w)
        cos, sin = math.cos(heading), math.sin(heading)
        vx, vy = qvel[s, dof], qvel[s, dof + 1]
        height[r] = qpos[s, root + 2]
        gravity[r, 0] = 2.0 * (w * y - x * z)
        gravity[r, 1] = -2.0 * (y * z + w * x)
        gravity[r, 2] = -(1.0 - 2.0 * (x * x + y * y))
        lin_vel[r, 0] = cos * vx + sin * vy
        lin_vel[r, 1] = -sin * vx + cos * vy
        lin_vel[r, 2] = qvel[s, dof + 2]
        for i in range(3):
            ang_vel[r, i] = qvel[s, dof + 3 + i]
            command[r, i] = followed[s, i]
        for j in range(legs):
            leg_q[r, j] = qpos[s, leg_q0 + j]
            leg_dq[r, j] = qvel[s, leg_v0 + j]
            action_out[r, j] = action[s, j]
            last_action_out[r, j] = last_action[s, j]
        c0, c1, c2 = followed[s, 0], followed[s, 1], followed[s, 2]
        running = math.sqrt(c0 * c0 + c1 * c1 + c2 * c2) >= clock[0] or phase[s] > 0.0
        moving[r] = running
        for f in range(feet):
            stance[r, f] = ((phase[s] + leg_phase_offset[f]) % 1.0) < clock[1] or not running
            touch[r, f] = sensordata[s, touch_adr[f]]
            foot_height[r, f] = sensordata[s, foot_pos_adr[f] + 2]
            foot_speed[r, f] = math.hypot(sensordata[s, foot_vel_adr[f]], sensordata[s, foot_vel_adr[f] + 1])
            dx = sensordata[s, foot_pos_adr[f]] - qpos[s, root]
            dy = sensordata[s, foot_pos_adr[f] + 1] - qpos[s, root + 1]
            foot_lateral[r, f] = -sin * dx + cos * dy


_state_kernel = Kernel(state_rows)
#: The compiled :func:`state_rows`, for kernels that compile it into theirs (``Kernel``'s ``uses``).
STATE_KERNEL = _state_kernel


class CompiledWalkState:
    """:func:`state_rows` bound to one walker's columns and gait (see the module docstring).

    Args:
        walker: the bound walker whose state columns, actions, commands and clocks it reads.
    """

    def __init__(self, walker: Any) -> None:
        gait = walker.gait
        self.walker = walker
        self.layout = np.array([walker._root_q, walker._root_v, walker._legs_q.start, walker._legs_v.start], dtype=np.intp)
        self.touch_adr, self.foot_pos_adr, self.foot_vel_adr = (np.asarray(walker._touch, dtype=np.intp),
                                                                np.asarray(walker._foot_pos, dtype=np.intp),
                                                                np.asarray(walker._foot_vel, dtype=np.intp))
        self.clock = np.array([float(gait.STAND_COMMAND), float(gait.STANCE_FRACTION)])
        self.leg_phase_offset = np.asarray(gait.LEG_PHASE_OFFSET, dtype=float)
        kernel = _state_kernel.compiled_or(None)
        if kernel is None:
            raise RuntimeError('CompiledWalkState needs numba: use compiled_walk_state(), which is None without it')
        self._kernel = kernel

    @property
    def legs(self) -> int:
        """Leg joints of the walker (columns of ``leg_q``)."""
        return self.walker._legs_q.stop - self.walker._legs_q.start

    def inputs(self, for_types: bool = False) -> tuple:
        """What :func:`state_rows` reads, in its order without the slots: the batch's state and
        sensor rows, the columns, the walker's actions, commands and clocks, the gait's numbers.
        ``for_types``: the arrays for their types only (to compile for), so the sensor rows are
        taken as they are, without running a reset's pending forward passes (reading them does)."""
        walker, data = self.walker, self.walker.data
        raw = getattr(data, 'raw', None) if for_types else None
        sensordata = raw('sensordata') if raw is not None else None
        return (data.qpos, data.qvel, data.sensordata if sensordata is None else sensordata, self.layout, self.touch_adr,
                self.foot_pos_adr, self.foot_vel_adr, walker.action, walker.last_action, walker.followed, walker.phase,
                self.clock, self.leg_phase_offset)

    def _arguments(self, slots: np.ndarray, state: Any) -> tuple:
        qpos, qvel, sensordata, *columns_and_clocks = self.inputs()
        return (qpos, qvel, sensordata, slots, *columns_and_clocks, state.height, state.gravity, state.lin_vel, state.ang_vel,
                state.leg_q, state.leg_dq, state.action, state.last_action, state.command, state.stance, state.moving, state.touch,
                state.foot_height, state.foot_speed, state.foot_lateral)

    def fill(self, slots: np.ndarray, state: Any) -> None:
        """Fill ``state`` (a ``WalkState`` of ``len(slots)`` rows, C-contiguous fields) for ``slots`` (intp)."""
        self._kernel(*self._arguments(slots, state))

    def warm(self, empty_state: Any) -> None:
        """Compile (or load) the one version :meth:`fill` calls, with a zero-row state."""
        _state_kernel.warm(*self._arguments(np.zeros(0, dtype=np.intp), empty_state))


def holds_batch_arrays(data: Any, *names: str) -> bool:
    """Whether each field ``names`` of a world's ``data`` is a 2-D numpy array (one row per slot):
    what a compiled pass over the batch's rows reads."""
    return all(isinstance(getattr(data, name, None), np.ndarray) and getattr(data, name).ndim == 2 for name in names)


def compiled_walk_state(walker: Any, empty_state: Any) -> CompiledWalkState | None:
    """A warmed :class:`CompiledWalkState` for a bound ``walker`` when it can serve it (numba
    available, the batch's ``qpos``, ``qvel`` and ``sensordata`` 2-D numpy arrays); else ``None``.
    ``empty_state``: a zero-row ``WalkState`` of the walker's sizes (the types to compile for)."""
    if not _state_kernel.available or not holds_batch_arrays(walker.data, 'qpos', 'qvel', 'sensordata'):
        return None
    state = CompiledWalkState(walker)
    state.warm(empty_state)
    return state
