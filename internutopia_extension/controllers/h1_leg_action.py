"""A walking H1's leg actions from outside (a training loop), in place of its policy."""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.controller.base import BaseController, FixedShapeController
from internutopia_extension.robots.h1_locomotion.gait import ACTION_SIZE


@BaseController.register('H1LegActionController')
class H1LegActionController(FixedShapeController):
    """``[a_1, ..., a_10]`` in [-1, 1] -> the actions of the walker's next 50 Hz tick.

    The robot must walk with ``walking_policy='controller'``: the actions then stand where the
    policy's would, and the walker turns them into leg servo targets at its tick.
    """

    action_shape = (ACTION_SIZE,)
    action_text = f'leg_action expects {ACTION_SIZE} leg actions in [-1, 1]; action'

    def bind(self, world: Any) -> None:
        super().bind(world)
        walker = getattr(self.robot, 'walker', None)
        if walker is None or walker.policy is not None:
            raise ValueError(f"controller {self.config.name!r} drives a walking H1 whose walking_policy is 'controller'; "
                             f"robot {self.robot.name!r} has locomotion={self.robot.config.locomotion!r}, "
                             f"walking_policy={self.robot.config.walking_policy!r}")

    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        self.robot.walker.pending_action[slots] = np.clip(batch, -1.0, 1.0)
