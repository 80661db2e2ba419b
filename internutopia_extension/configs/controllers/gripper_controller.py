"""InternUtopia's module path of ``GripperControllerCfg`` (defined in :mod:`internutopia_extension.configs.controllers`)."""

from internutopia_extension.configs.controllers import GripperControllerCfg

__all__ = ['GripperControllerCfg']
