"""Controllers turn per-slot actions into engine commands, one vectorized call per controller."""

from internutopia.core.controller.base import BaseController, BaseVelocityController, FixedShapeController

__all__ = ['BaseController', 'BaseVelocityController', 'FixedShapeController']
