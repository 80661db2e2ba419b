"""ManipulationTask: InternUtopia's manipulation episodes, plus a pick-and-place goal; vectorized over slots.

Every episode ends on the step after its ``max_steps``-th (``truncated``), as InternUtopia's
manipulation task does (its step counter must *exceed* ``max_steps``: ``max_steps=5`` ends on
step 6). A pick-and-place episode (``target`` names an
object, ``goal_position`` set; see :class:`~internutopia_extension.configs.tasks.ManipulationTaskCfg`)
also ends with success (``terminated``) on the first step that the object is within
``success_distance`` of the goal, has been at rest for :data:`REST_TIME` (so the bottom of an
impact, where it stops for a moment, does not count), and the robot's gripper has let go. Per env step, for all
active slots of the task at once, the task reads the object's pose and velocity, the robot's tool
frame and gripper state, and keeps, per slot: ``distance`` (object to goal, m), ``success``,
``held`` (the closed gripper has the object between its fingers), ``lifted`` (the object rose above
its start height while held) and ``dropped`` (it then fell out of the still-closed gripper).

Observations, next to the robots' own dicts::

    obs[i]['objects'] = {object_name: {'position', 'orientation', 'linear_velocity', 'angular_velocity'}}
    obs[i]['task']    = {'goal_position': (3,), 'distance_to_goal': float}   (pick-and-place slots;
                        NaN in other slots of the same step)

The gripping robot provides ``tcp_position(slots)`` and ``gripper_opened(slots)``
(:class:`~internutopia_extension.robots.franka.FrankaRobot` does).
"""

from __future__ import annotations

from typing import Any, Protocol, cast

import numpy as np

from internutopia.core.robot.base import NO_ID
from internutopia.core.task.base import BaseTask
from internutopia.core.view import EnvView
from internutopia_extension.configs.tasks.manipulation_task import REWARD_TERMS
from internutopia_extension.objects.observations import ObjectObservationsMixin
from internutopia_extension.tasks.manipulation_kernels import place_kernel

#: The object is at rest below these speeds (m/s, rad/s) ...
REST_SPEED, REST_SPIN = 0.05, 1.0
#: ... for this long (s): a dropped object stops for a step or two at the bottom of its impact.
REST_TIME = 0.1
#: The object counts as held while the closed gripper's tool frame is this close to it (m).
HOLD_DISTANCE = 0.05
#: Rise (m) above its start height that makes a held object lifted.
LIFT_HEIGHT = 0.02
#: Rise (m) of a held object that is a ``'pick'`` episode's success (and the ``lift`` term's full value).
PICK_HEIGHT = 0.1
#: Distance scale (1/m) of the ``reach`` and ``place`` terms: ``1 - tanh(TANH_SCALE d)``.
TANH_SCALE = 5.0
_GOALS = {'place': 0, 'pick': 1, 'reach': 2}
_SIX = np.arange(6)  # a free joint's velocity columns from its first


class GripperRobot(Protocol):
    """What the task reads of a robot with a gripper (the Franka group has these)."""

    def tcp_position(self, slots: np.ndarray) -> np.ndarray: ...

    def gripper_opened(self, slots: np.ndarray) -> np.ndarray: ...


def _object_rows(group: Any, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``group``'s base positions ``(k, 3)`` and free-joint velocities ``(k, 6)`` (zero where it has
    no free joint) in ``slots``."""
    position = group.poses(slots)[0]
    dof = group.root_dofadr[slots]
    free = dof != NO_ID
    if free.all():
        return position, group.bound_world.data.qvel[slots[:, None], dof[:, None] + _SIX]
    velocity = np.zeros((len(slots), 6))
    if free.any():
        velocity[free] = group.bound_world.data.qvel[slots[free, None], dof[free, None] + _SIX]
    return position, velocity


def _gripper_rows(group: Any, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``group``'s tool frame positions, gripper open and gripper commanded open in ``slots``; a
    robot without a gripper never holds anything (its tool frame is at infinity, its gripper open)."""
    if not hasattr(group, 'tcp_position'):
        return np.full((len(slots), 3), np.inf), np.ones(len(slots), dtype=bool), np.ones(len(slots), dtype=bool)
    gripper = cast(GripperRobot, group)
    opened = np.asarray(gripper.gripper_opened(slots), dtype=bool)
    commanded = getattr(group, 'gripper_commanded_open', None)
    return gripper.tcp_position(slots), opened, np.asarray(commanded(slots), dtype=bool) if commanded is not None else opened


@BaseTask.register('ManipulationTask')
class ManipulationTask(ObjectObservationsMixin, BaseTask):
    """All slots running ``ManipulationTaskCfg`` episodes; see the module docstring.

    Per-slot arrays (shape (env_num,) unless noted) that metrics read: ``place`` (pick-and-place
    episode), ``goal`` (env_num, 3), ``distance``, ``success``, ``held``, ``lifted``, ``dropped``.
    """

    def __init__(self, view: EnvView) -> None:
        super().__init__(view)
        n = self.env_num
        self.max_steps = np.zeros(n, dtype=np.int64)
        self.place = np.zeros(n, dtype=bool)
        self.goal = np.full((n, 3), np.nan)
        self.success_distance = np.zeros(n)
        self.start_height = np.zeros(n)
        self.distance = np.full(n, np.nan)
        self.success = np.zeros(n, dtype=bool)
        self.held = np.zeros(n, dtype=bool)
        self.lifted = np.zeros(n, dtype=bool)
        self.dropped = np.zeros(n, dtype=bool)
        self.rest_steps = np.zeros(n, dtype=np.int64)  # consecutive steps the object has been at rest
        self.rest_needed = np.ones(n, dtype=np.int64)
        self.goal_kind = np.zeros(n, dtype=np.int64)  # see _GOALS
        self.end_on_success = np.ones(n, dtype=bool)
        #: Per slot, the scale of each reward term (columns in REWARD_TERMS order), and the terms of
        #: the last step (``reward_terms[name]``, ``(env_num,)``), for logging.
        self.reward_scales = np.zeros((n, len(REWARD_TERMS)))
        self._term_table = np.zeros((len(REWARD_TERMS), n))  # (the compiled step writes a term per row)
        self.reward_terms = {name: self._term_table[column] for column, name in enumerate(REWARD_TERMS)}
        #: The step's arithmetic compiled (:mod:`~internutopia_extension.tasks.manipulation_kernels`), or None: numpy.
        self._place_kernel = place_kernel.compiled_or(None)
        self.object = view.tracker('object')  # the object to place, per pick-and-place slot
        self.robot = view.tracker('robot')  # the robot whose gripper must let go

    def reset_slot(self, slot: int, config: Any) -> None:
        super().reset_slot(slot, config)
        self.max_steps[slot] = config.max_steps
        self.place[slot] = config.place_goal()
        self.success[slot] = self.held[slot] = self.lifted[slot] = self.dropped[slot] = False
        self.rest_steps[slot] = 0
        self.distance[slot] = np.nan
        self.goal[slot] = np.nan
        if not self.place[slot]:
            return
        self.goal[slot] = config.goal_position
        self.goal_kind[slot] = _GOALS[getattr(config, 'goal', 'place')]
        self.end_on_success[slot] = bool(getattr(config, 'end_on_success', True))
        scales = getattr(config, 'reward_scales', None) or {}
        self.reward_scales[slot] = [float(scales.get(name, 0.0)) for name in REWARD_TERMS]
        self.success_distance[slot] = config.success_distance
        self.object.track(slot, config.target)
        physics_dt = float(self.object.entity(slot).sim.physics_dt)
        self.rest_needed[slot] = max(1, int(np.ceil(REST_TIME / physics_dt - 1e-9)))
        self.robot.track(slot, config.gripper_robot_name())
        position = self.object.positions(np.array([slot]))[0]
        self.start_height[slot] = position[2]
        self.distance[slot] = float(np.linalg.norm(position - self.goal[slot]))

    def step(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        place = self.place[slots]
        if place.all():  # (every slot a pick-and-place episode, as in the Franka ids: no scatter)
            success, reward = self._place_step(slots) if len(slots) else (np.zeros(0, dtype=bool), np.zeros(0))
        else:
            success = np.zeros(len(slots), dtype=bool)
            reward = np.zeros(len(slots))
            if np.any(place):
                rows = np.flatnonzero(place)
                success[rows], reward[rows] = self._place_step(slots[rows])
        # InternUtopia's manipulation task ends once its step count exceeds max_steps.
        terminated = success & self.end_on_success[slots]
        truncated = ~terminated & (self.view.steps[slots] > self.max_steps[slots])
        return reward, terminated, truncated

    def _place_step(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Update the pick-and-place state of ``slots``; success and the shaped reward per slot."""
        position, velocity = self._object_state(slots)
        tcp, opened, opening = self._gripper_state(slots)
        kernel = self._place_kernel
        if kernel is None:
            return self._place_numpy(slots, position, velocity, tcp, opened, opening)
        success, reward = np.empty(len(slots), dtype=bool), np.empty(len(slots))
        # (a fresh index array: the trackers' slot arrays may be read-only, another type to numba)
        kernel(np.array(slots, dtype=np.intp), position, velocity, tcp, opened, opening, self.goal,
               self.start_height, self.success_distance, self.goal_kind, self.rest_needed, self.reward_scales, self.held,
               self.lifted, self.dropped, self.held, self.lifted, self.distance, self.rest_steps, self.success,
               self._term_table, HOLD_DISTANCE, LIFT_HEIGHT, PICK_HEIGHT, REST_SPEED, REST_SPIN, TANH_SCALE, success, reward)
        return success, reward

    def _object_state(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The tracked objects' positions ``(k, 3)`` and velocities ``(k, 6)`` (linear, then angular;
        zero for a body without a free joint, at rest) of ``slots``."""
        group = self.object.only_group()
        if group is not None:  # (one object group in every slot: its arrays as they come, no scatter)
            return _object_rows(group, slots)
        position, velocity = np.zeros((len(slots), 3)), np.zeros((len(slots), 6))
        for group, rows, members in self.object.groups(slots):
            position[rows], velocity[rows] = _object_rows(group, members)
        return position, velocity

    def _gripper_state(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The tracked robots' tool frame positions ``(k, 3)``, whether each gripper is open and
        whether it is commanded open (the fingers may still be moving), of ``slots``."""
        group = self.robot.only_group()
        if group is not None:  # (one robot group in every slot: its arrays as they come, no scatter)
            return _gripper_rows(group, slots)
        tcp, opened, opening = np.zeros((len(slots), 3)), np.ones(len(slots), dtype=bool), np.ones(len(slots), dtype=bool)
        for group, rows, members in self.robot.groups(slots):
            tcp[rows], opened[rows], opening[rows] = _gripper_rows(group, members)
        return tcp, opened, opening

    def _place_numpy(self, slots: np.ndarray, position: np.ndarray, velocity: np.ndarray, tcp: np.ndarray,
                     opened: np.ndarray, opening: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The arithmetic of :meth:`_place_step` on the gathered rows (the reference; the compiled
        pass does the same operations in the same order)."""
        distance = np.linalg.norm(position - self.goal[slots], axis=1)
        held = ~opened & (np.linalg.norm(tcp - position, axis=1) < HOLD_DISTANCE)
        lifted = self.lifted[slots] | (held & (position[:, 2] > self.start_height[slots] + LIFT_HEIGHT))
        # Dropped: it was held up high and left the gripper while the gripper stayed closed.
        self.dropped[slots] |= self.held[slots] & lifted & ~held & ~opening
        self.held[slots] = held
        self.lifted[slots] = lifted & held  # a new lift is needed after a release
        self.distance[slots] = distance
        speed, spin = np.linalg.norm(velocity[:, :3], axis=1), np.linalg.norm(velocity[:, 3:], axis=1)
        still = (speed < REST_SPEED) & (spin < REST_SPIN)
        self.rest_steps[slots] = np.where(still, self.rest_steps[slots] + 1, 0)
        resting = self.rest_steps[slots] >= self.rest_needed[slots]
        placed = (distance < self.success_distance[slots]) & resting & opened & ~held
        rise = position[:, 2] - self.start_height[slots]
        reach = np.linalg.norm(tcp - position, axis=1)
        kind = self.goal_kind[slots]
        success = np.where(kind == _GOALS['place'], placed,
                           np.where(kind == _GOALS['pick'], held & (rise >= PICK_HEIGHT), reach < self.success_distance[slots]))
        self.success[slots] = success
        # The shaped reward: named terms in [0, 1], each scaled (MuJoCo Playground's style).
        terms = (1.0 - np.tanh(TANH_SCALE * np.where(np.isfinite(reach), reach, 1e3)), held.astype(float),
                 held * np.clip(rise / PICK_HEIGHT, 0.0, 1.0),
                 (held | resting) * (1.0 - np.tanh(TANH_SCALE * distance)), success.astype(float))
        reward = np.zeros(len(slots))
        for column, (name, term) in enumerate(zip(REWARD_TERMS, terms, strict=True)):
            self.reward_terms[name][slots] = term
            reward += self.reward_scales[slots, column] * term
        return success, reward

    def get_observations(self, slots: np.ndarray) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.object_observations(slots))
        if np.any(self.place[slots]):
            out['task'] = {'goal_position': self.goal[slots].copy(), 'distance_to_goal': self.distance[slots].copy()}
        return out
