"""H1's ``move_by_speed`` (InternUtopia's module path): walking or carried, as the robot is built.

A walking H1 (``locomotion='walking'``) gets the command as its walking policy's velocity command
(clipped to the range the policy was trained for); a carried one moves its base target as a
holonomic base (:class:`~internutopia_extension.controllers.holonomic_base.HolonomicBaseController`).
"""

from __future__ import annotations

from internutopia.core.controller.base import BaseController
from internutopia_extension.controllers.holonomic_base import WalkingOrCarriedSpeedController


@BaseController.register('H1MoveBySpeedController')
class H1MoveBySpeedController(WalkingOrCarriedSpeedController):
    """``[forward, lateral, yaw_rate]`` (body frame) -> the walking policy's command, or the carried base's motion."""


__all__ = ['H1MoveBySpeedController']
