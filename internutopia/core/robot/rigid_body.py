"""InternUtopia's ``internutopia.core.robot.rigid_body``: ``IRigidBody``, one body in one env slot (defined by the per-slot layer, :mod:`internutopia.per_slot.rigid_body`)."""

from internutopia.per_slot.rigid_body import IRigidBody

__all__ = ['IRigidBody']
