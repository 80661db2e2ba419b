"""A Griffe extension for the API reference: doctest examples become Python code blocks, and
Sphinx roles (``:class:`...```) become Markdown code.

Docstrings in this project show examples as bare ``>>>`` sessions (run by doctest), which Markdown
would otherwise render as text (and read ``obs['h1']['position']`` as a link reference).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r':(?:class|func|meth|mod|attr|data|obj|exc|py:\w+):`(~?)([^`]+)`')


def plain_roles(text: str) -> str:
    """Sphinx roles (``:class:`~a.b.C```) as Markdown code (`` `C` ``), outside code fences."""

    def code(match: re.Match) -> str:
        target = match.group(2)
        return f'`{target.rsplit(".", 1)[-1] if match.group(1) else target}`'

    parts = re.split(r'(^\s*```.*?^\s*```)', text, flags=re.S | re.M)
    return ''.join(part if i % 2 else _ROLE.sub(code, part) for i, part in enumerate(parts))


def fence_doctests(text: str) -> str:
    """Wrap every run of ``>>>`` lines and their output (up to a blank line) in a ```python fence."""
    lines = text.split('\n')
    out: list[str] = []
    in_session = False
    in_fence = False
    indent = ''
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith('```'):
            in_fence = not in_fence
        if not in_fence and not in_session and stripped.startswith('>>>'):
            indent = line[:len(line) - len(stripped)]
            out.append(f'{indent}```python')
            in_session = True
        elif in_session and not stripped:
            out.append(f'{indent}```')
            in_session = False
        out.append(line)
    if in_session:
        out.append(f'{indent}```')
    return '\n'.join(out)


class DoctestFences(griffe.Extension):
    """Rewrite each object's docstring once it is loaded (static analysis or inspection)."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = plain_roles(fence_doctests(obj.docstring.value))
