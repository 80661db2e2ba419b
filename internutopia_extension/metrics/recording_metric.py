"""InternUtopia's module path of ``RecordingMetric`` (see ``recording``)."""

from internutopia_extension.metrics.recording import RecordingMetric

__all__ = ['RecordingMetric']
