"""Extension packages announce themselves; the core loads them without importing them by name.

The core never imports the packages above it (``internutopia_extension`` or a user's own). A
package that registers robots, controllers, sensors, tasks, metrics, objects or rewards declares
a Python entry point in the group ``internutopia.extensions`` whose object is a function taking no
arguments that registers its types (or a module whose import does)::

    # pyproject.toml of an extension package
    [project.entry-points."internutopia.extensions"]
    my_robots = "my_robots:import_extensions"

:func:`load_extensions` runs every such entry point once per process; ``vec_env.Env``,
``Config.from_yaml`` and the Ray workers call it, so configs naming those types work without an
explicit import. A package can also be added at run time with :func:`add_extension` (the
``internutopia`` package adds ``internutopia_extension`` this way too, so a source checkout that
was never pip-installed still finds the built-in types). See ``docs/extensions.md``.

>>> calls = []
>>> add_extension('doc_example', lambda: calls.append('registered'))
>>> load_extensions() and None; load_extensions() and None; calls
['registered']
"""

from __future__ import annotations

import importlib.metadata
import sys
import threading
from collections.abc import Callable
from typing import Any

from internutopia.core.registry import loading_extensions
from internutopia.core.registry import snapshot as registry_snapshot

__all__ = ['ENTRY_POINT_GROUP', 'add_extension', 'load_extensions', 'loaded_extensions']

#: The entry-point group extension packages declare.
ENTRY_POINT_GROUP = 'internutopia.extensions'

_added: dict[str, Callable[[], Any]] = {}
_loaded: list[str] = []
_done: set[str] = set()  # names of the extensions run (an added one stands for entry points of its name)
_done_entries: set[tuple[str, str]] = set()  # (name, value) of the entry points run
_running: set[tuple[str, str]] = set()  # being loaded now (one whose loading builds an env or a config)
_lock = threading.RLock()
_scanned: list[importlib.metadata.EntryPoint] | None = None  # installed distributions do not change while we run


def add_extension(name: str, loader: Callable[[], Any]) -> None:
    """Have :func:`load_extensions` call ``loader()`` (once per process) under ``name``.

    ``name`` is the key entry points use too: an entry point of the same name is not run again.
    A loader added after a :func:`load_extensions` call runs at the next call.
    """
    with _lock:
        _added.setdefault(name, loader)


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    global _scanned
    if _scanned is None:
        _scanned = sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)
    return _scanned


def load_extensions() -> list[str]:
    """Run every extension not run yet: those added with :func:`add_extension`, then the entry points
    of the group :data:`ENTRY_POINT_GROUP` of every installed distribution, by name.

    An entry point is one extension per name and target: two distributions declaring the same
    name for different targets are both loaded (the name is listed twice), one declaring the same
    target twice is loaded once, and one of an added extension's name is not run (the added loader
    stands for it). An extension whose loading calls this function again (it builds an env or
    reads a config at import) is not run a second time from within itself.

    Returns the names of all extensions loaded so far in this process, in load order.

    A failed extension leaves nothing behind: the types it registered before failing are
    unregistered again (the registries and config families are as they were before it ran) and the
    modules of its package imported meanwhile are forgotten, so the next call runs it anew from
    scratch (once its cause is fixed) instead of finding it half loaded.

    Raises:
        ImportError: an extension failed to load (the message names it and what it points to).
    """
    with _lock:
        pending: list[tuple[tuple[str, str], str, Callable[[], Any]]] = [
            ((name, ''), name, loader) for name, loader in _added.items()]
        for entry in _entry_points():
            if entry.name not in _added:
                pending.append(((entry.name, entry.value), entry.value, _entry_point_loader(entry)))
        for key, what, load in pending:
            name, value = key
            if key in _running or (name in _done if not value else key in _done_entries):
                continue
            _running.add(key)
            undo = undo_point()
            try:
                with loading_extensions():  # (a class a script registered under a built-in name stays)
                    load()
            except Exception as exc:
                undo(value.split(':')[0].split('.')[0] if value else '')
                raise ImportError(f'internutopia extension {name!r} ({what}) failed to load: {exc}') from exc
            finally:
                _running.discard(key)
            _done.add(name)
            if value:
                _done_entries.add(key)
            _loaded.append(name)
        return list(_loaded)


def undo_point() -> Callable[[str], None]:
    """What undoes a failed extension load (here, or a user's module in a Ray worker:
    :func:`internutopia.core.distribution.extensions.install`): ``undo(package)`` puts every registry and config family
    back as it was now, and forgets the modules imported since (of ``package`` and of the packages
    whose classes were dropped), so that loading the extension again imports them, and so registers
    their classes, anew. The core's own modules and third-party imports are kept."""
    restore_registries = registry_snapshot()
    # (the config families: the roots' tables of type -> config class; read through sys.modules, as the
    # config package imports this module: none exists before it is imported)
    config_base = sys.modules.get('internutopia.core.config.base')
    roots = config_base.config_families().values() if config_base is not None else ()
    families = {root: dict(root._family_table) for root in roots}
    modules_before = set(sys.modules)

    def undo(package: str) -> None:
        dropped = restore_registries()
        for root, table in families.items():
            dropped += [cls for type_name, cls in root._family_table.items() if table.get(type_name) is not cls]
            root._family_table.clear()
            root._family_table.update(table)
        packages = {getattr(cls, '__module__', '').split('.')[0] for cls in dropped} | {package}
        packages -= {'', 'internutopia', '__main__', 'builtins'}
        for module in list(sys.modules):
            if module not in modules_before and module.split('.')[0] in packages:
                del sys.modules[module]

    return undo


def _entry_point_loader(entry: importlib.metadata.EntryPoint) -> Callable[[], Any]:
    def load() -> None:
        target = entry.load()
        if callable(target):  # a registering function; a module registered its types on import
            target()

    return load


def loaded_extensions() -> list[str]:
    """Names of the extensions loaded so far in this process (see :func:`load_extensions`)."""
    with _lock:
        return list(_loaded)
