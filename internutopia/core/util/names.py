"""Robot names: ``remove_suffix`` strips InternUtopia's env-id suffix (``h1_0`` -> ``h1``)."""

from __future__ import annotations


def remove_suffix(name: str) -> str:
    """``name`` without a trailing ``_<digits>`` (InternUtopia's env-id suffix of robot names).

    >>> remove_suffix('h1_0'), remove_suffix('h1'), remove_suffix('_1')
    ('h1', 'h1', '_1')
    """
    head, underscore, tail = name.rpartition('_')
    return head if underscore and head and tail.isdigit() else name


__all__ = ['remove_suffix']
