"""Ship the registered extensions (built-in and the user's own) to Ray workers.

A worker process starts with empty registries. The driver describes what it has registered
(:func:`collect`); each actor rebuilds the same registries (:func:`install`):

- installed extensions (ours included): :func:`internutopia.core.plugins.load_extensions`;
- user classes defined in an importable module: unless the module is installed in
  site-packages, the source of its top-level package (or single file) travels with the actor's
  arguments as a zip (the job of Ray's ``py_modules``, which only takes local paths at
  ``ray.init`` time, while an env may join a Ray someone else started); the actor unpacks it,
  puts it first on ``sys.path`` and imports the module, so its ``register`` decorators and config
  classes run exactly as on the driver;
- user classes defined in the driver script (``__main__``) or inside a function: pickled by
  value with ``ray.cloudpickle`` and registered under the same names, config classes included
  (as InternUtopia ships them).
"""

from __future__ import annotations

import hashlib
import importlib
import io
import logging
import os
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from internutopia.core.config.base import config_families

_BUILTIN_PACKAGES = ('internutopia', 'internutopia_extension')
_MAX_SOURCE_BYTES = 64 * 1024 * 1024

logger = logging.getLogger(__name__)


def registries() -> dict[str, Any]:
    """Every class registry of internutopia, by kind."""
    from internutopia.core.controller.base import BaseController
    from internutopia.core.metric.base import BaseMetric
    from internutopia.core.object.base import BaseObject
    from internutopia.core.reward.base import BaseReward
    from internutopia.core.robot.base import BaseRobot
    from internutopia.core.sensor.base import BaseSensor
    from internutopia.core.task.base import BaseTask

    return {'robot': BaseRobot.registry, 'controller': BaseController.registry, 'sensor': BaseSensor.registry,
            'task': BaseTask.registry, 'metric': BaseMetric.registry, 'object': BaseObject.registry,
            'reward': BaseReward.registry}


def _is_builtin(cls: type) -> bool:
    return cls.__module__.split('.')[0] in _BUILTIN_PACKAGES


def _is_installed(module: ModuleType) -> bool:
    path = getattr(module, '__file__', None) or ''
    return 'site-packages' in path or 'dist-packages' in path


@dataclass
class Extensions:
    """What a worker needs to mirror the driver's registries."""

    modules: list[str] = field(default_factory=list)
    """User modules to import in the worker (their decorators register the classes)."""
    sources: dict[str, bytes] = field(default_factory=dict)
    """Zipped source of the user packages / single-file modules that are not installed, by name."""
    entries: list[tuple[str, str, str, bytes]] = field(default_factory=list)
    """``(table, key, name, class pickle)``: table ``'registry'`` (key: robot, task, ...) or
    ``'family'`` (key: RobotCfg, TaskCfg, ...)."""
    skipped: list[str] = field(default_factory=list)
    """User classes that could not be shipped, and why."""


def _zip_source(module: ModuleType) -> bytes | None:
    """The source of a top-level package or single-file module as a zip, or ``None`` if it has none."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w', zipfile.ZIP_DEFLATED) as archive:
        if hasattr(module, '__path__'):
            paths = list(module.__path__)
            if len(paths) != 1:
                return None
            root = paths[0]
            base = os.path.dirname(root)
            for directory, subdirs, files in os.walk(root):
                subdirs[:] = sorted(d for d in subdirs if not d.startswith('.') and d != '__pycache__')
                for name in sorted(files):
                    if name.endswith(('.pyc', '.pyo')):
                        continue
                    path = os.path.join(directory, name)
                    archive.write(path, os.path.relpath(path, base))
        else:
            source = getattr(module, '__file__', None)
            if not source or not source.endswith('.py'):
                return None
            archive.write(source, os.path.basename(source))
    data = buffer.getvalue()
    if len(data) > _MAX_SOURCE_BYTES:
        raise ValueError(f'the extension package {module.__name__!r} is {len(data) >> 20} MiB zipped; install it on '
                         'every node (pip install) or put it in working_dir instead of shipping it with each actor')
    return data


def collect() -> Extensions:
    """Describe the user's registered classes for :func:`install` (run on the driver).

    A class that cannot be pickled is left out with a warning: it stays unknown in the workers,
    which only matters if an episode uses it (pickling that episode then fails with a message
    naming it).
    """
    import ray.cloudpickle as cloudpickle

    found: list[tuple[str, str, str, type]] = []  # (table, key, name, class)
    for kind, registry in registries().items():
        found += [('registry', kind, name, cls) for name, cls in registry._classes.items() if not _is_builtin(cls)]
    for root_name, root in config_families().items():
        found += [('family', root_name, name, cls) for name, cls in root._family_table.items() if not _is_builtin(cls)]
    extensions = Extensions()
    for table, key, name, cls in found:
        module_name = cls.__module__
        try:
            blob = cloudpickle.dumps(cls)
        except Exception as exc:
            extensions.skipped.append(f'{key} {name!r}: {cls.__qualname__} cannot be pickled ({exc})')
            continue
        extensions.entries.append((table, key, name, blob))
        if module_name == '__main__' or module_name in extensions.modules:
            continue
        extensions.modules.append(module_name)
        top_name = module_name.split('.')[0]
        top = sys.modules.get(top_name)
        if top is None or _is_installed(top) or top_name in extensions.sources:
            continue
        source = _zip_source(top)
        if source is not None:
            extensions.sources[top_name] = source
    if extensions.skipped:
        logger.warning('not shipped to Ray workers (unknown there):\n  %s', '\n  '.join(extensions.skipped))
    return extensions


def install(extensions: Extensions) -> list[str]:
    """Mirror the driver's registries in this (worker) process; returns what could not be mirrored.

    Call it before unpickling anything that may hold user classes (episodes, configs): that is
    why actors take those as :func:`pack`-ed bytes. A module or class that fails here is left out
    (an episode that needs it fails as an unknown type), so one broken, unrelated registration
    does not stop the run; each failure is described in the list returned (a runner sends it to
    the driver, which warns it: a worker's own output is not shown). A module whose import raised
    halfway leaves none of its registrations behind.
    """
    import pickle

    from internutopia.core.plugins import load_extensions, undo_point

    problems: list[str] = []
    load_extensions()
    for name, data in extensions.sources.items():
        _unpack(name, data)
    for module_name in extensions.modules:
        undo = undo_point()
        try:
            importlib.import_module(module_name)
        except Exception as exc:
            undo(module_name.split('.')[0])  # (what it registered before it raised, and its modules, forgotten)
            problems.append(f'cannot import extension module {module_name} in a Ray worker: {type(exc).__name__}: {exc}')
    tables, roots = registries(), config_families()
    for table, key, name, blob in extensions.entries:
        undo = undo_point()
        try:
            cls = pickle.loads(blob)  # (by reference, its class imports its module again)
        except Exception as exc:
            undo('')
            problems.append(f'cannot load extension {key} {name!r} in a Ray worker: {type(exc).__name__}: {exc}')
            continue
        if table == 'registry':
            tables[key].register(name)(cls)
        else:
            roots[key]._family_table[name] = cls
    for problem in problems:
        logger.warning('%s', problem)
    return problems


def _unpack(name: str, data: bytes) -> None:
    """Unpack a shipped source zip (once per content, shared by the workers of a machine) and put
    it first on ``sys.path``."""
    digest = hashlib.sha256(data).hexdigest()[:16]
    root = os.path.join(tempfile.gettempdir(), 'internutopia_ray_modules', f'{name}-{digest}')
    if not os.path.isdir(root):
        os.makedirs(os.path.dirname(root), exist_ok=True)
        staging = tempfile.mkdtemp(dir=os.path.dirname(root))
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            archive.extractall(staging)
        try:
            os.rename(staging, root)
        except OSError:  # another worker got there first
            import shutil

            shutil.rmtree(staging, ignore_errors=True)
    if root not in sys.path:
        sys.path.insert(0, root)


def pack(obj: Any) -> bytes:
    """Pickle ``obj`` (user classes by reference, ``__main__`` ones by value) for :func:`unpack`."""
    import ray.cloudpickle as cloudpickle

    return cloudpickle.dumps(obj)


def unpack(data: bytes) -> Any:
    """Inverse of :func:`pack`; run after :func:`install`."""
    import pickle

    return pickle.loads(data)
