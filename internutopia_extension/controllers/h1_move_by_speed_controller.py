"""H1's ``move_by_speed`` (InternUtopia's module path): walking or carried, as the robot is built.

A walking H1 (``locomotion='walking'``) gets the command as its walking policy's velocity command
(clipped to the range the policy was trained for); a carried one moves its base target as a
holonomic base (:class:`~internutopia_extension.controllers.holonomic_base.HolonomicBaseController`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.controller.base import BaseController
from internutopia_extension.controllers.holonomic_base import HolonomicBaseController


@BaseController.register('H1MoveBySpeedController')
class H1MoveBySpeedController(HolonomicBaseController):
    """``[forward, lateral, yaw_rate]`` (body frame) -> the walking policy's command, or the carried base's motion."""

    def bind(self, world: Any) -> None:
        self.walker = getattr(self.robot, 'walker', None)
        # A walking robot's command is only stored (its policy reads it on its ticks): applying it
        # again changes nothing. A carried base moves its target on every step.
        self.idempotent_apply = self.stores_walker_command(self.walker, H1MoveBySpeedController)
        if self.walker is None:
            super().bind(world)
        else:
            self.world = world

    def apply_base_velocity(self, slots: np.ndarray, velocity: np.ndarray) -> None:
        if self.walker is None:
            super().apply_base_velocity(slots, velocity)
        else:
            self.walker.set_command(slots, velocity)


__all__ = ['H1MoveBySpeedController']
