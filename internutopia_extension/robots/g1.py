"""Unitree G1 humanoid walking with holosoma's trained ONNX velocity policy.

The policy (``holosoma-inference``, ``models/loco/g1_29dof``) runs at 50 Hz of simulated time: on
every tick, one batched onnxruntime call computes joint targets for the G1s of every slot, which
position servos (the policy's own gains) track at the physics rate. ``move_by_speed`` sets the
velocity command ``[forward, lateral, yaw_rate]`` (body frame, clipped to the policy's +-1
ranges); a step without a command means "stand". See ``docs/robots.md`` for tracking figures.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import mujoco
import numpy as np

from internutopia.core.config import RobotCfg
from internutopia.core.controller.base import BaseController
from internutopia.core.robot.base import BaseRobot, rows_of
from internutopia_extension.controllers.holonomic_base import UnsetSpeedExtras
from internutopia_extension.robots.assets import breadth_first_joints
from internutopia_extension.robots.g1_locomotion import G1LocomotionPolicy, build_g1_spec
from internutopia_extension.robots.g1_locomotion.policy_kernel import CompiledAct, compiled_act
from internutopia_extension.robots.policy_clock import PolicyClock, keeps_running
from internutopia_extension.robots.upstream_bodies import UpstreamBodies


@functools.cache
def _g1_spec(policy_name: str) -> mujoco.MjSpec:
    return build_g1_spec(G1LocomotionPolicy(capacity=1, name=policy_name))


class G1UpstreamMethods(UpstreamBodies):
    """InternUtopia's G1 attributes of one slot's G1: the base (``_robot_base``, the pelvis) and
    the torso IMU (``_imu_in_torso``, which InternUtopia's G1 controller reads its orientation and
    angular velocity from). The model has the IMU as a site on ``torso_link`` with the link's
    orientation, so ``_imu_in_torso`` is that link: the same orientation and angular velocity (its
    position is the link's, 15 cm below the IMU)."""

    upstream_bodies = {'_robot_base': 'pelvis', '_imu_in_torso': 'torso_link'}


@BaseRobot.register('G1Robot')
class G1Robot(BaseRobot):
    """A walking G1; the policy is shared by all slots and ticks for all of them at once."""

    base_body = 'pelvis'
    upstream_methods = G1UpstreamMethods
    #: The policy was trained with 200 Hz physics and its servo gains need it: with a longer
    #: ``physics_dt`` (InternUtopia's default is 1/60) each env step runs in substeps of <= 1/200 s.
    max_physics_dt = 1 / 200

    def __init__(self, config: Any, env_num: int, sim: Any) -> None:
        super().__init__(config, env_num, sim)
        names = {name for c in self._all_controller_configs(config.controllers or []) if (name := getattr(c, 'policy', None)) is not None}
        self.policy_name = names.pop() if len(names) == 1 else 'ppo'
        self.policy = G1LocomotionPolicy(capacity=env_num, name=self.policy_name)
        #: The policy's joints, in its own order (the model's).
        self.policy_joints = list(self.policy.joint_names)
        #: Reported and commanded in InternUtopia's order (Isaac's breadth-first order).
        self.joint_names = breadth_first_joints(_g1_spec(self.policy_name))
        self.actuated_joints = self.joint_names
        #: Columns of ``joint_names``-ordered arrays that give the policy's order.
        self._policy_columns = np.array([self.joint_names.index(n) for n in self.policy_joints], dtype=np.intp)
        self.command = np.zeros((env_num, 3))
        #: The policy's 50 Hz clocks (each slot's from its episode's start).
        self.clock = PolicyClock(self.policy.control_dt, env_num)

    @staticmethod
    def _all_controller_configs(configs: list) -> list:
        out = []
        for config in configs:
            out.append(config)
            out.extend(G1Robot._all_controller_configs(config.sub_controllers or []))
        return out

    def build_spec(self) -> mujoco.MjSpec:
        return _g1_spec(self.policy_name).copy()

    def bind(self, world: Any, slots: np.ndarray) -> None:
        # (read before the slots change: see the clock below)
        runs_on = self.world is not None and keeps_running(self.slots, slots)
        super().bind(world, slots)
        self.actuator_id = np.zeros((self.env_num, len(self.policy_joints)), dtype=np.intp)
        #: ``(root qpos address, root dof address, ctrl columns)`` when every address the policy
        #: reads and writes is a slice of the state rows (the usual case), else ``None``.
        self._policy_slices: tuple[int, int, slice] | None = None
        #: The policy step as two compiled passes over the state rows (with those slices; numba).
        self._compiled_act: CompiledAct | None = None
        if len(self.slots):
            self.actuator_id[self.slots] = self.ids(self.slots, 'actuator', self.policy_joints)
            first = self.actuator_id[self.slots[0]]
            policy_qpos = self.joint_qposadr[self.slots[0]][self._policy_columns]
            in_policy_order = bool(np.all(np.diff(first) == 1) and np.all(np.diff(policy_qpos) == 1))
            if self._root_qposadr is not None and self._joint_ranges is not None and in_policy_order:
                self._policy_slices = (self._root_qposadr, int(self.root_dofadr[self.slots[0]]),
                                       slice(int(first[0]), int(first[-1]) + 1))
                (qa, _), (va, _) = self._joint_ranges
                self._compiled_act = compiled_act(self.policy, self._root_qposadr, int(self.root_dofadr[self.slots[0]]),
                                                  qa, va, int(first[0]))
                if self._compiled_act is not None:
                    self._compiled_act.warm(world.data.qpos, world.data.qvel, world.data.ctrl, self.command)
        if not runs_on:
            # None of the group's slots ran before: the clock starts anew (reset_slots starts it
            # again at their episodes' start). While a slot runs on through the bind (the pack gained
            # or lost other slots) it keeps its schedule: a joining slot's row time is stale until
            # its reset, and restarting there ticked on every physics step until it caught up.
            self.clock.restart(world.time)

    def reset_slots(self, slots: np.ndarray, configs: Sequence[RobotCfg]) -> None:
        super().reset_slots(slots, configs)
        data, rows = self.bound_world.data, slots[:, None]
        data.qpos[rows, self.joint_qposadr[slots][:, self._policy_columns]] = self.policy.default_joint_pos
        data.ctrl[rows, self.actuator_id[slots]] = self.policy.default_joint_pos
        self.policy.reset(slots)
        self.command[slots] = 0.0
        # (each slot's policy ticks from its episode's start, as in a fresh world)
        self.clock.start(slots, float(data.time[slots[0]]), self.slots)

    def begin_step(self) -> None:
        self.command[rows_of(self.slots, self.env_num)] = 0.0

    def quiet_steps(self, limit: int) -> int:
        """The steps after the coming one before the policy's next tick: ``begin_step`` clears the
        command that ``move_by_speed`` sets again, and ``before_physics`` acts only on a tick."""
        if not len(self.slots):
            return limit
        return self.clock.steps_before(float(self.bound_world.data.time[self.slots[0]]), float(self.sim.physics_dt), limit,
                                       self.slots)

    def before_physics(self) -> None:
        # (the slots keep the world's one time; each ticks on its own episode's 50 Hz schedule)
        slots, world = self.slots, self.world
        if not len(slots):
            return
        assert world is not None  # bound: it has slots
        data = world.data
        ticking = self.clock.due_slots(slots, float(data.time[slots[0]]))
        if ticking is None:
            return
        slots = ticking
        if self._compiled_act is not None:
            self._compiled_act(slots, data.qpos, data.qvel, data.ctrl, self.command)
            return
        if self._policy_slices is not None:
            # Every address a slice of the state rows: views, no gathers.
            root, dof, columns = self._policy_slices
            assert self._joint_ranges is not None  # (with the policy's slices)
            (qa, qb), (va, vb) = self._joint_ranges
            rows = rows_of(slots, self.env_num)
            data.ctrl[rows, columns] = self.policy.act(slots, data.qpos[rows, root + 3:root + 7], data.qvel[rows, dof + 3:dof + 6],
                                                       data.qpos[rows, qa:qb], data.qvel[rows, va:vb], self.command[rows])
            return
        rows = slots[:, None]
        roots, dofs = self.root_qposadr[slots], self.root_dofadr[slots]
        quat = data.qpos[rows, roots[:, None] + np.arange(3, 7)]
        ang_vel = data.qvel[rows, dofs[:, None] + np.arange(3, 6)]
        q = data.qpos[rows, self.joint_qposadr[slots][:, self._policy_columns]]
        dq = data.qvel[rows, self.joint_dofadr[slots][:, self._policy_columns]]
        data.ctrl[rows, self.actuator_id[slots]] = self.policy.act(slots, quat, ang_vel, q, dq, self.command[slots])


@BaseController.register('G1MoveBySpeedController')
class G1MoveBySpeedController(UnsetSpeedExtras):
    """``[forward, lateral, yaw_rate]`` -> the G1 policy's velocity command for this step.

    InternUtopia's action may carry a pelvis height and the 15 upper-body joint targets as 4th and
    5th values; they are accepted when ``None`` (a value is refused: the policy sets neither)."""

    extras_refusal = "G1's walking policy here takes a velocity only (it sets no pelvis height or upper-body pose)"
    #: The command is only stored (the policy reads it on its ticks): applying it again changes nothing.
    idempotent_apply = True

    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        self.apply_base_velocity(slots, batch)

    def apply_base_velocity(self, slots: np.ndarray, velocity: np.ndarray) -> None:
        self.robot.command[rows_of(slots, self.env_num)] = self.robot.policy.clip_command(velocity)
