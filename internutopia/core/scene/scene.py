"""InternUtopia's ``internutopia.core.scene.scene``: ``IScene``, the scene a per-slot extension
is given (defined by the per-slot layer, :mod:`internutopia.per_slot.scene`)."""

from internutopia.per_slot.scene import IScene

__all__ = ['IScene']
