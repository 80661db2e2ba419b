"""InternUtopia's module path of ``DifferentialDriveControllerCfg`` (defined in :mod:`internutopia_extension.configs.controllers`)."""

from internutopia_extension.configs.controllers import DifferentialDriveControllerCfg

__all__ = ['DifferentialDriveControllerCfg']
