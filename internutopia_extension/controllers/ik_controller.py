"""``InverseKinematicsController``: an arm's end-effector frame to a target pose, for all slots at once.

Action (one slot): ``[position (3,), orientation (4,) wxyz]``, InternUtopia's format, in the frame
the config's ``reference`` names (``'world'``: env-local; ``'robot'``/``'arm_base'``: the arm's
base). ``orientation`` may be ``None`` (position only), and ``[None, None]`` holds the arm where it
is. A flat 7-vector is accepted too, and the array API takes ``(k, 7)`` rows.

On a command the controller solves the IK for every commanding slot in one batched call
(:func:`~internutopia_extension.controllers.kinematics.solve_ik`: damped least squares on the
chain's Jacobian, from the joint targets in force, within the joint limits) and writes the solution
as the arm's joint position targets; the servos then move the arm there, and the targets stay until
the next command, so a target sent once is reached over the following steps (as InternUtopia's Lula
solver does). A command repeating a target that was already solved costs no solve.

Observation (per slot): ``eef_position`` (3,) and ``eef_orientation`` (4,) of the end-effector frame,
env-local, at the state after the step; ``success``: the last solve converged (the target is
reachable within the joint limits); ``finished``: the frame is within ``threshold`` metres of the
last target.

The robot provides the kinematics: ``chain(frame)``, ``joint_array(slots)``, ``base_frame(slots)``,
``frame_pose(...)``, ``arm_actuators`` and ``home`` (see :class:`~internutopia_extension.robots.franka.FrankaRobot`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.controller.base import BaseController, as_float_array
from internutopia_extension.controllers.kinematics import IKParams, quat_to_mat, solve_ik

#: Column of a parsed action that says what it asks: hold, position only, or a full pose.
_MODE = 7
HOLD, POSITION, POSE = 0.0, 1.0, 2.0


@BaseController.register('InverseKinematicsController')
class InverseKinematicsController(BaseController):
    """Batched differential IK; see the module docstring."""

    params = IKParams()

    def __init__(self, config, robot) -> None:
        super().__init__(config, robot)
        n = self.env_num
        self.reference = config.reference or 'world'
        self.threshold = float(config.threshold)
        #: Last target per slot: env-local position, base-frame position and rotation, mode.
        self.target_world = np.zeros((n, 3))
        self.target_pos = np.zeros((n, 3))
        self.target_rot = np.broadcast_to(np.eye(3), (n, 3, 3)).copy()
        self.rot_weight = np.zeros(n)
        self.has_target = np.zeros(n, dtype=bool)
        self.success = np.zeros(n, dtype=bool)
        self._last = np.full((n, 8), np.nan)  # the parsed command each slot's solution answers
        self.chain = None
        self.columns = np.zeros(0, dtype=np.intp)

    def bind(self, world: Any) -> None:
        super().bind(world)
        robot = self.robot
        if not len(robot.slots):
            return
        try:
            self.chain, self.columns = robot.chain(self.config.end_effector_frame_name)
        except (KeyError, ValueError) as exc:
            raise ValueError(f'controller {self.name!r} of robot {robot.name!r}: end_effector_frame_name '
                             f'{self.config.end_effector_frame_name!r} is not usable: {exc}') from None
        self.actuators = robot.arm_actuators
        if len(self.actuators) != self.chain.size:
            raise ValueError(f'controller {self.name!r}: the chain to {self.config.end_effector_frame_name!r} has '
                             f'{self.chain.size} joints but robot {robot.name!r} actuates {len(self.actuators)}')
        self.rest = np.asarray(robot.home, dtype=float)

    # -- parsing -----------------------------------------------------------------------------
    def parse_action(self, action: Any) -> np.ndarray:
        out = np.full(8, np.nan)
        if isinstance(action, (list, tuple)) and len(action) == 2:
            position, orientation = action
            if position is None:
                out[_MODE] = HOLD
                return out
            out[:3] = as_float_array(position, (3,), 'arm IK position')
            if orientation is None:
                out[3:7] = (1.0, 0.0, 0.0, 0.0)
                out[_MODE] = POSITION
            else:
                out[3:7] = _unit_quat(as_float_array(orientation, (4,), 'arm IK orientation (wxyz)'))
                out[_MODE] = POSE
            return out
        flat = as_float_array(action, (7,), 'arm IK action [position (3,), orientation wxyz (4,)]')
        out[:3], out[3:7], out[_MODE] = flat[:3], _unit_quat(flat[3:]), POSE
        return out

    def parse_batch(self, actions: Any) -> np.ndarray:
        rows = as_float_array(actions, (-1, 7), 'arm IK actions (rows of position (3,), orientation wxyz (4,))')
        out = np.empty((len(rows), 8))
        out[:, :7] = rows
        norms = np.linalg.norm(rows[:, 3:], axis=1)
        if np.any(norms < 1e-6):
            raise ValueError(f'arm IK orientation (wxyz) must be a nonzero quaternion; row {int(np.argmin(norms))} is {rows[np.argmin(norms), 3:].tolist()}')
        out[:, 3:7] /= norms[:, None]
        out[:, _MODE] = POSE
        return out

    # -- stepping ----------------------------------------------------------------------------
    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        robot, ctrl = self.robot, self.robot.world.data.ctrl
        mode = batch[:, _MODE]
        hold = mode == HOLD
        if np.any(hold):
            held = slots[hold]
            ctrl[held[:, None], self.actuators] = robot.joint_array(held)[:, self.columns]
            self.has_target[held] = False
            self.success[held] = True
            self._last[held] = np.nan
        moving = ~hold
        if not np.any(moving):
            return
        slots, batch = slots[moving], batch[moving]
        # A repeated command whose solution is in force needs no new solve.
        fresh = ~np.all(batch == self._last[slots], axis=1) | ~self.success[slots]
        if not np.any(fresh):
            return
        slots, batch = slots[fresh], batch[fresh]
        position, rotation = batch[:, :3], quat_to_mat(batch[:, 3:7])
        base_pos, base_rot = robot.base_frame(slots)
        base_rot_t = np.swapaxes(base_rot, 1, 2)
        if self.reference == 'world':
            world = position
            position = np.einsum('kij,kj->ki', base_rot_t, position - base_pos)
            rotation = base_rot_t @ rotation
        else:
            world = base_pos + np.einsum('kij,kj->ki', base_rot, position)
        weight = (batch[:, _MODE] == POSE).astype(float)
        start = ctrl[slots[:, None], self.actuators]
        rest = np.broadcast_to(self.rest, start.shape)
        q, pos_err, rot_err = solve_ik(self.chain, start, position, rotation, weight, rest, self.params)
        stuck = (pos_err > SUCCESS_POSITION) | (rot_err > SUCCESS_ROTATION)
        if np.any(stuck):
            # A warm start can sit in a poor local minimum (after a large change of target): try
            # again from the rest posture and keep whichever ends closer.
            again = solve_ik(self.chain, rest[stuck], position[stuck], rotation[stuck], weight[stuck], rest[stuck], self.params)
            better = again[1] + again[2] * _ROTATION_METRES < pos_err[stuck] + rot_err[stuck] * _ROTATION_METRES
            rows = np.flatnonzero(stuck)[better]
            q[rows], pos_err[rows], rot_err[rows] = again[0][better], again[1][better], again[2][better]
        ctrl[slots[:, None], self.actuators] = q
        self.target_world[slots] = world
        self.target_pos[slots] = position
        self.target_rot[slots] = rotation
        self.rot_weight[slots] = weight
        self.has_target[slots] = True
        self.success[slots] = (pos_err <= SUCCESS_POSITION) & (rot_err <= SUCCESS_ROTATION)
        self._last[slots] = batch

    def get_obs(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        position, orientation = self.robot.frame_pose(self.chain, self.columns, slots)
        distance = np.linalg.norm(position - self.target_world[slots], axis=1)
        return {
            'eef_position': position,
            'eef_orientation': orientation,
            'success': self.success[slots].copy(),
            'finished': self.has_target[slots] & (distance < self.threshold),
        }

    def reset(self, slots: np.ndarray) -> None:
        super().reset(slots)
        self.has_target[slots] = False
        self.success[slots] = False
        self._last[slots] = np.nan


#: A solve counts as a success when it ends this close to the target (m, rad).
SUCCESS_POSITION, SUCCESS_ROTATION = 1e-3, 1e-2
#: Metres an orientation error of one radian counts as, when two solutions are compared.
_ROTATION_METRES = 0.1


def _unit_quat(quat: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(quat))
    if norm < 1e-6:
        raise ValueError(f'arm IK orientation (wxyz) must be a nonzero quaternion; got {quat.tolist()}')
    return quat / norm
