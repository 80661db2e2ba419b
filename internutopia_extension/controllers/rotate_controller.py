"""InternUtopia's module path of ``rotate`` (see ``base_motion``)."""

from internutopia_extension.controllers.base_motion import RotateController

__all__ = ['RotateController']
