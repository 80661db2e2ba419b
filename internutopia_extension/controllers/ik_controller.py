"""``InverseKinematicsController``: an arm's end-effector frame to a target pose, for all slots at once.

Action (one slot): ``[position (3,), orientation (4,) wxyz]``, InternUtopia's format, in the frame
the config's ``reference`` names (``'world'``: env-local; ``'robot'``/``'arm_base'``: the arm's
base). ``orientation`` may be ``None`` (position only), and ``[None, None]`` holds the arm where it
is. A flat 7-vector is accepted too, and the array API takes ``(k, 7)`` rows.

On a command the controller solves the IK for every commanding slot in one batched call
(:func:`~internutopia_extension.controllers.kinematics.solve_ik`: damped least squares on the
chain's Jacobian, from the joint goals in force, within the joint limits) and writes the solution
as the arm's joint goals (into ``ctrl``; the robot moves its servo targets towards them, for the
Panda at its joint speed limits); the servos then move the arm there, and the goals stay until
the next command, so a target sent once is reached over the following steps (as InternUtopia's Lula
solver does). A command repeating the last one costs no solve (its best answer is in force). When
the warm start ends far off (a poor local minimum after a large change of target), the rows left
over retry from a few other start postures
(:func:`~internutopia_extension.controllers.kinematics.solve_ik_restarts`).

Observation (per slot): ``eef_position`` (3,) and ``eef_orientation`` (4,) of the end-effector frame,
env-local, at the state after the step; ``success``: the last solve converged (the target is
reachable within the joint limits); ``finished``: the frame is within ``threshold`` metres of the
last target.

The robot provides the kinematics: ``chain(frame)``, ``joint_array(slots)``, ``base_frame(slots)``,
``frame_pose(...)``, ``frame_poses(...)`` (packed, for compiled readers), ``arm_actuators`` and ``home`` (see :class:`~internutopia_extension.robots.franka.FrankaRobot`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.controller.base import BaseController, as_float_array
from internutopia.core.util.jit import Kernel
from internutopia_extension.configs.controllers.ik_controller import InverseKinematicsControllerCfg
from internutopia_extension.controllers.kinematics import IKParams, SerialChain, quat_to_mat, solve_ik_restarts, warm_ik

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack

#: Column of a parsed action that says what it asks: hold, position only, or a full pose.
_MODE = 7
HOLD, POSITION, POSE = 0.0, 1.0, 2.0
_FLOAT64 = np.dtype(np.float64)
#: Shortest quaternion an orientation may be given as (it is normalized).
_MIN_NORM = 1e-6


@BaseController.register('InverseKinematicsController')
class InverseKinematicsController(BaseController):
    """Batched differential IK; see the module docstring."""

    config: InverseKinematicsControllerCfg

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
        #: The joint goals each slot's last solve wrote (sized at bind): a repeated command is
        #: skipped only while they are still the goals in force (another controller's command,
        #: or targets applied through the articulation, replace them: then it is solved again).
        self._solved = np.full((n, 0), np.nan)
        self.chain: SerialChain | None = None  # set by bind
        self._base_moves = False
        self.columns = np.zeros(0, dtype=np.intp)
        # The compiled parse_batch and get_obs (set by bind where numba is available).
        self._parse_kernel: Callable[..., Any] | None = None
        self._observe_kernel: Callable[..., Any] | None = None

    def bind(self, world: Pack) -> None:
        super().bind(world)
        robot = self.robot
        if not len(robot.slots):
            return
        try:
            chain, self.columns = robot.chain(self.config.end_effector_frame_name)
        except (KeyError, ValueError) as exc:
            raise ValueError(f'controller {self.name!r} of robot {robot.name!r}: end_effector_frame_name '
                             f'{self.config.end_effector_frame_name!r} is not usable: {exc}') from None
        self.chain = chain
        self.actuators = robot.arm_actuators
        if len(self.actuators) != chain.size:
            raise ValueError(f'controller {self.name!r}: the chain to {self.config.end_effector_frame_name!r} has '
                             f'{chain.size} joints but robot {robot.name!r} actuates {len(self.actuators)}')
        if self._solved.shape[1] != len(self.actuators):
            self._solved = np.full((self.env_num, len(self.actuators)), np.nan)
        self.rest = np.asarray(robot.home, dtype=float)
        #: Whether the arm's base moves during an episode (the robot says so: ``ik_base_moves``).
        self._base_moves = bool(getattr(robot, 'ik_base_moves', False))
        self._parse_kernel = _parse_kernel.compiled_or(None)
        self._observe_kernel = _observe_kernel.compiled_or(None)
        # Compiled (or loaded from the cache) now, not in the first step.
        warm_ik(chain, self.params)
        _parse_kernel.warm(np.zeros((1, 7)), np.empty((1, 8)))
        _observe_kernel.warm(np.zeros((1, 16)), np.zeros(1, dtype=np.intp), self.target_world, self.has_target, self.threshold,
                             np.empty((1, 3)), np.empty((1, 4)), np.empty(1, dtype=bool))

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
        kernel = self._parse_kernel
        if (kernel is not None and type(actions) is np.ndarray and actions.dtype is _FLOAT64 and actions.ndim == 2
                and actions.shape[1] == 7 and actions.flags.c_contiguous):
            # The array API's usual argument: one compiled pass, where parse_rows costs about ten
            # numpy calls. Rows it refuses (not finite, a zero quaternion) go the numpy way, which
            # names the problem.
            out = np.empty((len(actions), 8))
            if kernel(actions, out):
                return out
        return parse_rows(actions)

    # -- stepping ----------------------------------------------------------------------------
    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        # A command repeating the last one in every slot (a policy holding a pose sends it every
        # step) costs one comparison of bytes: nothing to hold or solve. (A hold row never
        # matches: its mode is 0 where the last command's is 1, 2 or NaN.) Slots are sorted ids, so
        # as many as there are envs are every slot in order: the last commands as they are.
        last = self._last if len(slots) == self.env_num else self._last[slots]
        if (batch.tobytes() == last.tobytes() and not self._base_moves
                and np.array_equal(self.robot.world.data.ctrl[slots[:, None], self.actuators], self._solved[slots])):
            return
        self._apply(slots, batch)

    def _apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
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
        # A repeated command needs no new solve: its best answer is in force already.
        # (On a base that moves, e.g. a walking humanoid, an env-local target moves in the arm's
        # frame: every command is solved again, warm-started from the goals in force.)
        fresh = (~np.all(batch == self._last[slots], axis=1) | self._base_moves
                 | ~np.all(ctrl[slots[:, None], self.actuators] == self._solved[slots], axis=1))
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
        assert self.chain is not None  # (bound: its robot has slots)
        q, pos_err, rot_err = solve_ik_restarts(self.chain, start, position, rotation, weight, rest, self.params)
        ctrl[slots[:, None], self.actuators] = q
        self._solved[slots] = q
        self.target_world[slots] = world
        self.target_pos[slots] = position
        self.target_rot[slots] = rotation
        self.rot_weight[slots] = weight
        self.has_target[slots] = True
        self.success[slots] = (pos_err <= self.params.success_position) & (rot_err <= self.params.success_rotation)
        self._last[slots] = batch

    def get_obs(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        kernel = self._observe_kernel
        if kernel is not None:
            # One compiled pass over the robot's packed poses (of the step's one forward kinematics).
            poses = self.robot.frame_poses(self.chain, self.columns, slots)
            k = len(slots)
            position, orientation, finished = np.empty((k, 3)), np.empty((k, 4)), np.empty(k, dtype=bool)
            # A fresh (writable) index array: the runner's slot arrays are read-only, and numba would
            # compile a second signature for one.
            kernel(poses, np.array(slots, dtype=np.intp), self.target_world, self.has_target, self.threshold,
                   position, orientation, finished)
            success = self.success.copy() if k == self.env_num else self.success[slots]
            return {'eef_position': position, 'eef_orientation': orientation, 'success': success, 'finished': finished}
        position, orientation = self.robot.frame_pose(self.chain, self.columns, slots)
        # Slots are sorted ids: as many as there are envs are every slot, the arrays as they are.
        every = len(slots) == self.env_num
        offset = position - (self.target_world if every else self.target_world[slots])
        distance = np.sqrt(np.einsum('ki,ki->k', offset, offset))
        return {
            'eef_position': position,
            'eef_orientation': orientation,
            'success': self.success.copy() if every else self.success[slots],
            'finished': (self.has_target if every else self.has_target[slots]) & (distance < self.threshold),
        }

    def reset(self, slots: np.ndarray) -> None:
        super().reset(slots)
        self.has_target[slots] = False
        self.success[slots] = False
        self._last[slots] = np.nan


def parse_rows(actions: Any) -> np.ndarray:
    """The array API's IK actions ``(k, 7)`` (position, wxyz) validated and parsed as
    :meth:`InverseKinematicsController.parse_batch` returns them: ``(k, 8)`` rows of position,
    unit wxyz, mode (:data:`POSE`). The numpy reference of the compiled ``_parse_rows``."""
    rows = as_float_array(actions, (-1, 7), 'arm IK actions (rows of position (3,), orientation wxyz (4,))')
    out = np.empty((len(rows), 8))
    out[:, :7] = rows
    quats = rows[:, 3:]
    norms = np.sqrt(np.einsum('ki,ki->k', quats, quats))
    if np.any(norms < _MIN_NORM):
        raise ValueError(f'arm IK orientation (wxyz) must be a nonzero quaternion; row {int(np.argmin(norms))} is {rows[np.argmin(norms), 3:].tolist()}')
    out[:, 3:7] /= norms[:, None]
    out[:, _MODE] = POSE
    return out


def _parse_rows(rows, out):  # pragma: no cover - compiled
    """Compiled twin of :func:`parse_rows` for a C-contiguous float64 ``(k, 7)`` array: fills
    ``out`` ``(k, 8)`` and returns True, or returns False at the first row that is not finite or
    has a zero quaternion (the caller then runs :func:`parse_rows` for its error)."""
    for row in range(rows.shape[0]):
        for i in range(7):
            value = rows[row, i]
            if not np.isfinite(value):
                return False
            out[row, i] = value
        norm = np.sqrt(rows[row, 3] * rows[row, 3] + rows[row, 4] * rows[row, 4] + rows[row, 5] * rows[row, 5]
                       + rows[row, 6] * rows[row, 6])
        if norm < _MIN_NORM:
            return False
        for i in range(3, 7):
            out[row, i] /= norm
        out[row, _MODE] = POSE
    return True


_parse_kernel = Kernel(_parse_rows)


def _observe_rows(poses, slots, target_world, has_target, threshold, out_pos, out_quat, finished):  # pragma: no cover - compiled
    """Compiled twin of the numpy part of :meth:`InverseKinematicsController.get_obs`: from the
    packed poses ``(k, 16)`` of ``slots``, the positions, orientations and whether each slot has a
    target within ``threshold`` metres."""
    for row in range(poses.shape[0]):
        s = slots[row]
        squared = 0.0
        for i in range(3):
            out_pos[row, i] = poses[row, i]
            d = poses[row, i] - target_world[s, i]
            squared += d * d
        for i in range(4):
            out_quat[row, i] = poses[row, 3 + i]
        finished[row] = has_target[s] and np.sqrt(squared) < threshold


_observe_kernel = Kernel(_observe_rows)


def _unit_quat(quat: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(quat))
    if norm < _MIN_NORM:
        raise ValueError(f'arm IK orientation (wxyz) must be a nonzero quaternion; got {quat.tolist()}')
    return quat / norm
