"""Franka Emika Panda arm with its parallel gripper (Menagerie's MJCF, via a PyPI assets package).

The model (:mod:`internutopia_extension.robots.franka_model`) is MuJoCo Menagerie's
``franka_emika_panda`` with InternUtopia's (Isaac Sim's) names, a mocap base, gravity-compensated
links, and a gripper that squeezes with the Franka Hand's grip force. This module steps it:

- Controllers write *goals* into ``ctrl`` (the IK and joint controllers the arm's seven, the
  gripper controller the fingers' opening). :meth:`FrankaRobot.before_physics` turns them into the
  servo targets of the physics step and :meth:`FrankaRobot.begin_step` puts the goals back.
- Each target moves towards its goal at most at the Panda's joint speed limits
  (:data:`ARM_MAX_SPEED`), or the hand's finger speed (:data:`FINGER_SPEED`), per second, and is
  kept within the band its force limit allows at the joint's state: the arm's torque limits
  (87 N m, 12 N m for joints 5-7) and, for the gripper, twice the grip force on the finger tendon
  (which pulls both fingers, each with half). The band also reaches ahead, in the direction the
  joint moves, by its travel over the env step (less one substep), since the target is held over
  the step's physics substeps (franka_model: 1 ms), which catch up with it inside the step. Why
  not MuJoCo's force clamp: it leaves out the
  implicit part of a clamped servo's damping; with target jumps and ``physics_dt = 1/240`` the
  Panda's stiff servos (``kp`` up to 4500 N m/rad) then chattered between their force limits for
  good, and a held object was shaken loose.
- Closing on an object, the finger target runs ahead of the stopped fingers until the band holds
  it: the fingers then press with the grip force (``FrankaRobotCfg.grip_force``, 70 N: the hand's
  continuous force) for as long as the gripper stays closed.

Every episode starts at Menagerie's ``home`` posture (:data:`HOME`) with the gripper open.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from internutopia.core.entity import in_command_phase
from internutopia.core.robot.base import NO_ID, BaseRobot, as_slice
from internutopia.core.util.math import quat_right_matrix
from internutopia_extension.controllers.kinematics import SerialChain, fk_frames, mat_to_quat, quat_to_mat
from internutopia_extension.robots.franka_kernels import (
    ACCELERATION,
    FORCE_OVER_KP,
    KV_OVER_KP,
    LEAD,
    RESTART,
    SPEED,
    STEP,
    _finger_kernel,
    _servo_kernel,
    finger_from_tool,
    servo_targets,
)
from internutopia_extension.robots.franka_model import (
    ARM_JOINTS,
    ARM_MAX_ACCELERATION,
    ARM_MAX_SPEED,
    FINGER_ACCELERATION,
    FINGER_BODIES,
    FINGER_CLOSED,
    FINGER_JOINTS,
    FINGER_OPEN,
    FINGER_SPEED,
    GRIP_FORCE_CONTINUOUS,
    HOME,
    MAX_PHYSICS_DT,
    TCP_OFFSET,
    TCP_SITE,
    panda_spec,
    substep,
)

__all__ = ['ARM_JOINTS', 'ARM_MAX_SPEED', 'FINGER_CLOSED', 'FINGER_JOINTS', 'FINGER_OPEN', 'FINGER_SPEED', 'HOME',
           'TCP_OFFSET', 'TCP_SITE', 'FrankaRobot', 'finger_from_tool', 'servo_targets']
#: Servo columns: the seven arm joints, then the gripper.
_SERVOS = len(ARM_JOINTS) + 1


class FrankaUpstreamMethods:
    """What InternUtopia's Franka has beyond the common robot API, for one slot's Franka: its
    articulation's ``gripper``, Isaac's parallel gripper on the two finger joints, and
    ``end_effector`` (the ``panda_rightfinger`` body, whose pose is the observation's
    ``eef_position``/``eef_orientation``); the robot's ``get_robot_ik_base()`` (``panda_link0``)
    and ``get_last_action()``. The gripper's ``forward('open' | 'close')`` returns the fingers'
    position targets (over all nine joints, the arm's ``None``) without commanding them; applied,
    the fingers' targets drive the gripper servo (their mean: see
    :meth:`FrankaRobot.coupled_position_servos`), as the built-in gripper controller does."""

    _slot_group: Any
    _slot: int
    articulation: Any
    config: Any
    name: str
    _rigid_body_map: dict[str, Any]

    def articulation_parts(self) -> dict[str, Any]:
        group = self._slot_group
        root = (self.config.prim_path or f'/{self.name}').rstrip('/')
        return {'gripper': self.articulation.parallel_gripper(
                    FINGER_JOINTS, [group.gripper_ctrl_open] * 2, [group.gripper_ctrl_closed] * 2),
                'end_effector': self._rigid_body_map[f'{root}/{FINGER_BODIES[1]}']}

    def get_robot_ik_base(self) -> Any:
        """The arm's base body ``panda_link0`` (InternUtopia's IK base of the Franka)."""
        root = (self.config.prim_path or f'/{self.name}').rstrip('/')
        return self._rigid_body_map[f'{root}/panda_link0']

    def get_last_action(self) -> np.ndarray:
        """The joint position targets in force, ``(9,)``: the observation's ``joint_action``
        (InternUtopia's is the list of the last step's articulation actions, as dicts)."""
        group = self._slot_group
        return group.joint_action(np.array([self._slot], dtype=np.intp))[0]


@BaseRobot.register('FrankaRobot')
class FrankaRobot(BaseRobot):
    """A fixed-base Panda; see the module docstring. Observations (per slot)::

        position, orientation        base (panda_link0) pose, env-local, wxyz
        joint_positions/velocities   (9,) the 7 arm joints, then the 2 fingers
        eef_position, eef_orientation  pose of panda_rightfinger (as InternUtopia's Franka reports)
        joint_action                 (9,) the joint position targets in force (arm, then fingers; they
                                     move towards the controllers' goals at ARM_MAX_SPEED, FINGER_SPEED)
        controllers, sensors         per controller / sensor
    """

    base_body = 'panda_link0'
    joint_names = ARM_JOINTS + FINGER_JOINTS
    upstream_methods = FrankaUpstreamMethods
    actuated_joints = ARM_JOINTS
    #: Arm joint posture of a new episode; the IK's null space leans towards it.
    home = HOME
    #: Gripper actuator controls (metres of one finger's opening) of an open and a closed gripper.
    #: Closed aims a finger's travel past closed, so the grip force, not the goal, ends the squeeze.
    gripper_ctrl_open, gripper_ctrl_closed = FINGER_OPEN, FINGER_CLOSED - FINGER_OPEN

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
        #: Per slot: the servos' goals the controllers set (the seven arm joints, then the gripper's
        #: opening) and the servo targets in force, which move towards the goals at the joint speed
        #: limits and the finger speed; ``arm_goal``/``arm_target`` are the arm's columns (views).
        start = np.array([*HOME, FINGER_OPEN])
        self.servo_goal = np.tile(start, (env_num, 1))
        #: Per slot, the servo targets in force and their speeds (``(env_num, 2, 8)``);
        #: ``servo_target`` is a view of the targets.
        self.servo_motion = np.zeros((env_num, 2, _SERVOS))
        self.servo_motion[:, 0] = start
        self.servo_target = self.servo_motion[:, 0]
        self.arm_goal, self.arm_target = self.servo_goal[:, :-1], self.servo_target[:, :-1]
        #: The grip force (N, each finger on the object) and finger speed (m/s) of this robot's config.
        self.grip_force = float(getattr(config, 'grip_force', GRIP_FORCE_CONTINUOUS))
        self.finger_speed = float(getattr(config, 'finger_speed', FINGER_SPEED))
        #: Per servo column (see franka_kernels.SPEED and the rows after it); the gains' rows are
        #: set by bind, from the servos' gains and force limits.
        self._servo_params = np.zeros((7, _SERVOS))
        self._servo_params[SPEED] = [*ARM_MAX_SPEED, self.finger_speed]
        self._servo_params[ACCELERATION] = [*ARM_MAX_ACCELERATION, FINGER_ACCELERATION]
        self._servo_params[FORCE_OVER_KP] = np.inf
        self._servo_params[STEP] = float(sim.physics_dt)
        self._physics_dt = float(sim.physics_dt)
        # The grip holds through fast moves only with short substeps (franka_model: the pads'
        # friction time constant): the config's physics_substep, 1 ms by default.
        self.max_physics_dt = getattr(config, 'physics_substep', MAX_PHYSICS_DT)
        self._servo_params[RESTART, -1] = 1.0  # the gripper (see franka_kernels.RESTART)
        self.arm_dofadr = np.zeros(len(ARM_JOINTS), dtype=np.intp)
        #: Actuator, qpos and dof addresses of the servos (the gripper's: its tendon's first finger).
        self._servo_columns = np.zeros((3, _SERVOS), dtype=np.intp)
        # The same addresses as slices where they are consecutive (they are in the Panda's model).
        self._servo_slices: tuple[Any, Any, Any] = (self._servo_columns[0], self._servo_columns[1], self._servo_columns[2])
        self._joint_qposadr = np.concatenate([self.arm_qposadr, self.finger_qposadr])
        self._joint_columns: Any = self._joint_qposadr
        self._servo_kernel: Any = None

    def coupled_position_servos(self) -> dict[int, tuple[str, ...]]:
        """The gripper servo drives both finger joints (on their coupling tendon, whose length is
        their mean): position targets given to the fingers (Isaac's gripper gives both one, and
        InternManip's nine-value joint action ends with them) set its goal to their mean, the
        opening of one finger (m; ``gripper_ctrl_closed``, past closed, squeezes with the grip force)."""
        return {self.gripper_actuator: tuple(FINGER_JOINTS)}

    def build_spec(self) -> mujoco.MjSpec:
        return panda_spec(self.base_body, self._physics_dt, self.max_physics_dt)

    def bind(self, world, slots) -> None:
        # The arm's addresses first: binding the controllers (in super().bind) reads them.
        model = world.model
        if len(slots):
            joint_adr = lambda names: np.array([model.joint(self.full_name(n)).qposadr[0] for n in names], dtype=np.intp)
            dof_adr = lambda names: np.array([model.joint(self.full_name(n)).dofadr[0] for n in names], dtype=np.intp)
            self.mocap_index = int(model.body_mocapid[model.body(self.full_name(self.base_body)).id])
            self.arm_qposadr = joint_adr(ARM_JOINTS)
            self.finger_qposadr = joint_adr(FINGER_JOINTS)
            self.arm_dofadr = dof_adr(ARM_JOINTS)
            self.arm_actuators = np.array([model.actuator(self.full_name(n)).id for n in ARM_JOINTS], dtype=np.intp)
            self.gripper_actuator = int(model.actuator(self.full_name('gripper')).id)
            servos = np.append(self.arm_actuators, self.gripper_actuator)
            kp, kv = model.actuator_gainprm[servos, 0], -model.actuator_biasprm[servos, 2]
            # The arm's torque limits (Menagerie's force ranges); the gripper's tendon pulls both
            # fingers, each with half its force: twice the grip force.
            force = np.append(model.actuator_forcerange[self.arm_actuators, 1], 2.0 * self.grip_force)
            self._servo_params[KV_OVER_KP], self._servo_params[FORCE_OVER_KP] = kv / kp, force / kp
            # When an env step runs in substeps, the band also reaches ahead by the joint's travel
            # over the step (less a substep): a target held for many substeps is caught up with
            # inside the step, and a band around the state at its start let the joint crawl
            # (about 0.3 rad/s at 1/60 s).
            self._servo_params[LEAD] = self._physics_dt - substep(self._physics_dt, self.max_physics_dt)
            self._servo_columns = np.stack([servos, np.append(self.arm_qposadr, self.finger_qposadr[0]),
                                            np.append(self.arm_dofadr, dof_adr(FINGER_JOINTS[:1]))])
            self._servo_slices = (as_slice(self._servo_columns[0]), as_slice(self._servo_columns[1]),
                                  as_slice(self._servo_columns[2]))
            self._joint_qposadr = np.concatenate([self.arm_qposadr, self.finger_qposadr])
            self._joint_columns = as_slice(self._joint_qposadr)
            # The compiled servo pass gathers its slots' rows itself: any subset of slots, in any order.
            self._servo_kernel = _servo_kernel.compiled_or(None)
            data = world.data
            _servo_kernel.warm(data.ctrl, data.qpos, data.qvel, np.zeros(0, dtype=np.intp), self._servo_columns,
                               self.servo_goal, self.servo_motion, self._servo_params)
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
        start = np.array([*HOME, FINGER_OPEN])
        data.ctrl[rows, self._servo_columns[0]] = start
        self.servo_goal[slots] = start
        self.servo_motion[slots] = [start, np.zeros(_SERVOS)]

    # -- stepping: goals -> servo targets at the joint speed limits and the finger speed ----------
    def _index(self, slots: np.ndarray) -> tuple[Any, Any, Any, Any, Any]:
        """``(rows, own, actuators, qpos, dofs)``: indices of ``slots``' rows in ``(env_num, ...)``
        arrays (``rows`` beside column indices, ``own`` alone) and of the servos' columns. For every
        slot they are slices where they can be (views and block copies instead of gathers)."""
        if len(slots) == self.env_num:
            return (slice(None), slice(None), *self._servo_slices)
        columns = self._servo_columns
        return slots[:, None], slots, columns[0], columns[1], columns[2]

    def servo_targets_applied(self, slot: int, actuators: np.ndarray) -> None:
        """Told by a slot's articulation (InternUtopia's ``apply_action``, the gripper's
        ``open()``/``close()``) that it wrote targets of ``actuators`` in ``slot``: they become
        the servos' goals, as a controller's command does, and stay until a later command (a
        controller's, another action) replaces them or the episode ends; the targets move towards
        them at the joint speed limits. Written in a step's command phase, where ``ctrl`` holds
        the goals, they are that already; written between steps, where it holds the targets in
        force, :meth:`begin_step` would put the old goals back over them without this. (An IK
        command repeated after them is solved again: the IK skips a repeat only while its
        solution is still the goals in force.)"""
        actuators = np.asarray(actuators, dtype=np.intp)
        servos = self._servo_columns[0]
        columns = np.flatnonzero(np.isin(servos, actuators))
        if not len(columns):
            return
        self.servo_goal[slot, columns] = self.bound_world.data.ctrl[slot, servos[columns]]

    def begin_step(self) -> None:
        """Put the servos' goals into ``ctrl``: controllers read them there (the IK's warm start)
        and write new ones."""
        slots, world = self.slots, self.world
        if len(slots):
            assert world is not None  # bound: it has slots
            rows, own, actuators, _, _ = self._index(slots)
            world.data.ctrl[rows, actuators] = self.servo_goal[own]

    def servo_goals(self, slot: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The actuator ids and goals in force of ``slot``'s servos where ``ctrl`` holds other
        values (between steps: the targets on their way to the goals), for a slot's articulation's
        ``get_applied_action`` (InternUtopia's targets are the goals); ``None`` in a step's command
        phase, where ``ctrl`` holds the goals."""
        if in_command_phase():  # (from begin_step to before_physics ctrl holds the goals)
            return None
        return self._servo_columns[0], self.servo_goal[slot]

    def before_physics(self) -> None:
        """Keep the goals the controllers left in ``ctrl``; give the servos targets moved towards
        them by at most their speed limit times the physics step, and within their force limits
        at the joints' state (:func:`~internutopia_extension.robots.franka_kernels.servo_targets`)."""
        slots, world = self.slots, self.world
        if not len(slots):
            return
        assert world is not None  # bound: it has slots
        data = world.data
        ctrl = data.ctrl
        if self._servo_kernel is not None:
            # One compiled pass over the state in place, whichever slots the group holds.
            self._servo_kernel(ctrl, data.qpos, data.qvel, slots, self._servo_columns, self.servo_goal,
                               self.servo_motion, self._servo_params)
            return
        rows, own, actuators, qpos, dofs = self._index(slots)
        goal = ctrl[rows, actuators]
        self.servo_goal[own] = goal
        motion = self.servo_motion[own]
        servo_targets(goal, motion, self._servo_params, data.qpos[rows, qpos], data.qvel[rows, dofs])
        self.servo_motion[own] = motion
        ctrl[rows, actuators] = motion[:, 0]

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

    def gripper_commanded_open(self, slots: np.ndarray) -> np.ndarray:
        """``(k,)`` bools: the gripper's last command was to open (the fingers may still be on their way)."""
        return self.servo_goal[slots, -1] > 0.5 * (self.gripper_ctrl_open + self.gripper_ctrl_closed)

    def gripper_opened(self, slots: np.ndarray) -> np.ndarray:
        """``(k,)`` bools: the gripper is commanded open and both fingers are (nearly) fully open."""
        world = self.world
        assert world is not None, 'gripper_opened before bind'
        commanded = self.servo_goal[slots, -1] > 0.5 * (self.gripper_ctrl_open + self.gripper_ctrl_closed)
        fingers = world.data.qpos[slots[:, None], self.finger_qposadr]
        return commanded & (fingers.min(axis=1) > 0.9 * FINGER_OPEN)  # (both open; a NaN finger is not)

    def get_obs(self, slots: np.ndarray):
        obs = super().get_obs(slots)
        position, orientation = self.finger_pose(slots, obs['joint_positions'])
        obs['eef_position'] = position
        obs['eef_orientation'] = orientation
        obs['joint_action'] = self.joint_action(slots)
        return obs

    def joint_action(self, slots: np.ndarray) -> np.ndarray:
        """The joint position targets in force for ``slots``, ``(k, 9)``: the arm's, then the fingers' (metres)."""
        assert self.world is not None  # it observes its slots: bound
        ctrl = self.world.data.ctrl
        rows, own, actuators, _, _ = self._index(slots)  # (slices for every slot: no gathers)
        action = np.empty((len(slots), len(ARM_JOINTS) + 2))
        action[:, :-1] = ctrl[rows, actuators]  # the arm's targets, then the fingers' (metres)
        np.clip(action[:, -2], FINGER_CLOSED, FINGER_OPEN, out=action[:, -2])  # (closed aims past 0)
        action[:, -1] = action[:, -2]
        return action


class Franka:
    """InternUtopia's Franka articulation class (Isaac Sim's wrapper of a Panda USD), importable at
    its path for extensions that import it. On MuJoCo the Panda is :class:`FrankaRobot` (config
    type ``'FrankaRobot'``); inside a per-slot robot its articulation is ``self.articulation``, with
    the gripper as ``self.articulation.gripper``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("Franka(prim_path=..., usd_path=...) builds Isaac Sim's articulation of a Panda USD, which "
                        "MuJoCo cannot load: use a FrankaRobotCfg (type 'FrankaRobot'), or subclass FrankaRobot, whose "
                        "per-slot objects have InternUtopia's articulation (self.articulation, self.articulation.gripper)")
