"""Write frames (a camera's ``rgba``, a depth map, ``env.render()``) to an MP4 or a GIF.

>>> import numpy as np, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), 'clip.gif')
>>> with VideoRecorder(path, fps=10) as video:
...     for i in range(3):
...         video.append(np.full((16, 16, 4), 80 * i, dtype=np.uint8))
>>> os.path.exists(video.path), video.frames
(True, 3)

MP4 (H.264) needs ``imageio`` and ``imageio-ffmpeg`` (``pip install internutopia[video]``); without
them, or for a ``.gif`` path, frames go to an animated GIF through Pillow (or imageio). When an MP4
cannot be written, the recorder writes ``<name>.gif`` instead and says so in :attr:`VideoRecorder.path`.
"""

from __future__ import annotations

import os
import warnings
import weakref
from typing import Any

import numpy as np
import numpy.typing as npt

from internutopia.core.util.caller import caller_stacklevel


def mp4_available() -> bool:
    """True when ``imageio`` and ``imageio-ffmpeg`` can be imported (MP4 output possible)."""
    try:
        import imageio  # noqa: F401
        import imageio_ffmpeg  # noqa: F401
    except ImportError:
        return False
    return True


def format_problem(path: str | os.PathLike[str]) -> str | None:
    """Why a video cannot be written to ``path`` here (with what to install), or ``None`` when it can.

    ``.mp4`` needs ``imageio`` and ``imageio-ffmpeg``; ``.gif`` needs Pillow or ``imageio``; other
    suffixes are not video formats this module writes. Scripts call it before a long run, so
    they fail at once rather than after rendering (:class:`VideoRecorder` itself falls back to a GIF).
    """
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix == '.mp4':
        if mp4_available():
            return None
        return (f'cannot write {os.fspath(path)}: MP4 needs imageio and imageio-ffmpeg '
                "(pip install imageio imageio-ffmpeg, or pip install 'internutopia[video]'), or write a .gif")
    if suffix == '.gif':
        for module in ('PIL', 'imageio'):
            try:
                __import__(module)
                return None
            except ImportError:
                continue
        return f"cannot write {os.fspath(path)}: GIF needs Pillow or imageio (pip install pillow)"
    return f'cannot write {os.fspath(path)}: the file name must end in .mp4 or .gif'


def to_rgb(frame: Any, depth_range: tuple[float, float] | None = None) -> np.ndarray:
    """A ``uint8 (H, W, 3)`` image of ``frame``.

    Accepts ``uint8`` ``(H, W, 3)``/``(H, W, 4)`` (alpha dropped) and ``(H, W)`` arrays: ``uint8``
    as grey, floats (depth in metres) mapped near-white to far-black over ``depth_range``
    (default: the frame's own finite min and max).
    """
    array = np.asarray(frame)
    if array.ndim == 3 and array.shape[2] in (3, 4) and array.dtype == np.uint8:
        return np.ascontiguousarray(array[..., :3])
    if array.ndim == 2:
        if array.dtype == np.uint8:
            grey = array
        else:
            values = array.astype(np.float64)
            finite = np.isfinite(values)
            if depth_range is None:
                low, high = (values[finite].min(), values[finite].max()) if finite.any() else (0.0, 1.0)
            else:
                low, high = depth_range
            scaled = np.clip((values - low) / max(high - low, 1e-9), 0.0, 1.0)
            scaled[~finite] = 1.0
            grey = ((1.0 - scaled) * 255).astype(np.uint8)
        return np.repeat(grey[..., None], 3, axis=2)
    raise ValueError(f'a video frame must be uint8 (H, W, 3), uint8 (H, W, 4) or a (H, W) depth map; '
                     f'got {array.dtype} {array.shape}')


class VideoRecorder:
    """Collect frames and write them as a video at ``path`` (``.mp4`` or ``.gif``).

    Frames are streamed to the MP4 encoder as they come (only a GIF is held in memory until
    :meth:`close`). All frames must have the size of the first; odd sizes are padded to even
    ones for H.264. A recorder never closed (a loop that raised, a notebook cell re-run, a script
    that ends without :meth:`close`) finishes its file when it is garbage-collected or when the
    interpreter exits.

    Args:
        path: output file; its suffix picks the format (``.mp4``, else GIF).
        fps: frames per second of the video.
        depth_range: ``(near, far)`` metres for depth frames (see :func:`to_rgb`).
    """

    def __init__(self, path: str | os.PathLike[str], fps: float = 30.0,
                 depth_range: tuple[float, float] | None = None) -> None:
        if not fps > 0:
            raise ValueError(f'fps must be > 0; got {fps}')
        self.requested_path = os.fspath(path)
        self.path = self.requested_path
        self.fps = float(fps)
        self.depth_range = depth_range
        self.frames = 0
        self._shape: tuple[int, ...] | None = None
        self._out = _Output(self.path, self.fps)
        # (finishes the file once: at close, when the recorder is collected, or at exit)
        self._finish = weakref.finalize(self, self._out.finish)
        self._closed = False
        self.format = 'mp4' if self.path.lower().endswith('.mp4') else 'gif'
        if self.format == 'mp4' and not mp4_available():
            self._fall_back('imageio and imageio-ffmpeg are not installed (pip install internutopia[video])')

    def _fall_back(self, why: str) -> None:
        self.path = self._out.path = os.path.splitext(self.requested_path)[0] + '.gif'
        self.format = 'gif'
        warnings.warn(f'cannot write MP4 ({why}); writing a GIF to {self.path} instead', stacklevel=caller_stacklevel())

    def append(self, frame: Any) -> None:
        """Add one frame (see :func:`to_rgb` for what is accepted)."""
        if self._closed:
            raise RuntimeError(f'VideoRecorder for {self.path} is closed')
        image = to_rgb(frame, self.depth_range)
        if self._shape is None:
            self._shape = image.shape
        elif image.shape != self._shape:
            raise ValueError(f'frame {self.frames} has shape {image.shape[:2]}; this video is {self._shape[:2]} (H, W)')
        out = self._out
        if self.format == 'mp4':
            image = _pad_even(image)
            if out.writer is None:
                try:
                    out.writer = self._open_mp4()
                except Exception as exc:  # encoder missing or broken: keep the frames as a GIF
                    self._fall_back(str(exc))
            if out.writer is not None:
                out.writer.append_data(image)
                self.frames += 1
                return
        out.gif_frames.append(image)
        self.frames += 1

    def _open_mp4(self) -> Any:
        import imageio

        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        return imageio.get_writer(self.path, format='FFMPEG', mode='I', fps=self.fps, codec='libx264',
                                  quality=7, pixelformat='yuv420p', macro_block_size=1)

    def close(self) -> str:
        """Finish the file and return its path (no file when no frame was added)."""
        if self._closed:
            return self.path
        self._closed = True
        self._finish()
        return self.path

    def __enter__(self) -> VideoRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Output:
    """What a :class:`VideoRecorder` has not finished writing: the MP4 encoder, or the GIF's frames
    (kept apart from the recorder so that its finalizer can finish them without it)."""

    def __init__(self, path: str, fps: float) -> None:
        self.path, self.fps = path, fps
        self.writer: Any = None
        self.gif_frames: list[np.ndarray] = []

    def finish(self) -> None:
        writer, self.writer = self.writer, None
        frames, self.gif_frames = self.gif_frames, []
        if writer is not None:
            writer.close()
        elif frames:
            _write_gif(self.path, frames, self.fps)


def _pad_even(image: np.ndarray) -> np.ndarray:
    h, w = image.shape[:2]
    if h % 2 == 0 and w % 2 == 0:
        return image
    return np.pad(image, ((0, h % 2), (0, w % 2), (0, 0)), mode='edge')


def _write_gif(path: str, frames: list[np.ndarray], fps: float) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    duration_ms = max(int(round(1000.0 / fps)), 20)
    try:
        from PIL import Image
    except ImportError:
        try:
            import imageio
        except ImportError as exc:
            raise ImportError('writing a video needs Pillow or imageio (pip install internutopia[video])') from exc
        ims: list[npt.ArrayLike] = list(frames)  # (imageio takes a list of array-likes)
        imageio.mimsave(path, ims, format='GIF', duration=duration_ms / 1000.0, loop=0)
        return
    images = [Image.fromarray(frame) for frame in frames]
    images[0].save(path, save_all=True, append_images=images[1:], duration=duration_ms, loop=0, optimize=False)


__all__ = ['VideoRecorder', 'format_problem', 'mp4_available', 'to_rgb']
