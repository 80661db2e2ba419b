"""InternUtopia's ``internutopia.core.sensor.camera``: ``ICamera``, a camera in one env slot (defined by the per-slot layer, :mod:`internutopia.per_slot.camera`)."""

from internutopia.per_slot.camera import ICamera

__all__ = ['ICamera']
