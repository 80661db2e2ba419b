"""InternUtopia's ``internutopia.core.robot.articulation_subset``: ``ArticulationSubset`` (defined by the per-slot layer, :mod:`internutopia.per_slot.articulation_subset`)."""

from internutopia.per_slot.articulation_subset import ArticulationSubset, require_initialized

__all__ = ['ArticulationSubset', 'require_initialized']
