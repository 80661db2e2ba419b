"""InternUtopia's ``internutopia.core.robot.robot``: ``BaseRobot`` (:mod:`internutopia.core.robot.base`) and the per-slot factories
(:mod:`internutopia.per_slot.robot`). Subclass ``BaseRobot`` either way: one object for every slot, or InternUtopia's
one object per slot (``docs/extensions.md``)."""

from internutopia.core.robot.base import BaseRobot
from internutopia.per_slot.robot import create_robots, init_robots

__all__ = ['BaseRobot', 'create_robots', 'init_robots']
