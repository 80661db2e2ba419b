"""Aliengo's ``move_by_speed`` (InternUtopia's module path): the walking policy's velocity command."""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.controller.base import BaseController
from internutopia_extension.controllers.holonomic_base import HolonomicBaseController


@BaseController.register('AliengoMoveBySpeedController')
class AliengoMoveBySpeedController(HolonomicBaseController):
    """``[forward, lateral, yaw_rate]`` (body frame) -> the walking policy's command, clipped to
    the range it was trained for (:data:`~internutopia_extension.robots.aliengo_locomotion.gait.COMMAND_HIGH`)."""

    #: The command is only stored (the policy reads it on its ticks): applying it again changes nothing.
    idempotent_apply = True

    def bind(self, world: Any) -> None:
        self.world = world
        self.walker = self.robot.walker

    def apply_base_velocity(self, slots: np.ndarray, velocity: np.ndarray) -> None:
        self.walker.set_command(slots, velocity)


__all__ = ['AliengoMoveBySpeedController']
