"""InternUtopia's module path of ``RMPFlowControllerCfg`` (defined in :mod:`internutopia_extension.configs.controllers`)."""

from internutopia_extension.configs.controllers import RMPFlowControllerCfg

__all__ = ['RMPFlowControllerCfg']
