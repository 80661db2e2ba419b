"""Frame-sized offscreen framebuffers next to an ``MjrContext``'s own, one per frame of a batch.

MuJoCo draws into whatever framebuffer is bound, so a batch of frames can each be drawn into a
framebuffer of its own and read back after the last one is drawn: Mesa's rasterizer threads work
on all of them at once, and the whole batch waits for the rasterizer once. Each frame covers its
whole buffer, which matters on Mesa's CPU rasterizer: ``mjr_render`` clears its viewport, and
clearing a whole buffer is a cheap fast path there, while clearing part of one (a tile of a larger
buffer) runs the fragment pipeline over the tile, which cost about a quarter of a 320x240 head
camera frame.

The buffers take the formats of the ``MjrContext``'s own offscreen buffer (MuJoCo's reversed-Z
depth needs its float depth format), and its multisampling: a multisampled frame is resolved
into one single-sample framebuffer before it is read.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np


def _gl() -> Any:
    # Imported on first use, once a GL context exists: PyOpenGL picks its platform (EGL, OSMesa,
    # GLX) when it is first imported, from what MuJoCo's GL backend set up.
    from OpenGL import GL

    return GL


def _renderbuffer_format(renderbuffer: int) -> int:
    GL = _gl()  # noqa: N806 - the library's name
    GL.glBindRenderbuffer(GL.GL_RENDERBUFFER, renderbuffer)
    return int(np.asarray(GL.glGetRenderbufferParameteriv(GL.GL_RENDERBUFFER, GL.GL_RENDERBUFFER_INTERNAL_FORMAT)).item())


class FrameBuffers:
    """``count`` framebuffers of ``width`` x ``height`` pixels for the ``MjrContext`` ``mjr``,
    whose GL context must be current on the calling thread for every method."""

    def __init__(self, mjr: mujoco.MjrContext, width: int, height: int, count: int, samples: int | None = None,
                 depth: bool = True) -> None:
        self.mjr = mjr
        self.size = (int(width), int(height))
        #: Multisampling of the frames: the context's unless given (id-coloured frames take none).
        self.samples = int(mjr.offSamples if samples is None else samples)
        #: Whether the frames have a depth buffer. Without one, GL's depth test passes every
        #: fragment whatever ``mjr_render`` enables: every geom drawn reaches the colour buffer
        #: (the coverage passes of :mod:`.cameras`).
        self.depth = bool(depth)
        self.color_format = _renderbuffer_format(mjr.offColor)
        self.depth_format = _renderbuffer_format(mjr.offDepthStencil)
        self._framebuffers: list[int] = []
        self._renderbuffers: list[int] = []
        self._resolve = self._make(0) if self.samples else None
        self.grow(count)

    def __len__(self) -> int:
        return len(self._framebuffers)

    def _make(self, samples: int) -> int:
        GL = _gl()  # noqa: N806 - the library's name
        width, height = self.size
        framebuffer = int(GL.glGenFramebuffers(1))
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, framebuffer)
        attachments = [(self.color_format, GL.GL_COLOR_ATTACHMENT0)]
        if self.depth:
            attachments.append((self.depth_format, GL.GL_DEPTH_STENCIL_ATTACHMENT))
        for internal_format, attachment in attachments:
            renderbuffer = int(GL.glGenRenderbuffers(1))
            self._renderbuffers.append(renderbuffer)
            GL.glBindRenderbuffer(GL.GL_RENDERBUFFER, renderbuffer)
            if samples:
                GL.glRenderbufferStorageMultisample(GL.GL_RENDERBUFFER, samples, internal_format, width, height)
            else:
                GL.glRenderbufferStorage(GL.GL_RENDERBUFFER, internal_format, width, height)
            GL.glFramebufferRenderbuffer(GL.GL_FRAMEBUFFER, attachment, GL.GL_RENDERBUFFER, renderbuffer)
        status = GL.glCheckFramebufferStatus(GL.GL_FRAMEBUFFER)
        self.restore()
        if status != GL.GL_FRAMEBUFFER_COMPLETE:
            raise RuntimeError(f'an offscreen framebuffer of {width}x{height} pixels could not be made (GL status {status:#x})')
        return framebuffer

    def grow(self, count: int) -> None:
        """Make room for ``count`` frames."""
        while len(self._framebuffers) < count:
            self._framebuffers.append(self._make(self.samples))

    def bind(self, index: int) -> None:
        """Draw (and read) frame ``index`` from now on."""
        GL = _gl()  # noqa: N806 - the library's name
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self._framebuffers[index])

    def read(self, index: int, rgba: np.ndarray | None, depth: np.ndarray | None) -> None:
        """Read frame ``index``, bottom row first as OpenGL stores it: RGBA into ``rgba``
        (``(H, W, 4)`` uint8) and raw depth into ``depth`` (``(H, W)`` float32); either may be ``None``."""
        GL = _gl()  # noqa: N806 - the library's name
        width, height = self.size
        source = self._framebuffers[index]
        if self._resolve is not None:
            GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, source)
            GL.glBindFramebuffer(GL.GL_DRAW_FRAMEBUFFER, self._resolve)
            bits = (GL.GL_COLOR_BUFFER_BIT if rgba is not None else 0) | (GL.GL_DEPTH_BUFFER_BIT if depth is not None else 0)
            GL.glBlitFramebuffer(0, 0, width, height, 0, 0, width, height, bits, GL.GL_NEAREST)
            source = self._resolve
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, source)
        if rgba is not None:
            GL.glReadPixels(0, 0, width, height, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE, rgba)
        if depth is not None:
            GL.glReadPixels(0, 0, width, height, GL.GL_DEPTH_COMPONENT, GL.GL_FLOAT, depth)

    def read_red(self, index: int, red: np.ndarray) -> None:
        """Read the red channel of frame ``index`` into ``red`` (``(H, W)`` uint8, bottom row first):
        a quarter of the bytes of an RGBA read, for frames whose red channel says enough."""
        GL = _gl()  # noqa: N806 - the library's name
        width, height = self.size
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self._framebuffers[index])
        GL.glPixelStorei(GL.GL_PACK_ALIGNMENT, 1)
        GL.glReadPixels(0, 0, width, height, GL.GL_RED, GL.GL_UNSIGNED_BYTE, red)
        GL.glPixelStorei(GL.GL_PACK_ALIGNMENT, 4)

    def flush(self) -> None:
        """Hand what was drawn so far to the rasterizer, without waiting for it."""
        _gl().glFlush()

    def restore(self) -> None:
        """Bind the ``MjrContext``'s own offscreen buffer again (what MuJoCo's calls expect)."""
        GL = _gl()  # noqa: N806 - the library's name
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self.mjr.offFBO)

    def free(self) -> None:
        """Delete the framebuffers and their renderbuffers (idempotent)."""
        GL = _gl()  # noqa: N806 - the library's name
        framebuffers = self._framebuffers + ([self._resolve] if self._resolve is not None else [])
        if framebuffers:
            GL.glDeleteFramebuffers(len(framebuffers), framebuffers)
        if self._renderbuffers:
            GL.glDeleteRenderbuffers(len(self._renderbuffers), self._renderbuffers)
        self._framebuffers, self._renderbuffers, self._resolve = [], [], None


__all__ = ['FrameBuffers']
