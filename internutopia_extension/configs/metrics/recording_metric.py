"""InternUtopia's module path of ``RecordingMetricCfg`` (defined in :mod:`internutopia_extension.configs.metrics`)."""

from internutopia_extension.configs.metrics import RecordingMetricCfg

__all__ = ['RecordingMetricCfg']
