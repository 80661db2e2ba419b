"""InternUtopia's module path of ``SingleInferenceTaskCfg`` (defined in :mod:`internutopia_extension.configs.tasks`)."""

from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

__all__ = ['SingleInferenceTaskCfg']
