"""Robots: one :class:`BaseRobot` object drives the same robot in every slot that has it."""

from internutopia.core.robot.base import BaseRobot, Entity

__all__ = ['BaseRobot', 'Entity']
