"""Helpers of the tests that watch a benchmark's process tree (Linux: read from /proc)."""

from __future__ import annotations


def command_line(pid: int) -> str:
    """A process's command line (its arguments joined by NULs); '' when it has ended since it was
    listed (a pool's probe worker ends soon after it starts)."""
    try:
        with open(f'/proc/{pid}/cmdline', encoding='utf-8') as stream:
            return stream.read()
    except OSError:
        return ''
