"""InternUtopia's ``internutopia.core.robot.controller``: ``BaseController`` (:mod:`internutopia.core.controller.base`) and the per-slot factories
(:mod:`internutopia.per_slot.controller`). Subclass ``BaseController`` either way: one object for every slot, or InternUtopia's
one object per slot (``docs/extensions.md``)."""

from internutopia.core.controller.base import BaseController
from internutopia.per_slot.controller import create_controllers, inject_sub_controllers

__all__ = ['BaseController', 'create_controllers', 'inject_sub_controllers']
