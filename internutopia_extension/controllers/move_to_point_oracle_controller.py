"""InternUtopia's module path of the oracle ``move_to_point`` (see ``oracle``)."""

from internutopia_extension.controllers.oracle import MoveToPointOracleController

__all__ = ['MoveToPointOracleController']
