"""GR1's ``move_by_speed`` and teleoperation controllers (InternUtopia's module path and types).

``GR1MoveBySpeedController`` moves a carried GR1's base target as a holonomic base
(:class:`~internutopia_extension.controllers.holonomic_base.HolonomicBaseController`); a GR1 on its
walking model has no trained policy yet: the controller refuses to be built on one.
``GR1TeleOpController`` sets joint position targets (a :class:`JointController` under InternUtopia's type).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.controller.base import BaseController, as_float_array
from internutopia_extension.controllers.holonomic_base import HolonomicBaseController
from internutopia_extension.controllers.joint_controller import JointController


@BaseController.register('GR1MoveBySpeedController')
class GR1MoveBySpeedController(HolonomicBaseController):
    """``[forward, lateral, yaw_rate]`` (body frame) -> the carried base's motion.

    InternUtopia's action may carry a pelvis height and upper-body joint targets as 4th and 5th
    values; they are accepted when ``None`` (a value is refused: the carried GR1 holds its pose).

    >>> GR1MoveBySpeedController.split_action([0.5, 0.0, 0.1, None])
    [0.5, 0.0, 0.1]
    """

    action_text = 'move_by_speed expects [forward_speed, lateral_speed, yaw_rate] (a 4th and 5th value only as None); action'

    @classmethod
    def split_action(cls, action: Any) -> Any:
        """``action`` without InternUtopia's trailing ``None`` height and upper-body pose."""
        if isinstance(action, (list, tuple)) and 3 < len(action) <= 5:
            extra = action[3:]
            if any(value is not None for value in extra):
                raise ValueError(f'{cls.action_text}: GR1 here has no trained walking policy to set a pelvis height or '
                                 f'an upper-body pose with; got {list(extra)!r} after the velocity')
            return list(action[:3])
        return action

    def __init__(self, config: Any, robot: Any) -> None:
        if not getattr(robot, 'carried', True):
            raise ValueError(f"controller {config.name!r} of robot {robot.name!r}: GR1's walking model has no trained walking "
                             "policy yet, so nothing can move it by speed; use GR1RobotCfg(locomotion='carried')")
        super().__init__(config, robot)

    def parse_action(self, action: Any) -> np.ndarray:
        return as_float_array(self.split_action(action), self.action_shape, self.action_text)

    def parse_batch(self, actions: Any) -> np.ndarray:
        if isinstance(actions, np.ndarray) and actions.dtype != object:
            return super().parse_batch(actions)
        return np.stack([self.parse_action(action) for action in actions]) if len(actions) else np.zeros((0, 3))


@BaseController.register('GR1TeleOpController')
class GR1TeleOpController(JointController):
    """Joint position targets in the config's ``joint_names`` order (see ``GR1TeleOpControllerCfg``)."""


__all__ = ['GR1MoveBySpeedController', 'GR1TeleOpController']
