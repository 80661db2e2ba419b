"""Small helpers that InternUtopia scripts import from ``internutopia.core.util``.

They live in :mod:`.host` (``has_display``, ``is_in_container``), :mod:`.names` (``remove_suffix``)
and :mod:`.log` (``log``); the other modules of this package are named for their job (``math``,
``rotations``, ``jit``, ``video``, ...).
"""

from internutopia.core.util.host import has_display, is_in_container
from internutopia.core.util.log import log  # (the logger, as InternUtopia exports it)
from internutopia.core.util.names import remove_suffix

__all__ = ['has_display', 'is_in_container', 'log', 'remove_suffix']
