"""This process's control groups: where their limit files are (memory, CPU), for the checks that
size what an env may take (:mod:`.memory`, :mod:`.cpus`).

A limit set on a group binds every group below it, so each lookup walks from this process's own
group up to the hierarchy's root. cgroup v2 keeps every controller in one unified hierarchy; v1
has a hierarchy per controller (``/sys/fs/cgroup/memory``, ``/sys/fs/cgroup/cpu``).
"""

from __future__ import annotations

import os

#: Where the cgroup file systems are mounted, and the file naming this process's cgroups
#: (module attributes so that tests can point them at a made-up tree).
CGROUP_ROOT = '/sys/fs/cgroup'
PROC_CGROUP = '/proc/self/cgroup'


def cgroup_folders(v1_controller: str) -> list[tuple[str, bool]]:
    """``(folder, is_v2)`` of this process's group and of every group above it: in the unified
    hierarchy (v2) and in ``v1_controller``'s hierarchy (v1), whichever this system has."""
    try:
        with open(PROC_CGROUP, encoding='utf-8') as stream:
            lines = stream.read().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        parts = line.split(':', 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == '':
            base, v2 = CGROUP_ROOT, True
            if not os.path.exists(os.path.join(base, 'cgroup.controllers')):
                base = os.path.join(CGROUP_ROOT, 'unified')  # a hybrid layout
        elif v1_controller in controllers.split(','):
            base, v2 = os.path.join(CGROUP_ROOT, v1_controller), False
        else:
            continue
        folder = os.path.normpath(os.path.join(base, path.lstrip('/')))
        while True:  # this group and its ancestors: a parent's limit binds its children too
            found.append((folder, v2))
            if folder == os.path.normpath(base) or not folder.startswith(os.path.normpath(base)):
                break
            folder = os.path.dirname(folder)
    return found


def read_text(path: str) -> str | None:
    """The stripped text of a cgroup file, ``None`` where it cannot be read."""
    try:
        with open(path, encoding='ascii') as stream:
            return stream.read().strip()
    except OSError:
        return None


def read_int(path: str) -> int | None:
    """A cgroup file's integer, ``None`` where it cannot be read or says ``max`` (no limit)."""
    text = read_text(path)
    if text is None or text == 'max':
        return None
    try:
        return int(text)
    except ValueError:
        return None


__all__ = ['CGROUP_ROOT', 'PROC_CGROUP', 'cgroup_folders', 'read_int', 'read_text']
