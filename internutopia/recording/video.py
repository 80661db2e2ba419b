"""One camera's episode as an MP4 file, encoded frame by frame with PyAV (FFmpeg's libraries).

Frames are encoded as they arrive (on the recorder's worker thread), so an episode never sits in
memory as raw images. H.264 (``libx264``) in ``yuv420p`` with a keyframe every ``gop`` frames: what
LeRobot's decoders (torchcodec, PyAV) read, and small and fast at the image sizes of robot cameras.
``yuv420p`` needs even sizes: a camera of odd width or height is encoded in ``yuv444p``
(:meth:`VideoOptions.pix_fmt`).
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
CODEC_NAMES = {'libx264': 'h264', 'libx265': 'hevc', 'libopenh264': 'h264', 'libsvtav1': 'av1', 'libaom-av1': 'av1',
               'libvpx-vp9': 'vp9'}
#: The speed presets of the encoders that take one (x264's and x265's ``--preset``); other encoders' ``preset``
#: is not passed to them.
PRESETS = ('ultrafast', 'superfast', 'veryfast', 'faster', 'fast', 'medium', 'slow', 'slower', 'veryslow', 'placebo')
PRESET_CODECS = ('libx264', 'libx265')
#: The largest ``crf`` per encoder (8-bit video; 63 for the others: AV1's and VP9's scale).
CRF_MAX = {'libx264': 51, 'libx265': 51}
#: Encoders named in the message of a codec refused (those this PyAV build has).
COMMON_CODECS = ('libx264', 'libx265', 'libsvtav1', 'libaom-av1', 'libvpx-vp9', 'libopenh264', 'mpeg4')


@dataclasses.dataclass(frozen=True)
class VideoOptions:
    """How camera frames are encoded.

    Every field is checked when the options are made (``TypeError``/``ValueError`` naming the
    field and its valid values).

    Attributes:
        codec: a video encoder of the installed PyAV (FFmpeg) build that writes ``yuv420p``
            (``libx264``, ``libx265``, ``libsvtav1``, ``libvpx-vp9``, ...).
        crf: constant rate factor, an int from 0 to 51 for ``libx264``/``libx265``, to 63 for the
            others (lower: better and bigger; 0 is lossless with ``libx264``).
        preset: the speed preset of ``libx264``/``libx265`` (:data:`PRESETS`: ``ultrafast`` ...
            ``placebo``); other encoders are not given it.
        gop: frames between keyframes, at least 1 (LeRobot's own writer uses 2, for fast random access).
        threads: encoder threads per stream, 0 (FFmpeg picks) to 256 (many streams run at once, so 1).
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
        if not isinstance(self.codec, str):
            raise TypeError(f'VideoOptions.codec={self.codec!r}: the name of a video encoder, a str (e.g. libx264)')
        _check_codec(self.codec)
        for field, low, high in (('crf', 0, CRF_MAX.get(self.codec, 63)), ('gop', 1, None), ('threads', 0, 256)):
            value = getattr(self, field)
            valid = f'an int from {low}' + (f' to {high}' if high is not None else ' up')
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f'VideoOptions.{field}={value!r}: {valid}' + (f' (codec {self.codec})' if field == 'crf' else ''))
            if value < low or (high is not None and value > high):
                raise ValueError(f'VideoOptions.{field}={value!r}: {valid}' + (f' (codec {self.codec})' if field == 'crf' else ''))
        if not isinstance(self.preset, str):
            raise TypeError(f'VideoOptions.preset={self.preset!r}: a str ({", ".join(PRESETS)})')
        if self.codec in PRESET_CODECS and self.preset not in PRESETS:
            raise ValueError(f'VideoOptions.preset={self.preset!r}: {self.codec} presets are {", ".join(PRESETS)}')
        if self.tune is not None and (self.codec != 'libx264' or self.tune not in X264_TUNES):
            raise ValueError(f'VideoOptions.tune={self.tune!r}: tune is an option of codec libx264 (codec={self.codec!r}); '
                             f'valid tunes: {", ".join(X264_TUNES)}')

    def pix_fmt(self, width: int, height: int) -> str:
        """The pixel format a ``width`` x ``height`` camera is encoded in: ``yuv420p`` (colour at half
        resolution, what LeRobot's own writer uses), which needs even sizes; ``yuv444p`` (full colour
        resolution) for an odd width or height, where the encoder writes it (``libx264``, ``libx265``).

        Raises:
            ValueError: an odd size and an encoder that writes ``yuv420p`` only (naming both).
        """
        if width % 2 == 0 and height % 2 == 0:
            return 'yuv420p'
        if 'yuv444p' in _pixel_formats(self.codec):
            return 'yuv444p'
        raise ValueError(f'a {width}x{height} camera cannot be encoded with {self.codec}: it writes yuv420p only, '
                         'which needs an even width and height; use even camera resolutions or '
                         "VideoOptions(codec='libx264')")

    @property
    def codec_name(self) -> str:
        """The codec's name in LeRobot's ``info.json`` (``h264``, ``av1``, ...)."""
        return CODEC_NAMES.get(self.codec, self.codec)

    def stream_options(self) -> dict[str, str]:
        """The encoder options PyAV passes to FFmpeg."""
        options = {'crf': str(self.crf), 'g': str(self.gop)}
        if self.codec in PRESET_CODECS:
            options['preset'] = self.preset
            if self.tune is not None:
                options['tune'] = self.tune
        return options


def _pixel_formats(codec: str) -> list[str]:
    """The pixel formats encoder ``codec`` writes (``[]`` if PyAV does not say)."""
    import av

    return [f.name for f in (av.codec.Codec(codec, 'w').video_formats or [])]


def _check_codec(codec: str) -> None:
    """Raise ``ValueError`` unless ``codec`` is a video encoder of PyAV's FFmpeg that writes ``yuv420p``
    (not checked when PyAV is missing: the recorder then refuses to start, naming it)."""
    try:
        import av
    except ImportError:
        return
    try:
        found: Any = av.codec.Codec(codec, 'w')
        formats = [f.name for f in (found.video_formats or [])]
        fits = found.type == 'video' and (not formats or 'yuv420p' in formats)
    except Exception:  # noqa: BLE001 - (UnknownCodecError: no such encoder)
        fits = False
    if not fits:
        have = []
        for name in COMMON_CODECS:
            try:
                if av.codec.Codec(name, 'w').type == 'video':
                    have.append(name)
            except Exception:  # noqa: BLE001 - not in this build
                continue
        raise ValueError(f'VideoOptions.codec={codec!r}: not a video encoder (writing yuv420p) of this PyAV/FFmpeg build; '
                         f'valid codecs include {", ".join(have)}')


class VideoStream:
    """An MP4 file being written: :meth:`write` one RGB ``uint8 (H, W, 3)`` frame at a time, then
    :meth:`close`. Frames are numbered by their index, so frame ``k`` is shown at ``k / fps``."""

    def __init__(self, path: str, width: int, height: int, fps: float, options: VideoOptions) -> None:
        import av

        self.path = path
        self._container: Any = av.open(path, mode='w')
        rate = Fraction(fps).limit_denominator(1000)
        stream: Any = self._container.add_stream(options.codec, rate=rate, options=options.stream_options())
        stream.width, stream.height, stream.pix_fmt = width, height, options.pix_fmt(width, height)
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
