"""Where a warning should point: the user's line that called into this project.

A warning raised deep inside a step (an action naming a robot the slot does not have) means
nothing at the line that raised it; ``warnings.warn(..., stacklevel=caller_stacklevel())`` shows
the caller's ``env.step(...)`` line instead, however many of the project's frames lie between,
on one process and on the Ray driver alike. :func:`warn_per_episode` does the same for a text
made for one episode, without leaving it in the caller module's warning registry.
"""

from __future__ import annotations

import os
import sys
import warnings

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


def warn_per_episode(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category, stacklevel=caller_stacklevel())`` for a text made for one
    episode (it names the episode's index, or a count that moves on): shown, filtered and pointed at
    the caller's line as that call would, but never entered in the caller module's
    ``__warningregistry__``.

    Python's ``'default'`` filter (a script's, for most warnings) enters every distinct text it
    shows in the registry of the module the warning points at, for the life of the process, so
    that the same text is not shown twice there; a text that is never the same twice would hold
    one entry per episode: a long run whose episodes fail to start one by one grew by about 0.5 kB
    per failed episode, without end (docs/reliability.md, "Memory stays flat"). Such a text is
    shown every time either way.

    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter('default')
    ...     for index in range(3):
    ...         warn_per_episode(f'episode {index} failed', RuntimeWarning)
    >>> [str(w.message) for w in caught], caught[0].filename.startswith(_OURS)
    (['episode 0 failed', 'episode 1 failed', 'episode 2 failed'], False)
    >>> len(globals().get('__warningregistry__', {})) <= 1  # (at most its 'version' stamp)
    True
    """
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_OURS):
        frame = frame.f_back
    # (what warnings.warn finds at that frame, but registry=None: a throwaway registry of its own;
    # the module name too, so that filters naming the caller's module still apply. Not its globals:
    # a `python -c` script's loader raises ImportError when asked for its source line)
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get('__name__', '<string>'), registry=None)


__all__ = ['caller_stacklevel', 'warn_per_episode']
