"""InternUtopia's module path of ``ManipulationTaskCfg`` (defined in :mod:`internutopia_extension.configs.tasks`)."""

from internutopia_extension.configs.tasks import ManipulationTaskCfg

__all__ = ['ManipulationTaskCfg']
