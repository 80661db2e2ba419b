"""InternUtopia's ``internutopia.core.robot.articulation``: ``IArticulation``, one robot in one env slot (defined by the per-slot layer, :mod:`internutopia.per_slot.articulation`)."""

from internutopia.per_slot.articulation import IArticulation

__all__ = ['IArticulation']
