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


__all__ = ['has_display']
