"""Pixel counts of the things of a frame drawn alone, for occlusion ratios.

A thing covers, drawn alone, the pixels it shows in the frame plus the pixels where it is hidden
behind another thing. The renderer (:mod:`.cameras`) draws the geoms that may be hidden in
*coverage passes*: up to :data:`COVERAGE_BITS` things per pass, each in the colour of one bit,
ORed, with no depth test, so a pixel's colour has the bit of every such thing that covers it.
This module turns the frame's segmentation (which thing shows where) and those passes into
counts: one compiled pass over the pixels per coverage pass (numba), numpy without it.
"""

from __future__ import annotations

import numpy as np

from internutopia.core.util.jit import Kernel

#: Things whose coverage one pass measures: one bit each of the red, green and blue bytes.
COVERAGE_BITS = 24
#: The colour bits of a pixel of a coverage pass (the alpha byte is not a bit of any thing).
_COLOUR = np.uint32(0xFFFFFF)
#: ``BIT_TABLE[v, b]``: whether bit ``b`` of byte value ``v`` is set (per-bit counts from a byte histogram).
BIT_TABLE = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.int64)


def _shown_rows(segmentation: np.ndarray, owners: np.ndarray, shown: np.ndarray) -> None:
    """Compiled twin of :func:`shown_pixels`."""
    height, width = segmentation.shape
    for row in range(height):
        for col in range(width):
            geom = segmentation[row, col]
            if geom >= 0:
                shown[owners[geom]] += 1


def _hidden_rows(segmentation: np.ndarray, owners: np.ndarray, codes: np.ndarray, own_bit: np.ndarray,
                 hidden: np.ndarray) -> None:
    """Compiled twin of :func:`hidden_pixels` (``codes`` bottom row first, as GL reads them)."""
    height, width = segmentation.shape
    for row in range(height):
        source = height - 1 - row
        for col in range(width):
            code = codes[source, col] & 0xFFFFFF
            if code == 0:
                continue
            geom = segmentation[row, col]
            if geom >= 0:
                code &= ~own_bit[owners[geom]]
            bit = 0
            while code:
                if code & 1:
                    hidden[bit] += 1
                code >>= 1
                bit += 1


_shown_kernel = Kernel(_shown_rows)
_hidden_kernel = Kernel(_hidden_rows)


def shown_pixels(segmentation: np.ndarray, owners: np.ndarray, things: int) -> np.ndarray:
    """Pixels each thing shows: ``int64 (things,)`` from a geom-id image ``segmentation``
    (``(H, W)``, ``-1`` where nothing is drawn) and ``owners`` (the thing of each geom, 0 for none);
    entry 0 is always 0."""
    shown = np.zeros(things, dtype=np.int64)
    if _shown_kernel.available:
        _shown_kernel(segmentation, owners, shown)
    else:
        drawn = segmentation[segmentation >= 0]
        shown += np.bincount(owners[drawn], minlength=things)[:things]
    shown[0] = 0
    return shown


def hidden_pixels(segmentation: np.ndarray, owners: np.ndarray, codes: np.ndarray, pass_things: np.ndarray,
                  things: int) -> np.ndarray:
    """Pixels where each thing of one coverage pass is hidden: ``int64 (things,)``, non-zero only
    at ``pass_things`` (thing ``pass_things[k]`` is bit ``k`` of the pass's colours ``codes``,
    ``uint32 (H, W)`` bottom row first). A pixel counts for a thing whose bit it has unless the
    thing shows there (``segmentation`` and ``owners`` as in :func:`shown_pixels`)."""
    own_bit = np.zeros(things, dtype=np.uint32)
    own_bit[pass_things] = np.left_shift(np.uint32(1), np.arange(len(pass_things), dtype=np.uint32))
    bits = np.zeros(COVERAGE_BITS, dtype=np.int64)
    if _hidden_kernel.available:
        _hidden_kernel(segmentation, owners, codes, own_bit, bits)
    else:
        shown = np.take(np.append(owners, 0), segmentation[::-1], mode='wrap')
        left = (codes & _COLOUR) & ~np.take(own_bit, shown)
        channels = [((left >> np.uint32(8 * byte)) & np.uint32(0xFF)).astype(np.uint8) for byte in range(3)]
        bits[:] = np.concatenate([np.bincount(c.reshape(-1), minlength=256) @ BIT_TABLE for c in channels])
    hidden = np.zeros(things, dtype=np.int64)
    hidden[pass_things] = bits[:len(pass_things)]
    return hidden


def warm_coverage_kernels() -> None:
    """Compile (or load from numba's cache) the counting kernels now, when numba is there."""
    if _shown_kernel.available:
        segmentation = np.zeros((1, 1), np.int32)
        for owners in (np.zeros(1, np.int32), np.zeros(1, np.int64)):
            _shown_kernel.warm(segmentation, owners, np.zeros(1, np.int64))
            _hidden_kernel.warm(segmentation, owners, np.zeros((1, 1), np.uint32), np.zeros(1, np.uint32),
                                np.zeros(COVERAGE_BITS, np.int64))


__all__ = ['BIT_TABLE', 'COVERAGE_BITS', 'hidden_pixels', 'shown_pixels', 'warm_coverage_kernels']
