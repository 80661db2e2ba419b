"""The files a config names: package paths (``package://``), and how relative paths in a YAML
config are found.

**Package paths.** ``package://NAME/PATH`` names the file ``PATH`` inside the installed Python
package ``NAME``, wherever it is installed: ``package://internutopia/assets/scenes/empty.usd`` is
this package's empty scene. A config that names its scenes and assets this way works from any
folder and on any machine with the package installed (the shipped configs do). The path is
resolved when the config is built (so the config holds an absolute path, and the package must be
installed) and written back in this form by ``Config.to_yaml``. ``PATH`` may not leave the package
(``..``).

>>> from internutopia.core.config import TaskCfg
>>> task = TaskCfg(type='SingleInferenceTask', scene_asset_path='package://internutopia/assets/scenes/empty.usd')
>>> import os; os.path.isfile(task.scene_asset_path)
True
>>> task.model_dump(mode='json')['scene_asset_path']
'package://internutopia/assets/scenes/empty.usd'

**Relative paths.** One rule serves ``Config.from_yaml``, ``gymnasium.make('internutopia/Config-v0', config=PATH)``
and the ``internutopia`` command: a relative path is used as it is when it exists from the current
directory (so scripts that ran before keep running); otherwise it is looked up from the config
file's folder, then from that folder's parent (so the configs in ``configs/`` run from anywhere in
a checkout). A path found nowhere is left as it is and reported when it is loaded.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Annotated, Any

from pydantic import AfterValidator, PlainSerializer

#: The prefix of a package path.
PACKAGE_SCHEME = 'package://'
#: Packages whose files ``Config.to_yaml`` writes as package paths (grows with each package named).
_PACKAGES_WRITTEN = {'internutopia', 'internutopia_extension'}


def package_root(name: str) -> str:
    """The folder of the installed top-level package ``name`` (it is not imported).

    Raises:
        ValueError: no such package is installed.
    """
    spec = importlib.util.find_spec(name) if name.isidentifier() else None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise ValueError(f'{PACKAGE_SCHEME}{name}/...: no installed Python package {name!r} (a package path is '
                         f'{PACKAGE_SCHEME}PACKAGE/PATH, e.g. {PACKAGE_SCHEME}internutopia/assets/scenes/empty.usd)')
    return os.path.realpath(locations[0])


def resolve_package_path(path: str) -> str:
    """``path`` with a ``package://NAME/PATH`` prefix replaced by the package's folder; other paths unchanged.

    Raises:
        ValueError: the package is not installed, or ``PATH`` is empty or leaves the package.
    """
    if not path.startswith(PACKAGE_SCHEME):
        return path
    name, _, inner = path[len(PACKAGE_SCHEME):].partition('/')
    root = package_root(name)
    resolved = os.path.normpath(os.path.join(root, inner))
    if not inner or os.path.commonpath([root, resolved]) != root or resolved == root:
        raise ValueError(f'{path!r}: a package path must name a file inside the package {name!r}')
    _PACKAGES_WRITTEN.add(name)
    return resolved


def as_package_path(path: str) -> str:
    """``path`` as ``package://NAME/PATH`` when it is an absolute path inside a package this process
    knows (``internutopia``, ``internutopia_extension``, or one named by a package path); else unchanged."""
    if not os.path.isabs(path):
        return path
    real = os.path.realpath(path)
    for name in sorted(_PACKAGES_WRITTEN):
        try:
            root = package_root(name)
        except ValueError:
            continue
        if real != root and os.path.commonpath([root, real]) == root:
            return PACKAGE_SCHEME + name + '/' + os.path.relpath(real, root).replace(os.sep, '/')
    return path


def _resolved(path: str | None) -> str | None:
    return resolve_package_path(path) if isinstance(path, str) else path


#: A file path field of a config (scene, robot or object asset): a ``package://`` path is resolved
#: when the config is built and written back as one in JSON and YAML.
AssetPath = Annotated[str, AfterValidator(_resolved), PlainSerializer(as_package_path, return_type=str, when_used='json')]

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
    """``path`` if it exists; else it relative to ``config_dir`` or that folder's parent; else ``None``
    (a package path is resolved first)."""
    if path.startswith(PACKAGE_SCHEME):
        try:
            path = resolve_package_path(path)
        except ValueError:
            return None
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


__all__ = ['PACKAGE_SCHEME', 'AssetPath', 'as_package_path', 'file_fields', 'package_root', 'resolve_file',
           'resolve_package_path', 'with_resolved_files']
