"""InternUtopia's module path of ``move_along_path`` (see ``base_motion``)."""

from internutopia_extension.controllers.base_motion import MoveAlongPathPointsController

__all__ = ['MoveAlongPathPointsController']
