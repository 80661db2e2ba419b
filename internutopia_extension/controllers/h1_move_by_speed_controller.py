"""InternUtopia's module path of H1's ``move_by_speed`` controller (see ``holonomic_base``)."""

from internutopia_extension.controllers.holonomic_base import HolonomicBaseController as H1MoveBySpeedController

__all__ = ['H1MoveBySpeedController']
