"""Small helpers that InternUtopia scripts import from ``internutopia.core.util``."""

from __future__ import annotations

import os
import sys


def has_display() -> bool:
    """True when a graphical display is reachable (an X11 or Wayland session, or macOS/Windows).

    >>> import os
    >>> os.environ.pop('DISPLAY', None) and None
    >>> os.environ.pop('WAYLAND_DISPLAY', None) and None
    >>> has_display() if os.sys.platform.startswith('linux') else False
    False
    """
    if sys.platform == 'darwin' or os.name == 'nt':
        return True
    return bool(os.environ.get('DISPLAY') or os.environ.get('WAYLAND_DISPLAY'))


def is_in_container() -> bool:
    """True inside a Docker container (InternUtopia's helper)."""
    return os.path.exists('/.dockerenv')


def remove_suffix(name: str) -> str:
    """``name`` without a trailing ``_<digits>`` (InternUtopia's env-id suffix of robot names).

    >>> remove_suffix('h1_0'), remove_suffix('h1'), remove_suffix('_1')
    ('h1', 'h1', '_1')
    """
    head, underscore, tail = name.rpartition('_')
    return head if underscore and head and tail.isdigit() else name


from internutopia.core.util.log import log  # noqa: E402  (the logger, as InternUtopia exports it)

__all__ = ['has_display', 'is_in_container', 'log', 'remove_suffix']
