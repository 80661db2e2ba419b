"""``log``: the package's logger (InternUtopia's ``from internutopia.core.util import log``).

A standard :class:`logging.Logger` named ``internutopia``; extensions call ``log.info(...)``,
``log.warning(...)`` and the like. It logs warnings and above unless configured otherwise
(``logging.getLogger('internutopia').setLevel(logging.INFO)``).
"""

from __future__ import annotations

import logging

log = logging.getLogger('internutopia')

__all__ = ['log']
