"""InternUtopia's ``internutopia.core.robot.articulation_action``: ``ArticulationAction`` (defined by the per-slot layer, :mod:`internutopia.per_slot.articulation_action`)."""

from internutopia.per_slot.articulation_action import ArticulationAction

__all__ = ['ArticulationAction']
