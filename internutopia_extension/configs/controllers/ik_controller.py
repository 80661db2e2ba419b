"""InternUtopia's module path of ``InverseKinematicsControllerCfg`` (defined in :mod:`internutopia_extension.configs.controllers`)."""

from internutopia_extension.configs.controllers import InverseKinematicsControllerCfg

__all__ = ['InverseKinematicsControllerCfg']
