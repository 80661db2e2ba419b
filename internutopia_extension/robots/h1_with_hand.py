"""Unitree H1 with two Inspire dexterous hands (InternUtopia's ``H1WithHandRobot``).

The model is H1's (:mod:`~internutopia_extension.robots.h1`: Menagerie's H1, walking with this
project's trained policy by default) with a hand on each forearm
(:mod:`~internutopia_extension.robots.h1_with_hand_model`; the hands come from the PyPI package
``fourier-robot-descriptions``: ``pip install --no-deps fourier-robot-descriptions``). The hands
add 0.19 kg each, ahead of the body; the walking policy, trained without them, carries them as
it is (``docs/robots.md`` has the measurements with and without hands).

Beyond H1's controllers it offers what an arm needs for the batched IK controller
(:class:`~internutopia_extension.controllers.ik_controller.InverseKinematicsController`): chains
from ``torso_link`` (InternUtopia's IK base) to a frame of the right arm (``right_hand_link``),
the arm's joints and actuators, and the torso's pose. :mod:`~.h1_with_hand_hands` opens and closes
the hands. ``joint_positions`` are H1's 19 body joints (InternUtopia's order), as the
``joint_controller`` drives them; the finger joints are in the hand controller's observation
and, for upstream-style code, in ``robot.articulation`` (:attr:`H1WithHandRobot.articulation_joint_names`).
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from internutopia.core.robot.base import BaseRobot
from internutopia_extension.configs.robots.h1_with_hand import RIGHT_ARM_JOINT_NAMES
from internutopia_extension.controllers.kinematics import SerialChain, fk_frames, pack_base, quat_to_mat
from internutopia_extension.robots import h1_with_hand_hands  # noqa: F401  (registers DexterousHandController)
from internutopia_extension.robots.h1 import H1Robot, H1UpstreamMethods
from internutopia_extension.robots.h1_with_hand_model import HAND_OPEN, SIDES, attach_hands, hand_joint_names

#: The IK chains' base body (InternUtopia's ``get_robot_ik_base``).
IK_BASE = 'torso_link'


class H1WithHandUpstreamMethods(H1UpstreamMethods):
    """InternUtopia's H1-with-hand methods of one slot's robot (beyond H1's: the IK base)."""

    upstream_bodies = {**H1UpstreamMethods.upstream_bodies, '_robot_ik_base': IK_BASE}
    _robot_ik_base: Any

    def get_robot_ik_base(self) -> Any:
        """The torso link (the arms' IK base), as InternUtopia's robot gives it."""
        return self._robot_ik_base


@BaseRobot.register('H1WithHandRobot')
class H1WithHandRobot(H1Robot):
    """H1 with two Inspire hands; see the module docstring."""

    upstream_methods = H1WithHandUpstreamMethods
    #: The joints of the robot's articulation as an upstream-style script sees it
    #: (``robot.articulation.dof_names``): the 19 body joints (``joint_names``, InternUtopia's
    #: order), then the left hand's 12 finger joints and the right hand's (URDF order). InternUtopia's
    #: articulation of its USD robot has the fingers too (in an order its file sets); address them
    #: by name (``get_dof_index``, ``ArticulationSubset``). Only the 6 driven joints of a hand take
    #: position targets; the other 6 follow them (the URDF's couplings) and have no servo.
    articulation_joint_names = [*H1Robot.joint_names, *hand_joint_names('left'), *hand_joint_names('right')]
    #: The IK rest posture of the right arm (H1's standing pose: forearms forward).
    home = np.zeros(len(RIGHT_ARM_JOINT_NAMES))
    #: The IK base (the torso) moves as the robot walks and sways: the IK controller solves a
    #: repeated env-local target again every step rather than keeping its first answer.
    ik_base_moves = True

    def __init__(self, config: Any, env_num: int, sim: Any) -> None:
        super().__init__(config, env_num, sim)
        self._chains: dict[str, tuple[SerialChain, np.ndarray]] = {}
        self._torso: SerialChain | None = None

    def build_spec(self) -> mujoco.MjSpec:
        spec = super().build_spec()
        attach_hands(spec)
        return spec

    def bind(self, world, slots) -> None:
        # Set before the controllers bind (in super().bind): the IK controller reads them.
        self._chains.clear()
        self._torso = None
        if len(slots):
            lookup = world.lookup
            self.arm_qposadr = lookup.joints([self.full_name(n) for n in RIGHT_ARM_JOINT_NAMES]).qposadr.astype(np.intp)
            self.arm_actuators = lookup.ids('actuator', [self.full_name(n) for n in RIGHT_ARM_JOINT_NAMES]).astype(np.intp)
            self._torso = SerialChain.from_model(lookup, self.full_name(self.base_body), self.full_name(IK_BASE))
            self._torso_qposadr = self._torso.qposadr.copy()
            self.hand_qposadr = np.stack([lookup.joints([self.full_name(n) for n in hand_joint_names(side)]).qposadr
                                          for side in SIDES]).astype(np.intp)
            self.hand_actuators = np.stack([lookup.ids('actuator', [self.full_name(n) for n in hand_joint_names(side, driven=True)])
                                            for side in SIDES]).astype(np.intp)
        super().bind(world, slots)

    def reset_slots(self, slots, configs) -> None:
        super().reset_slots(slots, configs)
        data = self.bound_world.data
        rows = np.asarray(slots, dtype=np.intp)[:, None]
        # Hands open and at rest (every finger joint, the coupled ones included, at 0).
        data.qpos[rows, self.hand_qposadr.reshape(-1)] = 0.0
        data.ctrl[rows, self.hand_actuators.reshape(-1)] = np.tile(HAND_OPEN, 2)

    # -- kinematics for the IK controller -------------------------------------------------------
    def chain(self, frame: str) -> tuple[SerialChain, np.ndarray]:
        """The chain from ``torso_link`` to ``frame`` (a body or site of the right arm) and the
        columns of its joints in :meth:`joint_array`."""
        found = self._chains.get(frame)
        if found is None:
            chain = SerialChain.from_model(self.bound_world.lookup, self.full_name(IK_BASE), self.full_name(frame))
            order = list(self.arm_qposadr)
            missing = [int(a) for a in chain.qposadr if a not in order]
            if missing:
                raise ValueError(f'the chain from {IK_BASE} to {frame!r} moves joints other than the right arm\'s '
                                 f'{RIGHT_ARM_JOINT_NAMES}')
            found = self._chains[frame] = (chain, np.array([order.index(a) for a in chain.qposadr], dtype=np.intp))
        return found

    def joint_array(self, slots: np.ndarray) -> np.ndarray:
        """``(k, 4)`` right-arm joint positions of ``slots`` (:data:`RIGHT_ARM_JOINT_NAMES` order)."""
        return self.bound_world.data.qpos[np.asarray(slots, dtype=np.intp)[:, None], self.arm_qposadr]

    def base_frame(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Env-local positions ``(k, 3)`` and rotations ``(k, 3, 3)`` of ``torso_link``, from the state
        (the pelvis's free joint and the torso joint)."""
        poses = self._torso_poses(np.asarray(slots, dtype=np.intp))
        return poses[:, 9:].copy(), poses[:, :9].reshape(-1, 3, 3).copy()

    def _torso_poses(self, slots: np.ndarray) -> np.ndarray:
        """Packed ``(k, 12)`` torso poses (rotation row-major, position) of ``slots``."""
        assert self._torso is not None and self._root_qposadr is not None
        qpos = self.bound_world.data.qpos
        adr = self._root_qposadr
        root = qpos[slots, adr:adr + 7]
        pelvis = pack_base(root[:, :3], quat_to_mat(root[:, 3:]))
        joints = qpos[slots[:, None], self._torso_qposadr]
        torso = fk_frames(self._torso, joints, np.arange(self._torso.size, dtype=np.intp), pelvis,
                          np.arange(len(slots), dtype=np.intp))
        return pack_base(torso[:, :3], torso[:, 7:].reshape(-1, 3, 3))

    def frame_poses(self, chain: SerialChain, columns: np.ndarray, slots: np.ndarray, joints: np.ndarray | None = None) -> np.ndarray:
        """Packed ``(k, 16)`` env-local poses of ``chain``'s end frame (position, wxyz, rotation)."""
        slots = np.asarray(slots, dtype=np.intp)
        joints = self.joint_array(slots) if joints is None else np.ascontiguousarray(joints, dtype=float)
        return fk_frames(chain, np.ascontiguousarray(joints), columns, self._torso_poses(slots), np.arange(len(slots), dtype=np.intp))

    def frame_pose(self, chain: SerialChain, columns: np.ndarray, slots: np.ndarray, joints: np.ndarray | None = None,
                   rotation: bool = False) -> tuple[np.ndarray, ...]:
        """Env-local positions ``(k, 3)`` and wxyz orientations ``(k, 4)`` of ``chain``'s end frame
        (with ``rotation`` also the rotation matrices ``(k, 3, 3)``)."""
        poses = self.frame_poses(chain, columns, slots, joints)
        out = (poses[:, :3].copy(), poses[:, 3:7].copy())
        return (*out, poses[:, 7:].reshape(-1, 3, 3).copy()) if rotation else out


__all__ = ['H1WithHandRobot', 'H1WithHandUpstreamMethods']
