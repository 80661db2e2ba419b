"""What each upstream name is here: same, improved (how) or absent (why).

:func:`status_of` looks a dotted name up in :data:`NOTES` by its longest matching prefix; names
without a note are ``same`` when they exist (the probe checks that they do).
"""

from __future__ import annotations

SAME = 'same'
IMPROVED = 'improved'
ABSENT = 'absent'

#: ``dotted prefix -> (status, how or why)``; the longest prefix wins.
NOTES: dict[str, tuple[str, str]] = {}


def status_of(path: str) -> tuple[str, str]:
    """``(status, note)`` of an upstream name (``('same', '')`` when nothing is noted)."""
    parts = path.split('.')
    for index in range(len(parts), 0, -1):
        note = NOTES.get('.'.join(parts[:index]))
        if note is not None:
            return note
    return SAME, ''
