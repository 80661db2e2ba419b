"""InternUtopia's module path of ``RecoverControllerCfg`` (defined in :mod:`internutopia_extension.configs.controllers`)."""

from internutopia_extension.configs.controllers import RecoverControllerCfg

__all__ = ['RecoverControllerCfg']
