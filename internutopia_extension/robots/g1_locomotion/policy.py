"""Holosoma's G1-29DoF velocity policy, batched over robots: one onnxruntime call per control step.

The shipped ONNX graphs declare a batch of 1 on their inputs and outputs; :func:`dynamic_batch_onnx`
makes that dimension symbolic with the ``onnx`` package (the network itself is batch agnostic),
so one ``InferenceSession.run`` serves every robot.

The network (about 28 MFLOP for 64 robots) runs on one onnxruntime thread, so a robot's actions
never depend on the other robots in the call (:mod:`~internutopia_extension.robots.onnx_threads`);
``intra_op_threads=2`` asks for a second thread, which on some hosts makes large batches faster
(64 G1s went from 0.82 to 0.85 of the physics limit on an earlier session's 2-core host; a call on
64 rows took 310 us on one thread and 312 on two on a 2-core Intel Xeon) and a row's output
depend on the call's size.
"""

from __future__ import annotations

import json
import math
import pathlib
from collections.abc import Sequence

import numpy as np

from internutopia_extension.robots.g1_locomotion.assets import _parsed_g1, holosoma_policy_path
from internutopia_extension.robots.onnx_threads import load_onnxruntime, policy_session_options

#: Policy period in seconds (Holosoma ``rl_rate = 50`` Hz).
CONTROL_DT = 0.02

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


def dynamic_batch_onnx(raw: bytes) -> bytes:
    """``raw`` (a serialized ONNX model) with the first dimension of every graph input and output
    made symbolic (``"batch"``), serialized again.

    Only the declared I/O shapes pin the batch to 1 in Holosoma's files; the MLP itself is batch
    agnostic, so after this one ``InferenceSession.run`` serves many robots.
    """
    import onnx

    model = onnx.load_from_string(raw)
    for value in (*model.graph.input, *model.graph.output):
        dims = value.type.tensor_type.shape.dim
        if len(dims):
            dims[0].dim_param = 'batch'  # one of dim_value / dim_param: setting this clears the 1
    return model.SerializeToString()


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
            intra_op_threads: onnxruntime intra-op threads (CPU provider); default 1, the one
                count at which a robot's actions do not depend on the other rows of the call.
            gait_period: gait cycle period in seconds (1.0 s in training).
        """
        ort = load_onnxruntime()
        if capacity < 1:
            raise ValueError('capacity must be >= 1')
        path = pathlib.Path(onnx_path) if onnx_path is not None else holosoma_policy_path(name)
        self.onnx_path: pathlib.Path = path
        raw = path.read_bytes()

        options, intra_op_threads = policy_session_options(intra_op_threads)
        #: The intra-op threads one call uses.
        self.intra_op_threads: int = int(intra_op_threads)
        self._session = ort.InferenceSession(
            dynamic_batch_onnx(raw), sess_options=options, providers=['CPUExecutionProvider']
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

    def infer(self, obs: np.ndarray) -> np.ndarray:
        """The network's raw ``(n, 29)`` float32 output for ``(n, 100)`` float32 observations (one
        onnxruntime call; clipping and scaling are :meth:`act`'s)."""
        return self._session.run([self._output_name], {self._input_name: obs})[0]

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
        return {k: (float(lo), float(hi)) for k, lo, hi in zip(keys, self.command_low, self.command_high, strict=True)}

    def clip_command(self, command: np.ndarray) -> np.ndarray:
        """Clip ``(n, 3)`` ``[vx, vy, yaw_rate]`` commands to the trained ranges."""
        clipped = np.maximum(np.asarray(command, dtype=np.float64), self.command_low)  # a new array: clip it in place
        return np.minimum(clipped, self.command_high, out=clipped)

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
        raw = self.infer(obs)
        action = np.clip(raw, -_ACTION_CLIP, _ACTION_CLIP).astype(np.float32)
        self.last_action[rows] = action
        return self.default_joint_pos + self.action_scale * action.astype(np.float64)
