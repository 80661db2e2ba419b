"""Where a warning should point: the user's line that called into this project.

A warning raised deep inside a step (an action naming a robot the slot does not have) means
nothing at the line that raised it; ``warnings.warn(..., stacklevel=caller_stacklevel())`` shows
the caller's ``env.step(...)`` line instead, however many of the project's frames lie between,
on one process and on the Ray driver alike.
"""

from __future__ import annotations

import os
import sys

#: The folder holding both packages (``internutopia`` and ``internutopia_extension``).
_PACKAGES = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_OURS = tuple(os.path.join(_PACKAGES, name) + os.sep for name in ('internutopia', 'internutopia_extension'))


def caller_stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` in the calling function point at the first
    frame outside this project's packages (the user's code), or at the outermost frame.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter('always')
    ...     warnings.warn('here', stacklevel=caller_stacklevel())
    >>> caught[0].filename.startswith(_OURS)
    False
    """
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_OURS):
        frame, level = frame.f_back, level + 1
    return level


__all__ = ['caller_stacklevel']
