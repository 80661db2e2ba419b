"""Holonomic base motion through a mocap target the robot's base is welded to.

Used for H1's ``move_by_speed``: no trained H1 walking policy is published on PyPI, so the pelvis
is carried at the commanded body-frame velocity ``[forward, lateral, yaw_rate]`` while the legs
hold a standing pose. The weld is soft, so the robot still collides with the scene.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.controller.base import BaseController, BaseVelocityController, as_float_array
from internutopia.core.robot.base import rows_of
from internutopia.core.util.jit import Kernel

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack


class UnsetSpeedExtras(BaseVelocityController):
    """The parsing of a humanoid's ``move_by_speed`` whose InternUtopia action may carry a
    pelvis height and upper-body joint targets as 4th and 5th values (G1's, GR1's): they are
    accepted as ``None`` and refused otherwise (``extras_refusal`` says why), since the walking
    policy here takes a velocity only.

    >>> UnsetSpeedExtras.split_action([0.5, 0.0, 0.1, None, None])
    [0.5, 0.0, 0.1]
    """

    action_shape = (3,)
    action_text = 'move_by_speed expects [forward_speed, lateral_speed, yaw_rate] (a 4th and 5th value only as None); action'
    extras_refusal = 'the walking policy here takes a velocity only (it sets no pelvis height or upper-body pose)'

    @classmethod
    def split_action(cls, action: Any) -> Any:
        """``action`` without InternUtopia's trailing ``None`` height and upper-body pose."""
        if isinstance(action, (list, tuple)) and 3 < len(action) <= 5:
            extra = action[3:]
            if any(value is not None for value in extra):
                raise ValueError(f'{cls.action_text}: {cls.extras_refusal}; got {list(extra)!r} after the velocity')
            return list(action[:3])
        return action

    def parse_action(self, action: Any) -> np.ndarray:
        return as_float_array(self.split_action(action), self.action_shape, self.action_text)

    def parse_batch(self, actions: Any) -> np.ndarray:
        if isinstance(actions, np.ndarray) and actions.dtype != object:
            return as_float_array(actions, (-1, *self.action_shape), self.action_text)
        return np.stack([self.parse_action(action) for action in actions]) if len(actions) else np.zeros((0, 3))


@BaseController.register('HolonomicBaseController')
class HolonomicBaseController(BaseVelocityController):
    """Integrates the robot's mocap target (``robot.mocap_index``) at the commanded velocity."""

    action_shape = (3,)
    action_text = 'move_by_speed expects [forward_speed, lateral_speed, yaw_rate]; action'

    def bind(self, world: Pack) -> None:
        super().bind(world)
        self.world = world
        # One env step (the target moves once per step, before the pack's substeps): read once, the kernels take a float.
        self.dt = world.lookup.timestep * world.substeps
        data = world.data
        _carry_kernel.warm(data.mocap_pos, data.mocap_quat, np.zeros(0, dtype=np.intp), 0, np.zeros((0, 3)), self.dt, 1.0, 1.0, 1.0)
        #: The clamp and the carry in one compiled call (else None: the numpy clamp, then the numpy carry).
        self._carry_clamped = _carry_kernel.compiled_or(None)

    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        self.apply_base_velocity(slots, batch)

    def apply_base_velocity(self, slots: np.ndarray, velocity: np.ndarray) -> None:
        # Beyond the robot's range a command is clamped (a target flung kilometres away per step
        # would tear the robot off its weld): the direction is kept, the speed capped.
        config = self.config
        limit = float(getattr(config, 'max_linear_speed', np.inf))
        turn = float(getattr(config, 'max_yaw_rate', np.inf))
        threshold = min(limit / math.sqrt(2.0), turn)
        data = self.world.data
        clamped = self._carry_clamped
        if clamped is not None:  # (the check and clamp below, inside the compiled carry: no numpy call per step)
            clamped(data.mocap_pos, data.mocap_quat, slots, self.robot.mocap_index, velocity, self.dt, limit, turn, threshold)
            return
        # (runs every step: one call decides that nothing needs clamping, the usual case)
        if velocity.size and np.abs(velocity).max() > threshold:
            speed = np.hypot(velocity[:, 0], velocity[:, 1])
            velocity = np.array(velocity, dtype=float)
            scale = np.minimum(1.0, limit / np.maximum(speed, 1e-300))
            velocity[:, :2] *= scale[:, None]
            np.clip(velocity[:, 2], -turn, turn, out=velocity[:, 2])
        _carry_numpy(data.mocap_pos, data.mocap_quat, slots, self.robot.mocap_index, velocity, self.dt)


class WalkingOrCarriedSpeedController(HolonomicBaseController):
    """``move_by_speed`` of a robot that walks or is carried (H1's, GR1's, Aliengo's): a walking
    robot's ``[forward, lateral, yaw_rate]`` goes to its walker as the policy's command (clipped
    to the range the policy was trained for); a carried robot's base target moves as a holonomic
    base's. Walking, the command is only stored (the policy reads it on its ticks), so applying
    it again changes nothing (:attr:`idempotent_apply`, set when bound)."""

    def bind(self, world: Any) -> None:
        self.walker = getattr(self.robot, 'walker', None)
        self.idempotent_apply = self.stores_walker_command(self.walker)
        if self.walker is None:
            super().bind(world)
        else:
            self.world = world

    def apply_base_velocity(self, slots: np.ndarray, velocity: np.ndarray) -> None:
        if self.walker is None:
            super().apply_base_velocity(slots, velocity)
        else:
            self.walker.set_command(slots, velocity)

    def stores_walker_command(self, walker: Any) -> bool:
        """Whether this controller only stores the command: the robot walks (``walker``), and its
        class applies as this one does (a subclass that applies its own way, which may compute
        from the state every step, is not taken at its parent's word)."""
        kind, own = type(self), WalkingOrCarriedSpeedController
        return walker is not None and kind.apply is own.apply and kind.apply_base_velocity is own.apply_base_velocity


def _carry_numpy(mocap_pos: np.ndarray, mocap_quat: np.ndarray, slots: np.ndarray, mocap: int, velocity: np.ndarray,
                 dt: float) -> None:
    """Move the mocap targets ``mocap`` of ``slots`` at body-frame ``velocity`` ``(k, 3)`` for ``dt``.

    The target stays upright, so its quaternion is ``(cos h, 0, 0, sin h)`` for half the yaw h.
    Heading and position are complex numbers here: the heading is that half-angle squared, and
    turning multiplies the half-angle by ``exp(i yaw_rate dt / 2)``, half the numpy calls of going
    through yaw angles.
    """
    rows = rows_of(slots, len(mocap_pos))
    quat = mocap_quat[rows, mocap]  # a view when rows is every slot, else a copy
    half_turn = quat[:, 0] + 1j * quat[:, 3]
    half_turn /= np.abs(half_turn)
    position = mocap_pos[rows, mocap]
    planar = position[:, :2].view(complex)[:, 0]  # x + iy, in place in position
    planar += half_turn * half_turn * np.ascontiguousarray(velocity[:, :2]).view(complex)[:, 0] * dt
    half_turn *= np.exp(velocity[:, 2] * (0.5j * dt))
    quat[:, 0] = half_turn.real
    quat[:, 1:3] = 0.0
    quat[:, 3] = half_turn.imag
    mocap_pos[rows, mocap] = position
    mocap_quat[rows, mocap] = quat


def _carry_rows(mocap_pos: np.ndarray, mocap_quat: np.ndarray, slots: np.ndarray, mocap: int, velocity: np.ndarray,
                dt: float, limit: float, turn: float, threshold: float) -> None:
    """:meth:`HolonomicBaseController.apply_base_velocity`'s clamp, then :func:`_carry_numpy`, one
    slot per iteration and in real arithmetic (compiled by numba): when any component of
    ``velocity`` exceeds ``threshold``, every row's planar speed is capped at ``limit`` (direction
    kept) and its yaw rate clipped to ``turn``, in numpy's arithmetic (``threshold = inf``: no
    clamp); ``velocity`` itself is not written."""
    clamp = False
    for i in range(velocity.shape[0]):
        for j in range(3):
            if abs(velocity[i, j]) > threshold:
                clamp = True
    for i in range(slots.shape[0]):
        slot = slots[i]
        forward_speed, lateral_speed, yaw_rate = velocity[i, 0], velocity[i, 1], velocity[i, 2]
        if clamp:
            scale = min(1.0, limit / max(math.hypot(forward_speed, lateral_speed), 1e-300))
            forward_speed, lateral_speed = forward_speed * scale, lateral_speed * scale
            yaw_rate = min(max(yaw_rate, -turn), turn)
        w, z = mocap_quat[slot, mocap, 0], mocap_quat[slot, mocap, 3]
        norm = math.hypot(w, z)
        cos_half, sin_half = w / norm, z / norm
        cos_yaw, sin_yaw = cos_half * cos_half - sin_half * sin_half, 2.0 * cos_half * sin_half
        forward, lateral = forward_speed * dt, lateral_speed * dt
        mocap_pos[slot, mocap, 0] += cos_yaw * forward - sin_yaw * lateral
        mocap_pos[slot, mocap, 1] += sin_yaw * forward + cos_yaw * lateral
        turn_half = 0.5 * yaw_rate * dt
        cos_turn, sin_turn = math.cos(turn_half), math.sin(turn_half)
        mocap_quat[slot, mocap, 0] = cos_half * cos_turn - sin_half * sin_turn
        mocap_quat[slot, mocap, 1] = 0.0
        mocap_quat[slot, mocap, 2] = 0.0
        mocap_quat[slot, mocap, 3] = sin_half * cos_turn + cos_half * sin_turn


_carry_kernel = Kernel(_carry_rows)

