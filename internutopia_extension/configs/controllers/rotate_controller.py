"""InternUtopia's module path of ``RotateControllerCfg`` (defined in :mod:`internutopia_extension.configs.controllers`)."""

from internutopia_extension.configs.controllers import RotateControllerCfg

__all__ = ['RotateControllerCfg']
