"""GR1's ``move_by_speed`` and teleoperation controllers (InternUtopia's module path and types).

``GR1MoveBySpeedController`` gives a walking GR1 (the default) the walker's velocity command
(clipped to the gait's range), or moves a carried GR1's base target as a holonomic base
(:class:`~internutopia_extension.controllers.holonomic_base.HolonomicBaseController`).
``GR1TeleOpController`` sets joint position targets (a :class:`JointController` under InternUtopia's type).
``GR1LegActionController`` gives a walking GR1's walker its 12 leg actions from a training loop.
"""

from __future__ import annotations

from internutopia.core.controller.base import BaseController
from internutopia_extension.controllers.h1_leg_action import H1LegActionController
from internutopia_extension.controllers.holonomic_base import UnsetSpeedExtras, WalkingOrCarriedSpeedController
from internutopia_extension.controllers.joint_controller import JointController
from internutopia_extension.robots.gr1_locomotion.gait import ACTION_SIZE as LEG_ACTION_SIZE


@BaseController.register('GR1MoveBySpeedController')
class GR1MoveBySpeedController(UnsetSpeedExtras, WalkingOrCarriedSpeedController):
    """``[forward, lateral, yaw_rate]`` (body frame) -> the walking policy's command, or the carried base's motion.

    InternUtopia's action may carry a pelvis height and upper-body joint targets as 4th and 5th
    values; they are accepted when ``None`` (a value is refused: the policy sets neither).

    >>> GR1MoveBySpeedController.split_action([0.5, 0.0, 0.1, None])
    [0.5, 0.0, 0.1]
    """

    extras_refusal = ("GR1's walking policy here takes a velocity only (it sets no pelvis height or upper-body pose; "
                      'a carried GR1 has neither)')


@BaseController.register('GR1TeleOpController')
class GR1TeleOpController(JointController):
    """Joint position targets in the config's ``joint_names`` order (see ``GR1TeleOpControllerCfg``)."""



@BaseController.register('GR1LegActionController')
class GR1LegActionController(H1LegActionController):
    """``[a_1, ..., a_12]`` in [-1, 1] -> the actions of a walking GR1's next 50 Hz tick
    (``walking_policy='controller'``; see :mod:`internutopia_extension.robots.gr1_locomotion.gait`)."""

    action_shape = (LEG_ACTION_SIZE,)
    action_text = f'leg_action expects {LEG_ACTION_SIZE} leg actions in [-1, 1]; action'


__all__ = ['GR1LegActionController', 'GR1MoveBySpeedController', 'GR1TeleOpController']
