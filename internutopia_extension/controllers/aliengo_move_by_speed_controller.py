"""Aliengo's ``move_by_speed`` (InternUtopia's module path): the walking policy's velocity command."""

from __future__ import annotations

from internutopia.core.controller.base import BaseController
from internutopia_extension.controllers.holonomic_base import WalkingOrCarriedSpeedController


@BaseController.register('AliengoMoveBySpeedController')
class AliengoMoveBySpeedController(WalkingOrCarriedSpeedController):
    """``[forward, lateral, yaw_rate]`` (body frame) -> the walking policy's command, clipped to
    the range it was trained for (:data:`~internutopia_extension.robots.aliengo_locomotion.gait.COMMAND_HIGH`).
    (An Aliengo always walks.)"""


__all__ = ['AliengoMoveBySpeedController']
