"""``IArticulation``: one robot in one env slot, joint by joint (InternUtopia's interface).

InternUtopia's robots hold an Isaac Sim articulation; upstream-style robot, controller and task
code reads joint states from it and sends :class:`~internutopia.per_slot.articulation_action.ArticulationAction`
targets to it. Here an ``IArticulation`` does the same on the slot's own MuJoCo simulation:

- joints are the robot's hinge and slide joints, in ``dof_names`` order (the robot's
  ``joint_names``, or its ``articulation_joint_names`` where InternUtopia's articulation of it has
  more joints than it reports: H1 with hands has its fingers too); indices refer to that list;
- ``apply_action`` writes ``joint_positions`` to the joints' position servos, ``joint_velocities``
  to their velocity servos (``ValueError`` naming the joint when it has no such servo) and applies
  ``joint_efforts`` as joint torques; a ``None`` or NaN entry (of any float type) keeps that
  joint's target, an infinite one is a ``ValueError`` naming the robot, env and joint; targets
  applied between env steps stay in force, as Isaac Sim's drive targets do, until something
  changes them (a controller's command, another action, a new episode), except those a robot's
  own loop sets on its ticks (a walking policy's legs, all of G1's joints; ``docs/robots.md``);
- joints that one position servo drives together (a robot group's ``coupled_position_servos()``:
  the Franka's two fingers, on the one gripper servo of their coupling tendon) take position
  targets too: the servo's target is the mean of the targets given to its joints (Isaac Sim's
  ``ParallelGripper.forward`` gives both fingers one target), and ``get_applied_action`` reports
  the servo's target for each of them;
- ``set_joint_positions`` / ``set_joint_velocities`` teleport joint states;
- poses come from :class:`~internutopia.core.util.pose_mixin.PoseMixin` (world, env, local).

Settings that only mean something to PhysX (solver iteration counts, self-collision switches)
are accepted and change nothing. Servo gains (``set_gains``) live in the compiled model, which
every slot of the same structure shares, so they change for all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.backend.model import NO_ID, ServoKind
from internutopia.core.util.math import rotate_inverse
from internutopia.core.util.pose_mixin import PoseMixin
from internutopia.per_slot.articulation_action import ArticulationAction
from internutopia.per_slot.building import building_robot
from internutopia.per_slot.rigid_body import IRigidBody

if TYPE_CHECKING:
    from internutopia.core.robot.base import BaseRobot


class IArticulation(PoseMixin):
    """Robot ``group`` (a robot group, see :class:`~internutopia.core.robot.base.BaseRobot`) in ``slot``."""

    def __init__(self, group: BaseRobot, slot: int, origin: Any = None) -> None:
        self.group = group
        self.slot = int(slot)
        self.env_id = self.slot
        self.offset = np.zeros(3) if origin is None else np.asarray(origin, dtype=float)
        self.name = group.name
        self.prim_path = f'/World/env_{self.slot}/{group.name}'
        self.status: Any = None
        self._actuators: tuple[int, dict[str, np.ndarray]] | None = None
        self._joint_table: tuple[int, list[str], np.ndarray, np.ndarray] | None = None

    # -- structure -----------------------------------------------------------------------------
    @property
    def handles_initialized(self) -> bool:
        """Always ``True``: the slot's simulation exists as long as the episode runs."""
        return True

    def _joints(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The articulation's joint names and this slot's ``qpos`` and ``qvel`` addresses of them."""
        group = self.group
        names = getattr(group, 'articulation_joint_names', None)
        if not names:
            return group.joint_names, group.joint_qposadr[self.slot], group.joint_dofadr[self.slot]
        version = id(group.world)
        if self._joint_table is None or self._joint_table[0] != version:
            joints = group.bound_world.lookup.joints([group.full_name(n) for n in names])
            self._joint_table = (version, list(names), joints.qposadr.astype(np.intp), joints.dofadr.astype(np.intp))
        return self._joint_table[1], self._joint_table[2], self._joint_table[3]

    @property
    def dof_names(self) -> list[str]:
        """The robot's joints (hinge and slide), in the order indices refer to."""
        return list(self._joints()[0])

    @property
    def num_dof(self) -> int:
        """Number of joints."""
        return len(self._joints()[0])

    @property
    def num_bodies(self) -> int:
        """Number of bodies of the robot's model."""
        prefix = f'{self.group.name}/'
        return sum(1 for name in self.group.bound_world.lookup.names('body') if name.startswith(prefix))

    def get_dof_index(self, dof_name: str) -> int:
        """Index of joint ``dof_name``; ``ValueError`` listing the joints otherwise."""
        names = self._joints()[0]
        if dof_name not in names:
            raise ValueError(f'robot {self.group.name!r} has no joint {dof_name!r}; joints: {list(names)}')
        return list(names).index(dof_name)

    def _indices(self, joint_indices: Any) -> np.ndarray:
        n = self.num_dof
        if joint_indices is None:
            return np.arange(n)
        indices = np.asarray(joint_indices, dtype=np.intp).reshape(-1)
        if np.any((indices < 0) | (indices >= n)):
            raise ValueError(f'joint indices {indices.tolist()} out of range for {n} joints of {self.group.name!r}')
        return indices

    # -- joint state ---------------------------------------------------------------------------
    def get_joint_positions(self, joint_indices: Any = None) -> np.ndarray:
        """Joint positions (rad or m), for ``joint_indices`` (all when ``None``)."""
        adr = self._joints()[1][self._indices(joint_indices)]
        return self.group.bound_world.data.qpos[self.slot, adr].copy()

    def get_joint_velocities(self, joint_indices: Any = None) -> np.ndarray:
        """Joint velocities (rad/s or m/s), for ``joint_indices`` (all when ``None``)."""
        adr = self._joints()[2][self._indices(joint_indices)]
        return self.group.bound_world.data.qvel[self.slot, adr].copy()

    def set_joint_positions(self, positions: Sequence[float], joint_indices: Any = None) -> None:
        """Teleport joints to ``positions`` (the slot's derived state is recomputed)."""
        indices = self._indices(joint_indices)
        values = _values(positions, len(indices), 'positions')
        self.group.bound_world.data.qpos[self.slot, self._joints()[1][indices]] = values
        self.group.bound_world.forward(np.array([self.slot]))
        self.group.state_changed(self.slot)

    def set_joint_velocities(self, velocities: Sequence[float], joint_indices: Any = None) -> None:
        """Set joint velocities."""
        indices = self._indices(joint_indices)
        values = _values(velocities, len(indices), 'velocities')
        self.group.bound_world.data.qvel[self.slot, self._joints()[2][indices]] = values
        self.group.state_changed(self.slot)

    def set_joint_efforts(self, efforts: Sequence[float], joint_indices: Any = None) -> None:
        """Apply joint torques (N m, or N for slide joints) from now on, on top of the actuators
        (MuJoCo's ``qfrc_applied``; zeros remove them)."""
        indices = self._indices(joint_indices)
        values = _values(efforts, len(indices), 'efforts')
        self.group.bound_world.data.qfrc_applied[self.slot, self._joints()[2][indices]] = values

    def set_world_velocity(self, velocity: Sequence[float]) -> None:
        """Set the free-floating base's velocity ``[vx, vy, vz, wx, wy, wz]`` (world axes, m/s and
        rad/s), as Isaac Sim's ``set_world_velocity``.

        Raises:
            ValueError: the base is not free-floating (fixed or mocap-driven), or not 6 finite numbers.
        """
        values = _values(velocity, 6, 'velocity')
        dof = int(self.group.root_dofadr[self.slot])
        if dof == NO_ID:
            raise ValueError(f'{self.group.name!r} in env {self.slot} has no free-floating base: its velocity cannot be set')
        _, orientation = self._env_pose()
        data = self.group.bound_world.data
        data.qvel[self.slot, dof:dof + 3] = values[:3]
        # (MuJoCo's free joint takes angular velocity in the body frame)
        data.qvel[self.slot, dof + 3:dof + 6] = rotate_inverse(orientation, values[3:])
        self.group.state_changed(self.slot)

    @property
    def _articulation(self) -> IArticulation:
        """This articulation (Isaac Sim's object behind InternUtopia's wrapper, which extensions
        reach for ``set_world_pose``, ``set_world_velocity``, ``set_joint_efforts``)."""
        return self

    def get_applied_action(self) -> ArticulationAction:
        """The servo targets in force (position and velocity servos; a coupled servo's for each of
        its joints) and applied joint torques. A robot whose servos move towards goals at a
        limited speed (the Franka) reports the goals, as Isaac Sim's drive targets are: a script
        that changes one entry and applies the action back leaves the others where they were going."""
        servos = self._servos()
        data = self.group.bound_world.data
        targets = data.ctrl[self.slot]
        goals = getattr(self.group, 'servo_goals', None)
        in_force = goals(self.slot) if goals is not None else None
        if in_force is not None:
            targets = targets.copy()
            targets[in_force[0]] = in_force[1]
        driving = np.where(servos['position'] >= 0, servos['position'], servos['coupled'])
        positions = [float(targets[a]) if a >= 0 else None for a in driving]
        velocities = [float(targets[a]) if a >= 0 else None for a in servos['velocity']]
        efforts = data.qfrc_applied[self.slot, self._joints()[2]].tolist()
        return ArticulationAction(positions, velocities, efforts)

    # -- commands ------------------------------------------------------------------------------
    def _servos(self) -> dict[str, np.ndarray]:
        """Actuator ids driving each joint as a position servo, a velocity servo or a motor, and the
        position servo driving it together with other joints (``'coupled'``; -1: none)."""
        version = id(self.group.world)
        if self._actuators is not None and self._actuators[0] == version:
            return self._actuators[1]
        lookup = self.group.bound_world.lookup
        names = self._joints()[0]
        joints = lookup.ids('joint', [self.group.full_name(n) for n in names]).tolist()
        out = {kind: np.full(len(joints), -1, dtype=np.intp) for kind in ('position', 'velocity', 'motor', 'coupled')}
        kinds = {ServoKind.POSITION: 'position', ServoKind.VELOCITY: 'velocity', ServoKind.MOTOR: 'motor'}
        actuators = lookup.actuators()
        for actuator, joint, kind in zip(actuators.ids.tolist(), actuators.joint.tolist(), actuators.kind.tolist(), strict=True):
            if joint in joints:
                out[kinds[ServoKind(kind)]][joints.index(joint)] = actuator
        coupled = getattr(self.group, 'coupled_position_servos', None)
        for actuator, together in (coupled() if coupled is not None else {}).items():
            for name in together:
                out['coupled'][names.index(name)] = actuator
        self._actuators = (version, out)
        return out

    def apply_action(self, action: ArticulationAction) -> None:
        """Send ``action``'s targets to the joints' servos and torques (see the module docstring).
        A ``None`` or NaN entry (a Python float, a numpy scalar of any precision, in a list or an
        array) leaves that joint's target alone, as in InternUtopia; every target is checked
        before any is written.

        Raises:
            ValueError: a target for a joint without a servo of that kind, an infinite (or
                non-numeric) target, or a wrong length; naming the robot, the env and the joint.
        """
        if action is None:
            return
        indices = self._indices(action.joint_indices)
        servos = self._servos()
        data = self.group.bound_world.data
        writes: list[tuple[int, float]] = []
        shared: dict[int, list[float]] = {}  # a coupled servo's joints' targets
        for kind, what, values in (('position', 'joint_positions', action.joint_positions),
                                   ('velocity', 'joint_velocities', action.joint_velocities)):
            if values is None:
                continue
            targets = self._targets(values, indices, what)
            for index, value in zip(indices.tolist(), targets.tolist(), strict=True):
                if value != value:  # NaN (and None): keep the target
                    continue
                actuator = servos[kind][index]
                if actuator < 0 and kind == 'position' and servos['coupled'][index] >= 0:
                    shared.setdefault(int(servos['coupled'][index]), []).append(value)
                    continue
                if actuator < 0:
                    names = self._joints()[0]
                    driven = [n for n, a, c in zip(names, servos[kind], servos['coupled'], strict=True)
                              if a >= 0 or (kind == 'position' and c >= 0)]
                    raise ValueError(f'joint {names[index]!r} of robot {self.group.name!r} has no {kind} '
                                     f'servo; joints with one: {driven}')
                writes.append((int(actuator), value))
        writes += [(actuator, sum(values) / len(values)) for actuator, values in shared.items()]
        efforts = None
        if action.joint_efforts is not None:
            efforts = self._targets(action.joint_efforts, indices, 'joint_efforts')
        for actuator, value in writes:
            data.ctrl[self.slot, actuator] = value
        if efforts is not None:
            given = ~np.isnan(efforts)
            dof = self._joints()[2][indices]
            data.qfrc_applied[self.slot, dof[given]] = efforts[given]
        # A group that rewrites servo targets each step is told which actuators were written, so
        # that targets applied between steps are not lost: the Jetbot, which stops wheels given no
        # command, holds them; the Franka, whose targets move towards goals its controllers set,
        # makes them the goals (see their ``servo_targets_applied``).
        told = getattr(self.group, 'servo_targets_applied', None) if writes else None
        if told is not None:
            told(self.slot, np.array([actuator for actuator, _ in writes], dtype=np.intp))

    def _targets(self, values: Any, indices: np.ndarray, what: str) -> np.ndarray:
        """``values`` (a list or an array, ``None`` entries allowed) as floats, NaN where a target
        is kept; ``ValueError`` naming the robot, env and joint for a wrong length or an infinite
        or non-numeric entry."""
        where = f'ArticulationAction {what} for robot {self.group.name!r} in env {self.slot}'
        entries: Any
        if isinstance(values, np.ndarray) and values.dtype != object:
            entries = values.reshape(-1)
        else:
            entries = [np.nan if value is None else value for value in (values.reshape(-1) if isinstance(values, np.ndarray) else values)]
        if len(entries) != len(indices):
            raise ValueError(f'{where} has {len(entries)} entries for {len(indices)} joints '
                             f'({[self._joints()[0][i] for i in indices.tolist()]})')
        try:
            targets = np.asarray(entries, dtype=float).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise ValueError(f'{where}: entries must be numbers, None or NaN; got {values!r} ({exc})') from None
        if len(targets) != len(indices):
            raise ValueError(f'{where} has {len(targets)} entries for {len(indices)} joints')
        infinite = np.isinf(targets)
        if infinite.any():
            joint = self._joints()[0][int(indices[int(np.argmax(infinite))])]
            raise ValueError(f'{where}: joint {joint!r} has target {targets[infinite][0]}; targets must be finite '
                             '(None or NaN leaves a joint\'s target alone)')
        return targets

    def set_gains(self, kps: Any = None, kds: Any = None, joint_indices: Any = None) -> None:
        """Position-servo stiffness ``kps`` and damping ``kds`` (for every slot of this structure)."""
        indices = self._indices(joint_indices)
        servos = self._servos()['position'][indices]
        has_servo = servos >= 0
        gains = {}
        for values, gain in ((kps, 'kp'), (kds, 'kd')):
            if values is not None:
                gains[gain] = _values(values, len(indices), gain + 's')[has_servo]
        self.group.bound_world.set_servo_gains(servos[has_servo], kp=gains.get('kp'), kv=gains.get('kd'))

    def set_enabled_self_collisions(self, flag: bool) -> None:
        """Accepted for InternUtopia's code; self-collision is part of the model here."""

    def set_solver_velocity_iteration_count(self, count: int) -> None:
        """Accepted for InternUtopia's code; PhysX solver settings mean nothing to MuJoCo."""

    def set_solver_position_iteration_count(self, count: int) -> None:
        """Accepted for InternUtopia's code; PhysX solver settings mean nothing to MuJoCo."""

    # -- base ----------------------------------------------------------------------------------
    def base(self) -> IRigidBody:
        """The robot's base body."""
        return IRigidBody(self.group, self.slot, None, origin=self.offset, name=self.group.name)

    def _env_pose(self) -> tuple[np.ndarray, np.ndarray]:
        position, orientation = self.group.poses(np.array([self.slot], dtype=np.intp))
        return position[0], orientation[0]

    def _set_env_pose(self, position: np.ndarray | None, orientation: np.ndarray | None) -> None:
        self.group.teleport(self.slot, position, orientation)

    def get_linear_velocity(self) -> np.ndarray:
        """World-frame linear velocity of the base, m/s."""
        return self.base().get_linear_velocity()

    def get_angular_velocity(self) -> np.ndarray:
        """World-frame angular velocity of the base, rad/s."""
        return self.base().get_angular_velocity()

    def save_status(self) -> None:
        """Remember the joint state (InternUtopia keeps it across a physics-view rebuild; none happens here)."""
        self.status = (self.get_joint_positions(), self.get_joint_velocities())

    def restore_status(self) -> None:
        """Nothing to restore: resetting one slot leaves every other slot's state as it was."""

    def parallel_gripper(self, joint_names: Sequence[str], opened_positions: Sequence[float],
                         closed_positions: Sequence[float]) -> ParallelGripper:
        """Isaac Sim's ``ParallelGripper`` on joints ``joint_names`` of this articulation (a robot's
        ``articulation.gripper``, see :class:`ParallelGripper`)."""
        return ParallelGripper(self, joint_names, opened_positions, closed_positions)

    @classmethod
    def create(cls, usd_path: str | None = None, prim_path: str | None = None, name: str | None = None,
               *args: Any, **kwargs: Any) -> IArticulation:
        """The articulation of the robot being built (call it in a per-slot robot's ``__init__``).

        InternUtopia loads ``usd_path`` into the stage here; in this package the robot's model is
        already in its slot (its group built it from the config), so this returns its view.
        """
        context = building_robot('IArticulation.create')
        return cls(context.group, context.slot, origin=context.origin)

    def __repr__(self) -> str:
        return f'IArticulation({self.group.name!r}, env {self.slot}, {self.num_dof} joints)'


class ParallelGripper:
    """Isaac Sim's ``ParallelGripper`` (``articulation.gripper`` of InternUtopia's Franka): finger
    joints of one robot in one slot, with their open and closed positions.

    ``forward('open' | 'close')`` returns, as Isaac's does, an :class:`ArticulationAction` over every
    joint of the articulation with only the fingers' position targets given (``None`` elsewhere)
    and commands nothing: the caller applies it (``articulation.apply_action``), alone or merged
    into an arm command (InternManip takes ``forward(...).joint_positions[-2:]``). ``open()`` and
    ``close()`` apply it at once.
    """

    def __init__(self, articulation: IArticulation, joint_names: Sequence[str], opened_positions: Sequence[float],
                 closed_positions: Sequence[float]) -> None:
        self.articulation = articulation
        self.joint_prim_names = list(joint_names)
        self.joint_dof_indicies = np.array([articulation.get_dof_index(name) for name in joint_names], dtype=np.intp)
        self.joint_opened_positions = _values(opened_positions, len(joint_names), 'opened_positions')
        self.joint_closed_positions = _values(closed_positions, len(joint_names), 'closed_positions')

    def forward(self, action: str) -> ArticulationAction:
        """The fingers' targets of ``action`` (``'open'`` or ``'close'``) over every joint (see the class docstring)."""
        if action not in ('open', 'close'):
            raise ValueError(f"the gripper of robot {self.articulation.name!r} takes 'open' or 'close'; got {action!r}")
        positions = self.joint_opened_positions if action == 'open' else self.joint_closed_positions
        targets: list[float | None] = [None] * self.articulation.num_dof
        for index, value in zip(self.joint_dof_indicies.tolist(), positions.tolist(), strict=True):
            targets[index] = value
        return ArticulationAction(joint_positions=targets)

    def open(self) -> None:
        """Open the gripper (apply ``forward('open')``)."""
        self.articulation.apply_action(self.forward('open'))

    def close(self) -> None:
        """Close the gripper (apply ``forward('close')``)."""
        self.articulation.apply_action(self.forward('close'))

    def apply_action(self, control_actions: ArticulationAction) -> None:
        """Apply targets given for the gripper's joints only (in ``joint_prim_names`` order), as Isaac's does."""
        self.articulation.apply_action(ArticulationAction(
            joint_positions=control_actions.joint_positions, joint_velocities=control_actions.joint_velocities,
            joint_efforts=control_actions.joint_efforts, joint_indices=self.joint_dof_indicies))

    def get_joint_positions(self) -> np.ndarray:
        """The finger joints' positions."""
        return self.articulation.get_joint_positions(self.joint_dof_indicies)

    def set_joint_positions(self, positions: Sequence[float]) -> None:
        """Teleport the finger joints to ``positions``."""
        self.articulation.set_joint_positions(positions, self.joint_dof_indicies)

    def __repr__(self) -> str:
        return f'ParallelGripper({self.articulation.name!r}, env {self.articulation.slot}, {self.joint_prim_names})'


def _values(values: Any, count: int, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).reshape(-1)
    if array.shape != (count,) or not np.all(np.isfinite(array)):
        raise ValueError(f'{what} must be {count} finite numbers; got {values!r}')
    return array


__all__ = ['IArticulation', 'ParallelGripper']
