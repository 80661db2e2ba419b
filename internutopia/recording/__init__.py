"""Recording runs as LeRobot datasets: :class:`Recorder` (see ``docs/datasets.md``)."""

from internutopia.recording.layout import Layout
from internutopia.recording.recorder import Recorder
from internutopia.recording.video import VideoOptions

__all__ = ['Layout', 'Recorder', 'VideoOptions']
