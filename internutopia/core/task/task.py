"""InternUtopia's ``internutopia.core.task.task``: ``BaseTask`` (:mod:`internutopia.core.task.base`) and the per-slot factories
(:mod:`internutopia.per_slot.task`). Subclass ``BaseTask`` either way: one object for every slot, or InternUtopia's
one object per slot (``docs/extensions.md``)."""

from internutopia.core.task.base import BaseTask
from internutopia.per_slot.task import create_task

__all__ = ['BaseTask', 'create_task']
