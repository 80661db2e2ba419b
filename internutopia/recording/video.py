"""One camera's episode as an MP4 file, encoded frame by frame with PyAV (FFmpeg's libraries).

Frames are encoded as they arrive (on the recorder's worker thread), so an episode never sits in
memory as raw images. H.264 (``libx264``) in ``yuv420p`` with a keyframe every ``gop`` frames: what
LeRobot's decoders (torchcodec, PyAV) read, and small and fast at the image sizes of robot cameras.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ['VideoOptions', 'VideoStream']

#: ``libx264``'s tunings (x264's ``--tune``).
X264_TUNES = ('film', 'animation', 'grain', 'stillimage', 'psnr', 'ssim', 'fastdecode', 'zerolatency')

#: FFmpeg encoder -> the codec it writes.
CODEC_NAMES = {'libx264': 'h264', 'libopenh264': 'h264', 'libsvtav1': 'av1', 'libaom-av1': 'av1', 'libvpx-vp9': 'vp9'}


@dataclasses.dataclass(frozen=True)
class VideoOptions:
    """How camera frames are encoded.

    Attributes:
        codec: an FFmpeg encoder PyAV ships (``libx264``, ``libsvtav1``, ``libopenh264``, ...).
        crf: constant rate factor (lower: better and bigger; 0 is lossless with ``libx264``).
        preset: the encoder's speed preset (``libx264``: ``ultrafast`` ... ``veryslow``).
        gop: frames between keyframes (LeRobot's own writer uses 2, for fast random access).
        threads: encoder threads per stream (many streams run at once, so 1).
        tune: ``libx264``'s ``tune`` (``None``: none). ``'zerolatency'`` drops the encoder's
            look-ahead and frame buffering: an open stream takes about a third of the memory
            (docs/datasets.md has the figures) for somewhat larger files at the same ``crf``.
    """

    codec: str = 'libx264'
    crf: int = 23
    preset: str = 'veryfast'
    gop: int = 10
    threads: int = 1
    tune: str | None = None

    def __post_init__(self) -> None:
        if self.tune is not None and (self.codec != 'libx264' or self.tune not in X264_TUNES):
            raise ValueError(f'VideoOptions.tune={self.tune!r}: tune is an option of codec libx264 (codec={self.codec!r}); '
                             f'valid tunes: {", ".join(X264_TUNES)}')

    @property
    def codec_name(self) -> str:
        """The codec's name in LeRobot's ``info.json`` (``h264``, ``av1``, ...)."""
        return CODEC_NAMES.get(self.codec, self.codec)

    def stream_options(self) -> dict[str, str]:
        """The encoder options PyAV passes to FFmpeg."""
        options = {'crf': str(self.crf), 'g': str(self.gop)}
        if self.codec == 'libx264':
            options['preset'] = self.preset
            if self.tune is not None:
                options['tune'] = self.tune
        return options


class VideoStream:
    """An MP4 file being written: :meth:`write` one RGB ``uint8 (H, W, 3)`` frame at a time, then
    :meth:`close`. Frames are numbered by their index, so frame ``k`` is shown at ``k / fps``."""

    def __init__(self, path: str, width: int, height: int, fps: float, options: VideoOptions) -> None:
        import av

        self.path = path
        self._container: Any = av.open(path, mode='w')
        rate = Fraction(fps).limit_denominator(1000)
        stream: Any = self._container.add_stream(options.codec, rate=rate, options=options.stream_options())
        stream.width, stream.height, stream.pix_fmt = width, height, 'yuv420p'
        stream.codec_context.thread_count = options.threads
        stream.codec_context.time_base = 1 / rate
        self._stream = stream
        self._frame_type = av.VideoFrame
        self.frames = 0

    def write(self, image: np.ndarray) -> None:
        """Encode one RGB frame."""
        frame = self._frame_type.from_ndarray(np.ascontiguousarray(image), format='rgb24')
        frame.pts = self.frames
        self._container.mux(self._stream.encode(frame))
        self.frames += 1

    def close(self) -> None:
        """Flush the encoder and finish the file."""
        if self._container is None:
            return
        try:
            self._container.mux(self._stream.encode(None))
        finally:
            self._container.close()
            self._container = None
