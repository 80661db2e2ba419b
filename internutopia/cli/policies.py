"""What ``internutopia run`` sends each slot: a scripted policy chosen by the episode's task.

- **navigation** (a task with a ``goal``, a robot with ``move_to_point``): drive to the goal, the
  same command every step;
- **pick and place** (a task whose ``target`` names one of its objects and that has a
  ``goal_position``; a robot with an ``InverseKinematicsController`` and a
  ``GripperController``, such as the Franka): the scripted pick-and-place of
  :class:`internutopia_extension.policies.ScriptedPickPlace` (approach, grasp, lift, carry,
  place, release), one batched call for every such slot per step, from the observations;
- anything else: no command (robots stand, or stop).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ['PickPlaceSlot', 'ScriptedPolicy', 'navigation_action', 'pick_place_slot']

IK_TYPE, GRIPPER_TYPE = 'InverseKinematicsController', 'GripperController'


def navigation_action(task: Any, robots: dict[str, Any]) -> dict | None:
    """``move_to_point`` to the task's ``goal`` for each robot that has it (for a point-nav task,
    only its navigating robot); ``None`` when the task has no goal. ``robots``: the slot's robots by name."""
    goal = getattr(task, 'goal', None)
    if goal is None:
        return None
    names = [task.nav_robot_name()] if hasattr(task, 'nav_robot_name') else [r.name for r in task.robots]
    action = {}
    for name in names:
        robot = robots.get(name)
        if robot is not None and 'move_to_point' in robot.controllers:
            action[name] = {'move_to_point': [list(goal)]}
    return action or None


@dataclass(frozen=True)
class PickPlaceSlot:
    """Who does what in a pick-and-place episode: the robot, its IK and gripper controllers, the object."""

    robot: str
    ik: str
    gripper: str
    target: str
    goal: tuple[float, float, float]


def pick_place_slot(task: Any) -> PickPlaceSlot | None:
    """The pick-and-place roles of ``task``, or ``None`` when it is not a pick-and-place episode
    (no ``goal_position``, a ``target`` that is none of its objects, or no robot with an IK and a
    gripper controller)."""
    goal = getattr(task, 'goal_position', None)
    target = getattr(task, 'target', None)
    if goal is None or not any(obj.name == target for obj in getattr(task, 'objects', None) or []):
        return None
    wanted = getattr(task, 'robot_name', None)
    for robot in task.robots:
        if wanted and robot.name != wanted:
            continue
        by_type = {controller.type: controller.name for controller in robot.controllers or []}
        if IK_TYPE in by_type and GRIPPER_TYPE in by_type:
            return PickPlaceSlot(robot.name, by_type[IK_TYPE], by_type[GRIPPER_TYPE], str(target), tuple(goal))
    return None


class ScriptedPolicy:
    """The actions of ``internutopia run`` for every slot of ``env`` (see the module doc).

    Call :meth:`start` with the slots that began an episode and their observations (after
    ``reset``), then :meth:`actions` with the latest observations before every step.
    """

    def __init__(self, env: Any) -> None:
        self.env = env
        self.static: list[dict | None] = [None] * env.env_num
        self.pick_place: dict[int, PickPlaceSlot] = {}
        self._script: Any = None  # ScriptedPickPlace, made when a slot first needs it

    def start(self, slots: list[int]) -> None:
        """Slots ``slots`` began new episodes (or became empty)."""
        runner = self.env.runner
        for slot in slots:
            self.pick_place.pop(slot, None)
            self.static[slot] = None
            episode = runner.episodes[slot]
            if episode is None:
                continue
            roles = pick_place_slot(episode.config)
            if roles is None:
                self.static[slot] = navigation_action(episode.config, runner.slot_robots[slot])
                continue
            if self._script is None:
                from internutopia_extension.policies import ScriptedPickPlace

                self._script = ScriptedPickPlace(physics_dt=self.env.config.simulator.physics_dt)
            self.pick_place[slot] = roles
            self._script.reset(np.array([slot]), np.array([roles.goal], dtype=float))

    def actions(self, obs: list) -> list[dict | None]:
        """This step's action of every slot, from the observations ``obs`` (per slot, ``None`` for no episode)."""
        out = list(self.static)
        slots = [slot for slot in self.pick_place if obs[slot] is not None]
        if not slots:
            return out
        roles = [self.pick_place[slot] for slot in slots]
        objects = [obs[slot]['objects'][r.target] for slot, r in zip(slots, roles, strict=True)]
        tcp = np.array([obs[slot][r.robot]['controllers'][r.ik]['eef_position'] for slot, r in zip(slots, roles, strict=True)])
        targets, grip = self._script.act(np.array(slots), np.array([o['position'] for o in objects]),
                                         np.array([o['orientation'] for o in objects]), tcp)
        for row, (slot, r) in enumerate(zip(slots, roles, strict=True)):
            out[slot] = {r.robot: {r.ik: [targets[row, :3], targets[row, 3:]],
                                   r.gripper: ['open' if grip[row] > 0.5 else 'close']}}
        return out
