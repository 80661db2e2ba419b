"""Batched kinematics of a serial chain: forward kinematics and damped-least-squares IK, all slots at once.

A :class:`SerialChain` is read once from a pack's model lookup (``pack.lookup.chain(base, frame)``:
the bodies from a base body down to an end frame, each with at most one hinge or slide joint),
frozen, and shared by every slot of a pack.
:func:`forward_kinematics` and :func:`solve_ik` then work on ``(k, n)`` joint arrays in the base
body's frame. They follow MuJoCo's own kinematics (``mj_kinematics``: a hinge turns its body about
the joint anchor by ``q - qpos0``; a slide moves it along the axis) and its Jacobians
(``mj_jac``: a hinge's column is ``axis x (point - anchor)`` and ``axis``, a slide's ``axis`` and
0); ``tests/test_franka.py`` checks both against MuJoCo's ``mj_kinematics``/``mj_jacSite``.

IK is damped least squares with a null-space pull towards a rest posture: per iteration,
``dq = J^T (J J^T + lambda^2 I)^-1 e + (I - J^+ J) k (q_rest - q)``, scaled so no joint moves more
than ``max_step`` radians, then clipped to the joint limits. ``e`` stacks the position error and the
orientation error (the rotation vector of ``R_target R^T``). Each row stops when its errors are
below the tolerances. With numba (:mod:`internutopia.core.util.jit`) each row runs in compiled code;
otherwise the same math runs in numpy over the rows still iterating.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from internutopia.core.backend.model import ChainRecord, JointType
from internutopia_extension.controllers.kinematics_kernel import fk_kernel as _fk_kernel
from internutopia_extension.controllers.kinematics_kernel import ik_kernel as _ik_kernel
from internutopia_extension.controllers.rotations import axis_angle_mat, mat_to_quat, quat_to_mat, rotation_error

if TYPE_CHECKING:
    from internutopia.core.backend.interface import ModelLookup

HINGE, SLIDE = 0, 1
#: Damping of the null-space projector: small, so the posture pull leaks next to nothing into the
#: task (with the IK's own damping it would leave a residual error of a fraction of a millimetre).
_PROJECTOR_DAMPING = 1e-4


@dataclass(frozen=True)
class IKParams:
    """Settings of :func:`solve_ik` (units: metres and radians)."""

    damping: float = 0.02
    max_step: float = 0.25
    nullspace_gain: float = 0.05
    max_iterations: int = 100
    position_tolerance: float = 1e-4
    rotation_tolerance: float = 1e-3
    #: A solve counts as a success when it ends this close (m, rad); farther rows are retried.
    success_position: float = 1e-3
    success_rotation: float = 1e-2
    #: Random start postures :func:`solve_ik_restarts` tries last.
    random_seeds: int = 4
    #: A row short of the tolerances stops when its error (metres, plus 0.1 m per radian) fell by
    #: less than ``stall_gain`` of itself over the last ``stall_iterations`` iterations (counted in
    #: blocks from the first): it sits in a local minimum or reaches for a target out of reach, and
    #: the rest of ``max_iterations`` would gain it little (a row that converges gains far more in
    #: that many iterations). Over the Franka ids' workspace the same rows succeed as without it and
    #: the others end a few millimetres at most farther off (``tests/test_franka.py``), in half the
    #: time (``python -m internutopia.bench.franka_ik``). ``stall_iterations=0`` runs every row to
    #: the tolerances or ``max_iterations``.
    stall_iterations: int = 10
    stall_gain: float = 0.01


@dataclass(frozen=True)
class SerialChain:
    """Addresses and constants of the bodies from a base body down to an end frame.

    Arrays have one row per body after the base (``body_pos``/``body_quat``: pose in the parent,
    ``body_joint``: index of the body's joint in the chain's joints or -1) and one row per joint
    (``joint_*``; ``qposadr`` into the model's ``qpos``). ``frame_pos``/``frame_quat`` place the end
    frame (a site, or the last body itself) in the last body.
    """

    body_pos: np.ndarray
    body_quat: np.ndarray
    body_rot: np.ndarray
    body_joint: np.ndarray
    joint_type: np.ndarray
    joint_axis: np.ndarray
    joint_pos: np.ndarray
    joint_ref: np.ndarray
    qposadr: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    frame_pos: np.ndarray
    frame_quat: np.ndarray
    frame_rot: np.ndarray
    fk_table: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Derived once per chain (frozen): what the compiled forward kinematics reads.
        object.__setattr__(self, 'fk_table', fold_chain(self))

    @property
    def size(self) -> int:
        """Number of joints."""
        return len(self.joint_type)

    @classmethod
    def from_model(cls, lookup: ModelLookup, base_body: str, frame: str) -> SerialChain:
        """The chain from body ``base_body`` to ``frame`` (a site name, else a body name) of the
        model ``lookup`` answers for (a pack's ``lookup``).

        Raises ``ValueError`` naming the frame when it is not below the base, or when a body on the
        way has a joint that is neither a hinge nor a slide, or more than one.
        """
        return cls.from_record(lookup.chain(base_body, frame))

    @classmethod
    def from_record(cls, record: ChainRecord) -> SerialChain:
        """The chain of a backend's :class:`~internutopia.core.backend.model.ChainRecord` (its
        arrays copied: the compiled kinematics take writable arrays)."""
        return cls(
            body_pos=record.body_pos.copy(),
            body_quat=record.body_quat.copy(),
            body_rot=quat_to_mat(record.body_quat),
            body_joint=record.body_joint.astype(np.intp),
            joint_type=np.where(record.joint_type == JointType.SLIDE, SLIDE, HINGE).astype(np.intp),
            joint_axis=record.joint_axis.copy(),
            joint_pos=record.joint_pos.copy(),
            joint_ref=record.joint_ref.copy(),
            qposadr=record.qposadr.astype(np.intp),
            lower=record.lower.copy(),
            upper=record.upper.copy(),
            frame_pos=record.frame_pos.copy(),
            frame_quat=record.frame_quat.copy(),
            frame_rot=quat_to_mat(record.frame_quat),
        )


def fold_chain(chain: SerialChain) -> np.ndarray:
    """The chain as ``(n + 1, 16)`` rows for the compiled forward kinematics: row ``j`` holds the
    constant transform from the previous joint's frame to joint ``j``'s (rotation, row-major 9, then
    translation 3), joint ``j``'s type (0 hinge, 1 slide), reference position and slide scale (the
    length of its axis), and 1.0 where the rotation turns about x; the last row the transform from
    the last joint's frame to the end frame (and its flag).

    A joint's frame sits at its anchor, turned so that the joint's axis is its z axis: a hinge is
    then ``Rz(q - ref)`` and a slide ``Tz(scale (q - ref))``, and each body's own offset and
    rotation, the anchors and the end frame are folded into the constants in between, so that the
    pose is ``B C_0 J_0 C_1 J_1 ... C_n`` (``B`` the base's pose).
    """
    n = chain.size
    table = np.zeros((n + 1, 16))
    pos, rot = np.zeros(3), np.eye(3)  # the constant part since the last joint's frame
    for b in range(len(chain.body_pos)):
        pos, rot = pos + rot @ chain.body_pos[b], rot @ chain.body_rot[b]
        j = chain.body_joint[b]
        if j < 0:
            continue
        length = float(np.linalg.norm(chain.joint_axis[j]))
        turn = _z_onto(chain.joint_axis[j] / length)
        pos, rot = pos + rot @ chain.joint_pos[j], rot @ turn
        table[j, :9], table[j, 9:12] = rot.ravel(), pos
        table[j, 12:15] = chain.joint_type[j], chain.joint_ref[j], length if chain.joint_type[j] == SLIDE else 1.0
        table[j, 15] = _about_x(rot)
        # After the joint: turned back, and from the anchor back to the body's origin.
        pos, rot = -turn.T @ chain.joint_pos[j], turn.T
    pos, rot = pos + rot @ chain.frame_pos, rot @ chain.frame_rot
    table[n, :9], table[n, 9:12] = rot.ravel(), pos
    table[n, 15] = _about_x(rot)
    return table


def _about_x(rot: np.ndarray) -> float:
    """1.0 when ``rot`` turns about the x axis (to rounding; the kernel then reads only its cosine
    ``rot[1, 1]`` and sine ``rot[2, 1]``, a quarter of a general product), else 0.0."""
    return float(np.allclose(rot[0], (1.0, 0.0, 0.0), rtol=0.0, atol=1e-12)
                 and np.allclose(rot[:, 0], (1.0, 0.0, 0.0), rtol=0.0, atol=1e-12))


def _z_onto(axis: np.ndarray) -> np.ndarray:
    """A rotation matrix taking the z axis onto the unit ``axis`` (the identity when they agree,
    so that chains whose joints turn about z keep exact constants)."""
    if np.allclose(axis, (0.0, 0.0, 1.0), rtol=0.0, atol=1e-15):
        return np.eye(3)
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, axis)
    x /= np.linalg.norm(x)
    return np.stack([x, np.cross(axis, x), axis], axis=1)


# ------------------------------------------------------------------------------------------------
# numpy reference
def forward_kinematics(chain: SerialChain, q: np.ndarray, jacobian: bool = False):
    """End-frame positions ``(k, 3)`` and rotation matrices ``(k, 3, 3)`` in the base frame.

    With ``jacobian`` also the ``(k, 6, n)`` Jacobian (rows: linear, then angular; base axes).
    """
    q = np.asarray(q, dtype=float)
    k = len(q)
    pos = np.zeros((k, 3))
    rot = np.broadcast_to(np.eye(3), (k, 3, 3)).copy()
    anchors = np.zeros((k, chain.size, 3))
    axes = np.zeros((k, chain.size, 3))
    for b in range(len(chain.body_pos)):
        pos = pos + rot @ chain.body_pos[b]
        rot = rot @ chain.body_rot[b]
        j = chain.body_joint[b]
        if j < 0:
            continue
        axis_w = rot @ chain.joint_axis[j]
        anchor = pos + rot @ chain.joint_pos[j]
        anchors[:, j], axes[:, j] = anchor, axis_w
        amount = q[:, j] - chain.joint_ref[j]
        if chain.joint_type[j] == HINGE:
            rot = rot @ axis_angle_mat(chain.joint_axis[j] / np.linalg.norm(chain.joint_axis[j]), amount)
            pos = anchor - rot @ chain.joint_pos[j]
        else:
            pos = pos + axis_w * amount[:, None]
    pos = pos + rot @ chain.frame_pos
    rot = rot @ chain.frame_rot
    if not jacobian:
        return pos, rot
    jac = np.zeros((k, 6, chain.size))
    hinge = chain.joint_type == HINGE
    jac[:, :3, hinge] = np.swapaxes(np.cross(axes[:, hinge], pos[:, None, :] - anchors[:, hinge]), 1, 2)
    jac[:, 3:, hinge] = np.swapaxes(axes[:, hinge], 1, 2)
    jac[:, :3, ~hinge] = np.swapaxes(axes[:, ~hinge], 1, 2)
    return pos, rot, jac


def _solve_ik_numpy(chain: SerialChain, q: np.ndarray, target_pos: np.ndarray, target_rot: np.ndarray,
                    rot_weight: np.ndarray, rest: np.ndarray, params: IKParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = q.copy()
    pos_err = np.zeros(len(q))
    rot_err = np.zeros(len(q))
    rows = np.arange(len(q))
    eye = np.eye(6) * params.damping ** 2
    eye_ns = np.eye(6) * _PROJECTOR_DAMPING ** 2
    window = int(params.stall_iterations)
    checkpoint = np.zeros(len(q))  # each row's error at the start of its current block of `window` iterations
    for it in range(params.max_iterations + 1):
        pos, rot, jac = forward_kinematics(chain, q[rows], jacobian=True)
        e_pos = target_pos[rows] - pos
        e_rot = rotation_error(target_rot[rows], rot) * rot_weight[rows, None]
        pos_err[rows] = np.linalg.norm(e_pos, axis=-1)
        rot_err[rows] = np.linalg.norm(e_rot, axis=-1)
        going = (pos_err[rows] > params.position_tolerance) | (rot_err[rows] > params.rotation_tolerance)
        if window > 0 and it % window == 0:
            combined = pos_err[rows] + rot_err[rows] * _ROTATION_METRES
            if it > 0:
                going &= combined <= (1.0 - params.stall_gain) * checkpoint[rows]
            checkpoint[rows] = combined
        if it == params.max_iterations or not np.any(going):
            break
        rows, e_pos, e_rot, jac = rows[going], e_pos[going], e_rot[going], jac[going]
        jac[:, 3:] *= rot_weight[rows, None, None]
        error = np.concatenate([e_pos, e_rot], axis=-1)
        jac_t = np.swapaxes(jac, 1, 2)
        jjt = jac @ jac_t
        pull = params.nullspace_gain * (rest[rows] - q[rows])
        step = np.linalg.solve(jjt + eye, error[..., None])[..., 0]
        leak = np.linalg.solve(jjt + eye_ns, np.einsum('kij,kj->ki', jac, pull)[..., None])[..., 0]
        dq = np.einsum('kij,kj->ki', jac_t, step - leak) + pull
        biggest = np.max(np.abs(dq), axis=-1)
        scale = np.where(biggest > params.max_step, params.max_step / np.maximum(biggest, 1e-12), 1.0)
        q[rows] = np.clip(q[rows] + dq * scale[:, None], chain.lower, chain.upper)
    return q, pos_err, rot_err


# ------------------------------------------------------------------------------------------------
# the compiled twin (internutopia_extension/controllers/kinematics_kernel.py) and the public entry points


def _kernel_args(chain: SerialChain) -> tuple:
    return (chain.body_pos, chain.body_rot, chain.body_joint, chain.joint_type, chain.joint_axis, chain.joint_pos,
            chain.joint_ref, chain.lower, chain.upper, chain.frame_pos, chain.frame_rot)


def fk_frames(chain: SerialChain, joints: np.ndarray, columns: np.ndarray, base: np.ndarray,
              slots: np.ndarray) -> np.ndarray:
    """End-frame poses ``(k, 16)`` of the rows ``slots`` (``k``), compiled when possible: per row
    the position (3), the wxyz orientation (4, ``w >= 0``) and the rotation matrix (9, row-major)
    in the frame the chain's base sits in.

    ``joints`` ``(k, m)``: a row per slot, the chain's joint ``j`` in column ``columns[j]``;
    ``base`` ``(e, 12)``: base poses (rotation row-major 9, position 3), row ``slots[i]`` for row
    ``i``. The step's path: one compiled call of six arguments, with no gathers or copies before
    it, so pass ``joints`` and ``base`` C-contiguous float64 and ``columns``/``slots`` as intp (other
    layouts work, each at the cost of another compile).
    """
    out = np.empty((len(slots), 16))
    kernel = _fk_kernel.compiled_or(None)
    if kernel is not None:
        kernel(chain.fk_table, columns, joints, slots, base, out)
        return out
    pos, rot = forward_kinematics(chain, np.asarray(joints, dtype=float)[:, columns])
    base = np.asarray(base, dtype=float)[slots]
    base_rot = base[:, :9].reshape(-1, 3, 3)
    rot = base_rot @ rot
    out[:, :3] = base[:, 9:] + np.einsum('kij,kj->ki', base_rot, pos)
    out[:, 3:7] = mat_to_quat(rot)
    out[:, 7:] = rot.reshape(-1, 9)
    return out


def pack_base(base_pos: np.ndarray, base_rot: np.ndarray) -> np.ndarray:
    """Base poses ``(k, 12)`` as :func:`fk_frames` reads them, from positions ``(k, 3)`` and
    rotation matrices ``(k, 3, 3)``."""
    base_pos, base_rot = np.asarray(base_pos, dtype=float), np.asarray(base_rot, dtype=float)
    return np.concatenate([base_rot.reshape(len(base_rot), 9), base_pos], axis=1)


def fk(chain: SerialChain, q: np.ndarray, base_pos: np.ndarray | None = None, base_rot: np.ndarray | None = None,
       rotation: bool = False) -> tuple[np.ndarray, ...]:
    """End-frame positions ``(k, 3)`` and wxyz orientations ``(k, 4)`` (``w >= 0``), compiled when possible;
    with ``rotation`` also the rotation matrices ``(k, 3, 3)``.

    In the base frame, or, with the base's poses ``base_pos`` ``(k, 3)`` and ``base_rot``
    ``(k, 3, 3)``, in the frame the base sits in (a slot's env-local frame). (The step's path is
    :func:`fk_frames`, which takes packed arrays.)
    """
    q = _kernel_array(q)
    k = len(q)
    if base_pos is None:
        base = np.zeros((k, 12))
        base[:, [0, 4, 8]] = 1.0
    elif base_rot is None:
        raise ValueError('fk: base_pos needs base_rot (the base rotation matrices, (k, 3, 3))')
    else:
        base = pack_base(base_pos, base_rot)
    out = fk_frames(chain, q, np.arange(chain.size, dtype=np.intp), base, np.arange(k, dtype=np.intp))
    pos, quat = out[:, :3].copy(), out[:, 3:7].copy()
    return (pos, quat, out[:, 7:].reshape(k, 3, 3).copy()) if rotation else (pos, quat)


def _kernel_array(array: np.ndarray) -> np.ndarray:
    """``array`` as the kernel's one array type (C-contiguous, writable float64), copied only if need be.

    numba compiles one machine-code version per argument type, and a read-only or strided array
    is another type: without this, a broadcast view would cost a second compile of seconds.
    """
    return np.require(array, dtype=np.float64, requirements=['C', 'W'])


def solve_ik(chain: SerialChain, q0: np.ndarray, target_pos: np.ndarray, target_rot: np.ndarray,
             rot_weight: np.ndarray, rest: np.ndarray, params: IKParams = IKParams()) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Joint positions ``(k, n)`` reaching the targets from ``q0``, and the final position and rotation errors.

    ``target_pos`` ``(k, 3)`` and ``target_rot`` ``(k, 3, 3)`` are in the base frame;
    ``rot_weight`` ``(k,)`` is 1 where the orientation counts and 0 for position-only rows;
    ``rest`` ``(k, n)`` is the posture the null space leans towards.
    """
    q = np.clip(np.array(q0, dtype=float), chain.lower, chain.upper)
    target_pos, target_rot, rot_weight, rest = (_kernel_array(a) for a in (target_pos, target_rot, rot_weight, rest))
    if not _ik_kernel.available:
        return _solve_ik_numpy(chain, q, target_pos, target_rot, rot_weight, rest, params)
    k = len(q)
    pos_err, rot_err = np.zeros(k), np.zeros(k)
    _ik_kernel(*_kernel_args(chain), q, target_pos, target_rot, rot_weight, rest, float(params.damping),
               float(params.max_step), float(params.nullspace_gain), int(params.max_iterations),
               float(params.position_tolerance), float(params.rotation_tolerance), _PROJECTOR_DAMPING,
               int(params.stall_iterations), float(params.stall_gain), _ROTATION_METRES, pos_err, rot_err)
    return q, pos_err, rot_err


def warm_ik(chain: SerialChain, params: IKParams = IKParams()) -> None:
    """Compile (or load from numba's cache) the IK kernel for ``chain``'s argument types now, with
    no rows to solve, so a first run's compile (about ten seconds) happens when the controller
    binds, logged, rather than silently in the first step."""
    n = chain.size
    empty = np.zeros((0, n))
    _ik_kernel.warm(*_kernel_args(chain), empty, np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros(0), empty.copy(),
                    float(params.damping), float(params.max_step), float(params.nullspace_gain), int(params.max_iterations),
                    float(params.position_tolerance), float(params.rotation_tolerance), _PROJECTOR_DAMPING,
                    int(params.stall_iterations), float(params.stall_gain), _ROTATION_METRES, np.zeros(0), np.zeros(0))


def restart_seeds(chain: SerialChain, position: np.ndarray, rest: np.ndarray, count: int):
    """Start postures ``(k, n)`` to retry from, in order, for rows a warm start left far off.

    The rest posture with the first joint turned towards the target (when that joint turns about
    the base's vertical axis, as an arm's base joint does), the rest posture, then ``count``
    postures drawn within the joint limits: the same draws every time and for every row, so a
    row's answer never depends on how many rows are solved with it or where it sits among them
    (the same target gives a Franka the same joints at any ``env_num``, in any slot).
    """
    turns, drawn = _seed_plan(chain, count)
    if turns:
        turned = rest.copy()
        turned[:, 0] = np.clip(np.arctan2(position[:, 1], position[:, 0]), chain.lower[0], chain.upper[0])
        yield turned
    yield rest
    for posture in drawn:
        yield np.broadcast_to(posture, np.shape(rest))


#: ``(chain, turns, draws)`` by ``(id(chain), count)``: what :func:`restart_seeds` needs of a chain,
#: found once (a solve restarts a few rows on most steps of a Franka id).
_SEED_PLANS: dict[tuple[int, int], tuple[SerialChain, bool, np.ndarray]] = {}
_SEED_PLANS_KEPT = 256


def _seed_plan(chain: SerialChain, count: int) -> tuple[bool, np.ndarray]:
    """Whether ``chain``'s first joint turns about the base's vertical axis, and ``(count, n)``
    random postures within its limits: the draws of a generator seeded 0 (kept read-only; a
    caller gets the same array again)."""
    key = (id(chain), count)
    plan = _SEED_PLANS.get(key)
    if plan is not None and plan[0] is chain:
        return plan[1], plan[2]
    turns = bool(chain.body_joint[0] == 0 and np.allclose(chain.body_rot[0], np.eye(3))
                 and np.allclose(chain.joint_axis[0], (0, 0, 1)))
    drawn = np.random.default_rng(0).uniform(chain.lower, chain.upper, size=(count, chain.size))
    drawn.flags.writeable = False
    if len(_SEED_PLANS) >= _SEED_PLANS_KEPT:
        _SEED_PLANS.clear()
    _SEED_PLANS[key] = (chain, turns, drawn)
    return turns, drawn


#: Metres an orientation error of one radian counts as, when two solutions are compared.
_ROTATION_METRES = 0.1


def solve_ik_restarts(chain: SerialChain, start: np.ndarray, target_pos: np.ndarray, target_rot: np.ndarray,
                      rot_weight: np.ndarray, rest: np.ndarray,
                      params: IKParams = IKParams()) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`solve_ik` from ``start``, then, for the rows that did not succeed, from the
    :func:`restart_seeds` in turn, keeping each row's best answer. A warm start can sit in a poor
    local minimum after a large change of target; most such rows succeed from the first seeds.
    """
    rest = np.ascontiguousarray(np.broadcast_to(rest, np.shape(start)), dtype=float)
    q, pos_err, rot_err = solve_ik(chain, start, target_pos, target_rot, rot_weight, rest, params)
    for seed in restart_seeds(chain, np.asarray(target_pos), rest, params.random_seeds):
        stuck = np.flatnonzero((pos_err > params.success_position) | (rot_err > params.success_rotation))
        if not len(stuck):
            break
        again = solve_ik(chain, seed[stuck], target_pos[stuck], target_rot[stuck], rot_weight[stuck], rest[stuck], params)
        better = again[1] + again[2] * _ROTATION_METRES < pos_err[stuck] + rot_err[stuck] * _ROTATION_METRES
        rows = stuck[better]
        q[rows], pos_err[rows], rot_err[rows] = again[0][better], again[1][better], again[2][better]
    return q, pos_err, rot_err


__all__ = ['IKParams', 'SerialChain', 'fk', 'fk_frames', 'fold_chain', 'forward_kinematics', 'mat_to_quat', 'pack_base', 'quat_to_mat', 'restart_seeds', 'rotation_error', 'solve_ik',
           'solve_ik_restarts', 'warm_ik']
