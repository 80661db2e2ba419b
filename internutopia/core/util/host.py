"""The machine we run on: is a display reachable, are we in a container (InternUtopia's helpers)."""

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


__all__ = ['has_display', 'is_in_container']
