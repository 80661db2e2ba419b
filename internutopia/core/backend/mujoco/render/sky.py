"""The sky: a gradient from a pale horizon to a light blue zenith behind everything drawn.

MuJoCo's own skybox is geometry: it writes the depth buffer, so a depth image would read the
skybox's distance (hundreds of metres, varying over the image) where nothing is, instead of the
far clip. The sky here is put in when a colour frame is copied out of its buffer: MuJoCo clears
the buffer to black with alpha 0 and draws opaque geometry with alpha 1, so a pixel's alpha says
how much of it is covered, and the copy composites ``colour + (1 - alpha) * sky`` (anti-aliased
edges blend into the sky, as they would have into a drawn one). Depth images, segmentation and
the "nothing drawn" test of the depth conversion are untouched, and no GL work is added: it is
one compiled pass over the pixels, fused with the copy the frame needs anyway (numpy when numba
is not there).

The sky's colour at a pixel depends on the elevation of the ray through it (so the horizon tilts
and moves with the camera). A model that brings its own skybox texture keeps it (MuJoCo draws
that one, and no gradient is added).
"""

from __future__ import annotations

import math
import sys

import mujoco
import numpy as np

from internutopia.core.util.jit import Kernel

#: Colour (0-255) at the horizon and below it, and at the zenith (mixed linearly by the sine of the elevation).
SKY_HORIZON = np.array([219.0, 230.0, 242.0])
SKY_ZENITH = np.array([115.0, 158.0, 219.0])


def has_own_skybox(model: mujoco.MjModel) -> bool:
    """Whether ``model`` has a skybox texture (MuJoCo then draws its own sky)."""
    return bool(np.any(model.tex_type == mujoco.mjtTexture.mjTEXTURE_SKYBOX))


#: Sky colours by elevation (row ``k``: sine of the elevation ``k / 255``), RGB uint8.
SKY_TABLE = np.round(SKY_HORIZON + (SKY_ZENITH - SKY_HORIZON) * np.linspace(0.0, 1.0, 256)[:, None]).astype(np.uint8)


def _sky_rows(source: np.ndarray, xs: np.ndarray, ys: np.ndarray, inverse_norm: np.ndarray, r0: float, r1: float, r2: float,
              table: np.ndarray, out: np.ndarray) -> None:
    """Compiled twin of :func:`sky_composite` (``source`` bottom row first, as OpenGL stores it)."""
    height, width = out.shape[0], out.shape[1]
    opaque = out.shape[2] == 4
    for row in range(height):
        src = height - 1 - row
        y = r1 * ys[row] - r2
        for col in range(width):
            alpha = source[src, col, 3]
            if alpha == 255:
                out[row, col, 0] = source[src, col, 0]
                out[row, col, 1] = source[src, col, 1]
                out[row, col, 2] = source[src, col, 2]
            else:
                level = int((r0 * xs[col] + y) * inverse_norm[row, col] * 255.0 + 0.5)
                level = min(max(level, 0), 255)
                if alpha == 0:
                    out[row, col, 0] = table[level, 0]
                    out[row, col, 1] = table[level, 1]
                    out[row, col, 2] = table[level, 2]
                else:
                    cover = 255 - alpha
                    for c in range(3):
                        value = source[src, col, c] + (cover * table[level, c] + 127) // 255
                        out[row, col, c] = min(value, 255)
            if opaque:
                out[row, col, 3] = 255


def _sky_pixels(source: np.ndarray, xs: np.ndarray, ys: np.ndarray, inverse_norm: np.ndarray, r0: float, r1: float, r2: float,
                table: np.ndarray, out: np.ndarray) -> None:
    """:func:`_sky_rows` for RGBA targets, on whole pixels: ``source`` and ``out`` are ``(H, W)``
    uint32 views (bytes r, g, b, a: alpha is the top byte on a little-endian machine) and ``table``
    holds ``(256,)`` opaque sky pixels. A covered pixel (most of a frame) is one load and one store
    instead of four of each."""
    height, width = out.shape[0], out.shape[1]
    for row in range(height):
        src = height - 1 - row
        y = r1 * ys[row] - r2
        for col in range(width):
            pixel = source[src, col]
            alpha = pixel >> 24
            if alpha == 255:
                out[row, col] = pixel
                continue
            level = int((r0 * xs[col] + y) * inverse_norm[row, col] * 255.0 + 0.5)
            level = min(max(level, 0), 255)
            sky = table[level]
            if alpha == 0:
                out[row, col] = sky
                continue
            cover = 255 - alpha
            blended = np.uint32(0xFF000000)
            for shift in (0, 8, 16):
                value = ((pixel >> shift) & 0xFF) + (cover * ((sky >> shift) & 0xFF) + 127) // 255
                blended |= np.uint32(min(value, 255)) << shift
            out[row, col] = blended


_sky_kernel = Kernel(_sky_rows)
_sky_pixel_kernel = Kernel(_sky_pixels)
#: :data:`SKY_TABLE` as opaque RGBA pixels (uint32, alpha in the top byte).
SKY_PIXELS = (SKY_TABLE[:, 0].astype(np.uint32) | (SKY_TABLE[:, 1].astype(np.uint32) << 8)
              | (SKY_TABLE[:, 2].astype(np.uint32) << 16) | np.uint32(0xFF000000))
#: Whether packed pixels have alpha in the top byte (uint32 views of RGBA bytes on this machine).
_LITTLE_ENDIAN = sys.byteorder == 'little'
_RAYS: dict[tuple[int, int, float], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _rays(width: int, height: int, focal: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pixel-centre ray slopes ``xs (W,)``, ``ys (H,)`` (camera frame, +y up) and ``1 / |ray|``
    ``(H, W)`` of a camera, computed once per image size and focal length."""
    key = (int(width), int(height), round(float(focal), 6))
    found = _RAYS.get(key)
    if found is None:
        xs = ((np.arange(width) + 0.5 - width / 2) / focal).astype(np.float32)
        ys = (-(np.arange(height) + 0.5 - height / 2) / focal).astype(np.float32)
        inverse = (1.0 / np.sqrt(xs[None, :] ** 2 + ys[:, None] ** 2 + 1.0)).astype(np.float32)
        if len(_RAYS) > 64:
            _RAYS.clear()
        found = _RAYS[key] = (xs, ys, inverse)
    return found


def sky_colour(rotation: np.ndarray, focal: float, width: int, height: int) -> np.ndarray:
    """The sky seen by a pinhole camera with orientation ``rotation`` (``(3, 3)``: camera axes in
    the world's, looking along -z with +y up) and focal length ``focal`` (pixels): RGB uint8
    ``(height, width, 3)``."""
    xs, ys, inverse = _rays(width, height, focal)
    r = np.asarray(rotation, dtype=np.float32).reshape(3, 3)[2]
    up = (r[0] * xs[None, :] + r[1] * ys[:, None] - r[2]) * inverse
    return SKY_TABLE[np.clip(np.round(up * 255.0), 0, 255).astype(np.intp)]


def sky_composite(source: np.ndarray, target: np.ndarray, rotation: np.ndarray, fovy_deg: float) -> None:
    """Copy an RGBA frame read bottom row first (``source``, ``(H, W, 4)`` uint8) into ``target``
    (``(H, W, 4)`` with alpha set to 255, or ``(H, W, 3)``) top row first, with the sky behind it
    (see the module docstring) for a camera of orientation ``rotation`` and vertical field of view
    ``fovy_deg``."""
    height, width = target.shape[:2]
    focal = (height / 2) / math.tan(math.radians(fovy_deg) / 2)
    if _sky_kernel.available:
        xs, ys, inverse = _rays(width, height, focal)
        r = np.asarray(rotation, dtype=float).reshape(3, 3)[2]
        if (_LITTLE_ENDIAN and target.shape[-1] == 4 and target.flags.c_contiguous and source.flags.c_contiguous
                and _sky_pixel_kernel.available):
            _sky_pixel_kernel(source.view(np.uint32)[..., 0], xs, ys, inverse, float(r[0]), float(r[1]), float(r[2]),
                              SKY_PIXELS, target.view(np.uint32)[..., 0])
            return
        _sky_kernel(source, xs, ys, inverse, float(r[0]), float(r[1]), float(r[2]), SKY_TABLE, target)
        return
    flipped = source[::-1]
    cover = 255 - flipped[..., 3:4].astype(np.int32)
    blended = flipped[..., :3] + (cover * sky_colour(rotation, focal, width, height) + 127) // 255
    target[..., :3] = np.minimum(blended, 255)
    if target.shape[-1] == 4:
        target[..., 3] = 255


def warm_sky_kernel() -> None:
    """Compile (or load from numba's cache) the sky kernel now, when numba is there."""
    if _sky_kernel.available:
        one = np.ones(1, np.float32)
        for channels in (4, 3):
            _sky_kernel.warm(np.zeros((1, 1, 4), np.uint8), one, one, np.ones((1, 1), np.float32), 0.0, 0.0, 1.0,
                             SKY_TABLE, np.zeros((1, 1, channels), np.uint8))
        pixels = np.zeros((1, 1, 4), np.uint8).view(np.uint32)[..., 0]
        _sky_pixel_kernel.warm(pixels, one, one, np.ones((1, 1), np.float32), 0.0, 0.0, 1.0, SKY_PIXELS, pixels.copy())


__all__ = ['SKY_HORIZON', 'SKY_TABLE', 'SKY_ZENITH', 'has_own_skybox', 'sky_colour', 'sky_composite', 'warm_sky_kernel']
