"""Joint position targets for a robot's position-servo actuators."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.controller.base import BaseController, as_float_array

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack
from internutopia_extension.configs.controllers.joint_controller import JointControllerCfg


@BaseController.register('JointController')
class JointController(BaseController):
    """``[q_1, ..., q_n]`` -> position targets of ``joint_names`` (actuators named after joints)."""

    config: JointControllerCfg

    def bind(self, world: Pack) -> None:
        super().bind(world)
        self.world = world
        robot = self.robot
        self.joint_names = list(self.config.joint_names or robot.actuated_joints)
        walker_joints = set(getattr(robot, 'walker_joints', ()))
        walked = [joint for joint in self.joint_names if joint in walker_joints]
        if walked:
            # Both write the leg servo targets: the walker at its 50 Hz ticks, this controller on every
            # step it is given an action, so between ticks the controller's targets win.
            warnings.warn(f'{type(self).__name__} {self.config.name!r} of robot {robot.name!r} drives {len(walked)} joints its walker '
                          f'sets ({", ".join(walked[:3])}, ...): given an action, it overrides the walking policy between its ticks. '
                          "For whole-body targets use locomotion='carried' (the pelvis held); to move the upper body while "
                          'walking, leave the legs out of joint_names', stacklevel=2)
        self.actuators = np.full((self.env_num, len(self.joint_names)), -1, dtype=np.intp)
        if len(robot.slots):
            self.actuators[robot.slots] = robot.ids(robot.slots, 'actuator', self.joint_names)

    def parse_action(self, action: Any) -> np.ndarray:
        """``[q_1, ..., q_n]``, or InternUtopia's forms: ``[positions]``, ``[positions, velocities]``
        (the velocities are checked and not used: the actuators are position servos), ``[]`` or
        ``[None]`` (no new targets: the servos keep theirs)."""
        n = len(self.joint_names)
        text = f'joint_controller expects {n} joint targets; action'
        if isinstance(action, np.ndarray) and action.ndim == 2 and len(action) in (1, 2):
            action = list(action)
        if isinstance(action, (list, tuple)) and len(action) in (1, 2) and all(
                part is None or np.ndim(part) == 1 for part in action):
            if len(action) == 2 and action[1] is not None:
                if action[0] is None:
                    raise ValueError(f'{text}: velocity targets alone ([None, velocities]) are not supported, the '
                                     f'actuators are position servos; send [positions]; got {action!r}')
                as_float_array(action[1], (n,), f'joint_controller expects {n} joint velocities; velocities')
            action = action[0]
        if action is None or (isinstance(action, (list, tuple)) and len(action) == 0):
            return np.full(n, np.nan)  # no new targets (InternUtopia's empty ArticulationAction)
        return as_float_array(action, (n,), text)

    def parse_batch(self, actions: Any) -> np.ndarray:
        return as_float_array(actions, (-1, len(self.joint_names)), f'joint_controller expects {len(self.joint_names)} joint targets per env; actions')

    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        if batch.shape[1] and np.isnan(batch[:, 0]).any():  # parse_action's "no new targets" rows (parse_batch has none)
            given = ~np.isnan(batch[:, 0])
            slots, batch = slots[given], batch[given]
        self.world.data.ctrl[slots[:, None], self.actuators[slots]] = batch
