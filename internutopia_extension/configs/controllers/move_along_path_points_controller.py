"""InternUtopia's module path of ``MoveAlongPathPointsControllerCfg`` (defined in :mod:`internutopia_extension.configs.controllers`)."""

from internutopia_extension.configs.controllers import MoveAlongPathPointsControllerCfg

__all__ = ['MoveAlongPathPointsControllerCfg']
