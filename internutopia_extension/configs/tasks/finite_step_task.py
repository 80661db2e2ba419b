"""InternUtopia's module path of ``FiniteStepTaskCfg`` (defined in :mod:`internutopia_extension.configs.tasks`)."""

from internutopia_extension.configs.tasks import FiniteStepTaskCfg

__all__ = ['FiniteStepTaskCfg']
