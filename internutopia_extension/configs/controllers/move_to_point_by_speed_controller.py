"""InternUtopia's module path of ``MoveToPointBySpeedControllerCfg`` (defined in :mod:`internutopia_extension.configs.controllers`)."""

from internutopia_extension.configs.controllers import MoveToPointBySpeedControllerCfg

__all__ = ['MoveToPointBySpeedControllerCfg']
