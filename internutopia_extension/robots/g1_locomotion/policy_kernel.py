"""The compiled twin of :meth:`G1LocomotionPolicy.act` around the network, for robots in a batch.

``act`` spends about as long in numpy as the network takes for 64 robots: some twenty calls on
64-row arrays to clip the commands, advance the gait clocks, assemble the 100-wide observation
and turn the network's output into joint targets. :class:`CompiledAct` does the same in two
compiled passes (:mod:`internutopia.core.util.jit`), one before the onnxruntime call and one after,
reading the robots' state straight from the batch's ``qpos``/``qvel`` rows and writing their
``ctrl`` rows in place. The numpy ``act`` stays the reference (and the path without numba);
``tests/test_g1_locomotion.py`` checks that both give the same targets, clocks and observations.
"""

from __future__ import annotations

import math

import numpy as np

from internutopia.core.util.jit import Kernel
from internutopia_extension.robots.g1_locomotion.policy import _ACTION_CLIP, _STAND_EPS, OBS_LAYOUT, G1LocomotionPolicy

__all__ = ['CompiledAct', 'compiled_act']

#: The observation terms in the order the kernel fills them (their columns come from OBS_LAYOUT).
_TERMS = ('actions', 'base_ang_vel', 'command_ang_vel', 'command_lin_vel', 'cos_phase', 'dof_pos', 'dof_vel',
          'projected_gravity', 'sin_phase')
# Offsets into the packed float constants: phase step, command bounds, term scales, default pose.
_PHASE_DT, _LOW, _HIGH, _SCALES, _DEFAULT = 0, 1, 4, 7, 16


def _observe_rows(qpos, qvel, slots, layout, command, last_action, phase, standing, constants, obs):  # pragma: no cover - compiled
    """Per robot ``r`` (slot ``slots[r]``): clip its command, advance its gait clock (the numpy
    ``_advance_phase``), and write its observation row ``obs[r]`` (``build_obs``).

    ``layout``: root qpos address, root dof address, first joint qpos and dof addresses, then the
    first column of each term of :data:`_TERMS`. ``constants``: see the offsets above."""
    root, dof, joint_q, joint_v = layout[0], layout[1], layout[2], layout[3]
    c_act, c_ang, c_yaw, c_lin, c_cos, c_pos, c_vel, c_grav, c_sin = (layout[4], layout[5], layout[6], layout[7],
                                                                      layout[8], layout[9], layout[10], layout[11],
                                                                      layout[12])
    s_act, s_ang, s_yaw, s_lin, s_cos, s_pos, s_vel, s_grav, s_sin = (
        constants[_SCALES], constants[_SCALES + 1], constants[_SCALES + 2], constants[_SCALES + 3],
        constants[_SCALES + 4], constants[_SCALES + 5], constants[_SCALES + 6], constants[_SCALES + 7],
        constants[_SCALES + 8])
    joints = last_action.shape[1]
    for r in range(slots.shape[0]):
        s = slots[r]
        vx = min(max(command[s, 0], constants[_LOW]), constants[_HIGH])
        vy = min(max(command[s, 1], constants[_LOW + 1]), constants[_HIGH + 1])
        yaw = min(max(command[s, 2], constants[_LOW + 2]), constants[_HIGH + 2])
        left = np.fmod(phase[s, 0] + constants[_PHASE_DT] + math.pi, 2.0 * math.pi) - math.pi
        right = np.fmod(phase[s, 1] + constants[_PHASE_DT] + math.pi, 2.0 * math.pi) - math.pi
        stand = math.sqrt(vx * vx + vy * vy) < _STAND_EPS and abs(yaw) < _STAND_EPS
        if stand:
            left, right = math.pi, math.pi
        elif standing[s]:  # walking again: the clock restarts
            left, right = 0.0, math.pi
        phase[s, 0], phase[s, 1] = left, right
        standing[s] = stand
        row = obs[r]
        for j in range(joints):
            row[c_act + j] = last_action[s, j] * s_act
            row[c_pos + j] = (qpos[s, joint_q + j] - constants[_DEFAULT + j]) * s_pos
            row[c_vel + j] = qvel[s, joint_v + j] * s_vel
        for i in range(3):
            row[c_ang + i] = qvel[s, dof + 3 + i] * s_ang
        row[c_yaw] = yaw * s_yaw
        row[c_lin], row[c_lin + 1] = vx * s_lin, vy * s_lin
        row[c_cos], row[c_cos + 1] = math.cos(left) * s_cos, math.cos(right) * s_cos
        row[c_sin], row[c_sin + 1] = math.sin(left) * s_sin, math.sin(right) * s_sin
        w, x, y, z = qpos[s, root + 3], qpos[s, root + 4], qpos[s, root + 5], qpos[s, root + 6]
        norm = math.sqrt(w * w + x * x + y * y + z * z)
        w, x, y, z = w / norm, x / norm, y / norm, z / norm
        row[c_grav] = -2.0 * (x * z - w * y) * s_grav
        row[c_grav + 1] = -2.0 * (y * z + w * x) * s_grav
        row[c_grav + 2] = -(1.0 - 2.0 * (x * x + y * y)) * s_grav


def _act_rows(raw, slots, last_action, ctrl, ctrl_start, constants):  # pragma: no cover - compiled
    """Per robot ``r``: the network's output clipped, kept as the robot's last action, and its joint
    targets ``default + scale * action`` written to ``ctrl[slots[r], ctrl_start:]``."""
    scale = constants[0]
    for r in range(slots.shape[0]):
        s = slots[r]
        for j in range(raw.shape[1]):
            action = np.float32(min(max(raw[r, j], -_ACTION_CLIP), _ACTION_CLIP))
            last_action[s, j] = action
            ctrl[s, ctrl_start + j] = constants[1 + j] + scale * np.float64(action)


_observe_kernel = Kernel(_observe_rows)
_act_kernel = Kernel(_act_rows)


class CompiledAct:
    """``policy.act`` for robots whose root, joints and actuators sit at the same addresses in
    every row of the batch's ``qpos``, ``qvel`` and ``ctrl`` (one pack), the joints and actuators
    contiguous and in policy order.

    Args:
        policy: the policy whose state (last actions, gait clocks) the robots use, by slot.
        root_qpos, root_dof: the root free joint's qpos and dof addresses.
        joint_qpos, joint_dof: the first policy joint's qpos and dof addresses.
        ctrl_start: the first policy actuator's ctrl column.
    """

    def __init__(self, policy: G1LocomotionPolicy, root_qpos: int, root_dof: int, joint_qpos: int, joint_dof: int,
                 ctrl_start: int) -> None:
        self.policy = policy
        columns = {}
        col = 0
        scales = {}
        for term, width, scale in OBS_LAYOUT:
            columns[term], scales[term] = col, scale
            col += width
        self._layout = np.array([root_qpos, root_dof, joint_qpos, joint_dof, *(columns[t] for t in _TERMS)], dtype=np.intp)
        self._observe_constants = np.concatenate([[policy.phase_dt], policy.command_low, policy.command_high,
                                                  [scales[t] for t in _TERMS], policy.default_joint_pos])
        self._act_constants = np.concatenate([[policy.action_scale], policy.default_joint_pos])
        self._ctrl_start = int(ctrl_start)
        self._obs = np.empty((policy.capacity, policy.obs_dim), dtype=np.float32)
        observe, act = _observe_kernel.compiled_or(None), _act_kernel.compiled_or(None)
        if observe is None or act is None:
            raise RuntimeError('CompiledAct needs the compiled kernels: use compiled_act(), which is None without them')
        self._observe, self._act = observe, act

    def __call__(self, slots: np.ndarray, qpos: np.ndarray, qvel: np.ndarray, ctrl: np.ndarray,
                 command: np.ndarray) -> None:
        """One policy step for the robots of ``slots`` (intp): reads their state rows of ``qpos`` and
        ``qvel`` and their ``command`` rows, writes their joint targets into ``ctrl`` rows."""
        raw = self.policy.infer(self.observations(slots, qpos, qvel, command))
        self._act(raw, slots, self.policy.last_action, ctrl, self._ctrl_start, self._act_constants)

    def observations(self, slots: np.ndarray, qpos: np.ndarray, qvel: np.ndarray, command: np.ndarray) -> np.ndarray:
        """The observation rows the network is fed for ``slots`` (clipping the commands and
        advancing the gait clocks, as a policy step does): a view of a buffer the next call
        overwrites."""
        policy = self.policy
        obs = self._obs[:len(slots)]
        self._observe(qpos, qvel, slots, self._layout, command, policy.last_action, policy.phase, policy.standing,
                      self._observe_constants, obs)
        return obs

    def warm(self, qpos: np.ndarray, qvel: np.ndarray, ctrl: np.ndarray, command: np.ndarray) -> None:
        """Compile (or load from the cache) both passes for these arrays' types now, so the cost
        falls in start-up rather than in the first tick (zero robots: nothing changes)."""
        none = np.zeros(0, dtype=np.intp)
        self.observations(none, qpos, qvel, command)
        self._act(np.zeros((0, self.policy.num_joints), dtype=np.float32), none, self.policy.last_action, ctrl,
                  self._ctrl_start, self._act_constants)


def compiled_act(policy: G1LocomotionPolicy, root_qpos: int, root_dof: int, joint_qpos: int, joint_dof: int,
                 ctrl_start: int) -> CompiledAct | None:
    """A :class:`CompiledAct`, or ``None`` where the kernels cannot run (no numba, or
    ``INTERNUTOPIA_JIT=0``): the caller then uses ``policy.act``."""
    if not (_observe_kernel.available and _act_kernel.available):
        return None
    return CompiledAct(policy, root_qpos, root_dof, joint_qpos, joint_dof, ctrl_start)
