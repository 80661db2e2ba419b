"""InternUtopia's module path of ``G1MoveBySpeedControllerCfg`` (defined in :mod:`internutopia_extension.configs.controllers`)."""

from internutopia_extension.configs.controllers import G1MoveBySpeedControllerCfg

__all__ = ['G1MoveBySpeedControllerCfg']
