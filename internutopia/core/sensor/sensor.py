"""InternUtopia's ``internutopia.core.sensor.sensor``: ``BaseSensor`` (:mod:`internutopia.core.sensor.base`) and the per-slot factories
(:mod:`internutopia.per_slot.sensor`). Subclass ``BaseSensor`` either way: one object for every slot, or InternUtopia's
one object per slot (``docs/extensions.md``)."""

from internutopia.core.sensor.base import BaseSensor
from internutopia.per_slot.sensor import create_sensors

__all__ = ['BaseSensor', 'create_sensors']
