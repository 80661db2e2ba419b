"""InternUtopia's ``internutopia.core.robot.articulation``: ``IArticulation``, one robot in one env
slot (defined by the per-slot layer, :mod:`internutopia.per_slot.articulation`), and
``ArticulationAction``, which InternUtopia's module imports and extensions import from it."""

from internutopia.per_slot.articulation import IArticulation
from internutopia.per_slot.articulation_action import ArticulationAction

__all__ = ['ArticulationAction', 'IArticulation']
