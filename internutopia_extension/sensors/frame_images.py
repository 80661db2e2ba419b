"""Every slot's latest image of one camera, handed to callers without a copy.

A camera keeps one ``(env_num, H, W, ...)`` array per image kind (colour, depth) that the renderer
draws into, a row per slot. Observations of every slot hand out the array itself instead of a copy
(16 RGB-D frames of 320x240 are 10 MB a step, and copying them held the step's one Python thread
for about a millisecond while the render threads had nothing to do); from then on the array is the
caller's, and it is never written again: the next frames are drawn into a new array, into which
the rows of slots that are not drawn again are copied first. A second read with no frames drawn
since the first gets a copy, so no two observations share data (as Gymnasium's checker asks).

    >>> images = FrameImages(2, (2, 2), np.float32)  # two slots of 2x2 images
    >>> images.for_drawing(np.array([0, 1]))[:] = 1.0  # a renderer draws both slots
    >>> held = images.read(np.array([0, 1]))  # every slot: the array itself, now the caller's
    >>> images.for_drawing(np.array([1]))[1] = 2.0  # slot 1 drawn again, into a new array
    >>> float(held[1, 0, 0]), float(images.read(np.array([0, 1]))[1, 0, 0])
    (1.0, 2.0)
    >>> images.read(np.array([0, 1])) is images.read(np.array([0, 1]))  # nothing drawn between: copies
    False
"""

from __future__ import annotations

import numpy as np


def every_slot_in_order(slots: np.ndarray, count: int) -> bool:
    """Whether ``slots`` is ``0, 1, ..., count - 1``: a read of every slot, whose images are then
    the whole array (no copy)."""
    return len(slots) == count and bool((np.asarray(slots) == np.arange(count)).all())


class FrameImages:
    """Latest images of ``env_num`` slots, each of ``shape`` and ``dtype`` (see the module docstring)."""

    def __init__(self, env_num: int, shape: tuple[int, ...], dtype: type | np.dtype) -> None:
        # Zeros: the pages are only touched where a renderer writes.
        self._array = np.zeros((int(env_num), *shape), dtype=dtype)
        self._handed_out = False

    @property
    def array(self) -> np.ndarray:
        """The current images (read-only use: a caller may hold them)."""
        return self._array

    def for_drawing(self, slots: np.ndarray) -> np.ndarray:
        """The array to draw the new images of ``slots`` into (its rows; other rows keep their images)."""
        if self._handed_out:
            # Empty, not zeros: glibc hands back the last array's heap memory, which zeros would
            # fill first (0.3 ms for 16 colour frames of 320x240, on the step's one thread). Rows
            # are read only after the frames drawn into them (a render that fails leaves its slots
            # stale: they are drawn again before any read).
            fresh = np.empty_like(self._array)
            kept = np.ones(len(fresh), dtype=bool)
            kept[np.asarray(slots, dtype=np.intp)] = False
            if kept.any():
                fresh[kept] = self._array[kept]
            self._array, self._handed_out = fresh, False
        return self._array

    def read(self, slots: np.ndarray) -> np.ndarray:
        """The images of ``slots``: the array itself when they are every slot in order and it was not
        handed out before (the caller's from then on), a copy otherwise (two reads never share data)."""
        slots = np.asarray(slots, dtype=np.intp)
        if every_slot_in_order(slots, len(self._array)) and not self._handed_out:
            self._handed_out = True
            return self._array
        return self._array[slots]


__all__ = ['FrameImages', 'every_slot_in_order']
