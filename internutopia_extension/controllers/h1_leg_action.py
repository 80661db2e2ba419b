"""A walking robot's leg actions from outside (a training loop), in place of its policy (H1's 10, Aliengo's 12)."""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.controller.base import BaseController, FixedShapeController
from internutopia_extension.robots.aliengo_locomotion import gait as aliengo_gait
from internutopia_extension.robots.h1_locomotion.gait import ACTION_SIZE


@BaseController.register('H1LegActionController')
class H1LegActionController(FixedShapeController):
    """``[a_1, ..., a_10]`` in [-1, 1] -> the actions of the walker's next 50 Hz tick.

    The robot must walk with ``walking_policy='controller'``: the actions then stand where the
    policy's would, and the walker turns them into leg servo targets at its tick.
    """

    action_shape = (ACTION_SIZE,)
    action_text = f'leg_action expects {ACTION_SIZE} leg actions in [-1, 1]; action'
    #: (apply stores the actions for the walker's next tick: the same actions again change nothing)
    idempotent_apply = True

    def bind(self, world: Any) -> None:
        super().bind(world)
        walker = getattr(self.robot, 'walker', None)
        if walker is None or walker.policy is not None or walker.gait.ACTION_SIZE != self.action_shape[0]:
            raise ValueError(f"controller {self.config.name!r} ({type(self).__name__}) drives a walking robot with "
                             f"{self.action_shape[0]} leg actions whose walking_policy is 'controller'; robot {self.robot.name!r} "
                             f"({type(self.robot).__name__}) has locomotion={getattr(self.robot.config, 'locomotion', 'walking')!r}, "
                             f"walking_policy={getattr(self.robot.config, 'walking_policy', None)!r}")

    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        walker = self.robot.walker
        # (np.clip's arithmetic through two ufuncs, without its wrappers' cost; every row in order,
        # a training loop's step: straight into place)
        if walker.is_all_rows(slots) and batch.shape == walker.pending_action.shape:
            np.maximum(batch, -1.0, out=walker.pending_action)
            np.minimum(walker.pending_action, 1.0, out=walker.pending_action)
            return
        clipped = np.maximum(batch, -1.0)
        walker.pending_action[slots] = np.minimum(clipped, 1.0, out=clipped)


@BaseController.register('AliengoLegActionController')
class AliengoLegActionController(H1LegActionController):
    """``[a_1, ..., a_12]`` in [-1, 1] -> the actions of a walking Aliengo's next 50 Hz tick."""

    action_shape = (aliengo_gait.ACTION_SIZE,)
    action_text = f'leg_action expects {aliengo_gait.ACTION_SIZE} leg actions in [-1, 1]; action'
