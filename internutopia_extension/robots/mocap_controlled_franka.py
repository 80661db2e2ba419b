"""``MocapControlledFrankaRobot``: the Franka Panda of :mod:`internutopia_extension.robots.franka`,
teleoperated from hand frames (InternUtopia's robot type for its mocap demo).

The model, the servos and the observations are :class:`~internutopia_extension.robots.franka.FrankaRobot`'s
(``eef_position``/``eef_orientation`` are those of ``panda_rightfinger``, as InternUtopia reports
them). What makes it the mocap robot is its controller,
:class:`~internutopia_extension.controllers.franka_mocap_teleop_controller.FrankaMocapTeleopController`
(``teleop_cfg`` in :mod:`internutopia_extension.configs.robots.mocap_controlled_franka`), fed by
one of the sources of :mod:`internutopia_extension.interactions.motion_capture`.
InternUtopia's robot raises its joint gains to 1e7 and caps every joint at 1 rad/s; here the
Panda keeps its own servos and speed limits (see ``docs/robots.md``).
"""

from __future__ import annotations

from internutopia.core.robot.base import BaseRobot
from internutopia_extension.robots.franka import FrankaRobot

__all__ = ['MocapControlledFrankaRobot']


@BaseRobot.register('MocapControlledFrankaRobot')
class MocapControlledFrankaRobot(FrankaRobot):
    """A :class:`FrankaRobot` registered as ``'MocapControlledFrankaRobot'``; see the module docstring."""
