"""The files a config names, and how relative paths in a YAML config are found.

One rule serves ``Config.from_yaml``, ``gymnasium.make('internutopia/Config-v0', config=PATH)``
and the ``internutopia`` command: a relative path is used as it is when it exists from the current
directory (so scripts that ran before keep running); otherwise it is looked up from the config
file's folder, then from that folder's parent (so the configs in ``configs/`` run from anywhere in
a checkout). A path found nowhere is left as it is and reported when it is loaded.
"""

from __future__ import annotations

import os
from typing import Any

#: ``(loc, path)``: where in a config a file is named (``('task_configs', 0, 'scene_asset_path')``).
FileField = tuple[tuple, str]


def file_fields(config: Any) -> list[FileField]:
    """``(loc, path)`` of every file a validated :class:`~internutopia.core.config.Config` names."""
    out: list[FileField] = []
    for t, task in enumerate(config.task_configs):
        if task.scene_asset_path:
            out.append((('task_configs', t, 'scene_asset_path'), task.scene_asset_path))
        for r, robot in enumerate(task.robots):
            if robot.usd_path:
                out.append((('task_configs', t, 'robots', r, 'usd_path'), robot.usd_path))
        for o, obj in enumerate(task.objects):
            path = getattr(obj, 'usd_path', None)
            if path:
                out.append((('task_configs', t, 'objects', o, 'usd_path'), path))
    return out


def resolve_file(path: str, config_dir: str) -> str | None:
    """``path`` if it exists; else it relative to ``config_dir`` or that folder's parent; else ``None``."""
    if os.path.isabs(path) or os.path.exists(path):
        return path if os.path.exists(path) else None
    for base in (config_dir, os.path.dirname(config_dir)):
        candidate = os.path.join(base, path)
        if os.path.exists(candidate):
            return candidate
    return None


def with_resolved_files(config: Any, config_dir: str) -> tuple[Any, list[FileField]]:
    """``config`` with each relative file path replaced by where :func:`resolve_file` found it, and
    the ``(loc, path)`` of the files found nowhere (left unchanged). ``config`` is not modified."""
    tasks = list(config.task_configs)
    missing: list[FileField] = []
    changed = False
    for loc, path in file_fields(config):
        found = resolve_file(path, config_dir)
        if found is None:
            missing.append((loc, path))
        elif found != path:
            changed = True
            tasks[loc[1]] = _with_path(tasks[loc[1]], loc[2:], found)
    return (config.update(task_configs=tasks) if changed else config), missing


def _with_path(task: Any, loc: tuple, value: str) -> Any:
    """A copy of ``task`` with the file field at ``loc`` (relative to the task) set to ``value``."""
    if loc[0] == 'scene_asset_path':
        return task.update(scene_asset_path=value)
    items = list(getattr(task, loc[0]))
    items[loc[1]] = items[loc[1]].update(usd_path=value)
    return task.update(**{loc[0]: items})


__all__ = ['file_fields', 'resolve_file', 'with_resolved_files']
