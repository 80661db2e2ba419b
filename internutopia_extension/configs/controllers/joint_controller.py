"""InternUtopia's module path of ``JointControllerCfg`` (defined in :mod:`internutopia_extension.configs.controllers`)."""

from internutopia_extension.configs.controllers import JointControllerCfg

__all__ = ['JointControllerCfg']
