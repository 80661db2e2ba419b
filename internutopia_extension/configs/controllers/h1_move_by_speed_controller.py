"""InternUtopia's module path of ``H1MoveBySpeedControllerCfg`` (defined in :mod:`internutopia_extension.configs.controllers`)."""

from internutopia_extension.configs.controllers import H1MoveBySpeedControllerCfg

__all__ = ['H1MoveBySpeedControllerCfg']
