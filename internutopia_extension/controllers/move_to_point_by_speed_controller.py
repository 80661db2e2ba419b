"""InternUtopia's module path of ``move_to_point`` (see ``base_motion``)."""

from internutopia_extension.controllers.base_motion import MoveToPointBySpeedController

__all__ = ['MoveToPointBySpeedController']
