"""Helpers for the nested observation dicts (leaves are arrays or lists with one row per slot)."""

from __future__ import annotations

from typing import Any


def row(tree: Any, index: int) -> Any:
    """Row ``index`` of every leaf of ``tree`` (nested dicts keep their structure).

    >>> row({'a': [1, 2], 'b': {'c': [[3], [4]]}}, 1)
    {'a': 2, 'b': {'c': [4]}}
    """
    if isinstance(tree, dict):
        return {key: row(value, index) for key, value in tree.items()}
    return tree[index]


__all__ = ['row']
