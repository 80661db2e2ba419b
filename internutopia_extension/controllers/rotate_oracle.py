"""InternUtopia's module path of the oracle ``rotate`` (see ``oracle``)."""

from internutopia_extension.controllers.oracle import RotateOracleController

__all__ = ['RotateOracleController']
