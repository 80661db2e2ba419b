"""Which optional extra a registered type needs, declared in one line, checked before anything runs.

A robot (controller, sensor, ...) type whose model or policy comes from an optional package
declares it once, next to the type, with :func:`needs_extra`; ``internutopia validate``, ``run``
and ``Env`` then report a missing package as one error naming the type, the extra and the command
that installs it, before anything is built (rather than a traceback from deep inside a build):

>>> needs_extra('robot', 'DemoRobot', 'demo', 'a_package_that_is_not_installed')
>>> print(missing_extra('robot', 'DemoRobot'))
robot type 'DemoRobot' needs the 'demo' extra (a_package_that_is_not_installed is not installed): pip install 'internutopia[demo]'
>>> missing_extra('robot', 'H1Robot') is None        # no declaration: nothing is needed
True
>>> needs_extra('robot', 'DemoRobot', None, 'json', install='pip install json')  # present here
>>> missing_extra('robot', 'DemoRobot') is None
True
>>> forget_extra('robot', 'DemoRobot')
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass

#: The kinds of typed config entries a declaration may name.
KINDS = ('robot', 'controller', 'sensor', 'task', 'metric', 'object', 'reward')


@dataclass(frozen=True)
class Extra:
    """What a type needs: the import names of its packages, the extra that installs them (``None``
    when no extra does) and the command to run (default: ``pip install 'internutopia[<extra>]'``)."""

    extra: str | None
    modules: tuple[str, ...]
    install: str

    def missing_modules(self) -> list[str]:
        """The import names of :attr:`modules` that cannot be found (a top-level name's module is
        not imported; a dotted name's parent packages are)."""
        missing = []
        for module in self.modules:
            try:
                found = importlib.util.find_spec(module) is not None
            except ValueError:  # (the module is in sys.modules without a __spec__: a stub a script put there)
                found = sys.modules.get(module) is not None
            except Exception:  # a parent package missing, or one that fails to import (a broken install)
                found = False
            if not found:
                missing.append(module)
        return missing


class MissingExtraError(ImportError, ValueError):
    """A config uses a type whose optional package is not installed; the message is one line
    naming the type, the extra and the install command. (A ``ValueError`` too: a config's bad
    value, which ``reset`` and ``Env`` report as they report an unknown type.)"""


_DECLARED: dict[tuple[str, str], Extra] = {}


def needs_extra(kind: str, type_name: str, extra: str | None, *modules: str, install: str | None = None) -> None:
    """Declare that ``kind`` type ``type_name`` needs the packages ``modules`` (import names),
    installed by the extra ``extra`` (or by ``install``, a command, when no extra does)."""
    if kind not in KINDS:
        raise ValueError(f'kind must be one of {list(KINDS)}; got {kind!r}')
    if not modules:
        raise ValueError(f'needs_extra({kind!r}, {type_name!r}, ...) names no module to look for')
    for module in modules:
        if not isinstance(module, str) or not module or module.startswith('.'):
            raise ValueError(f'needs_extra({kind!r}, {type_name!r}, ...): modules are absolute import names '
                             f'(a str such as \'numpy\' or \'pkg.sub\'); got {module!r}')
    if install is None:
        if extra is None:
            raise ValueError(f'needs_extra({kind!r}, {type_name!r}, ...): give the extra or the install command')
        install = f"pip install 'internutopia[{extra}]'"
    _DECLARED[(kind, type_name)] = Extra(extra, tuple(modules), install)


def forget_extra(kind: str, type_name: str) -> None:
    """Remove a declaration (for tests)."""
    _DECLARED.pop((kind, type_name), None)


def declared_extra(kind: str, type_name: str) -> Extra | None:
    """The declaration of ``kind`` type ``type_name``, if any."""
    return _DECLARED.get((kind, type_name))


def missing_extra(kind: str, type_name: str) -> str | None:
    """The one-line error for ``kind`` type ``type_name`` when a package it needs is missing, else ``None``."""
    declared = _DECLARED.get((kind, type_name))
    if declared is None:
        return None
    missing = declared.missing_modules()
    if not missing:
        return None
    what = f'the {declared.extra!r} extra' if declared.extra else ', '.join(missing)
    return (f'{kind} type {type_name!r} needs {what} ({", ".join(missing)} '
            f'{"is" if len(missing) == 1 else "are"} not installed): {declared.install}')


def check_extra(kind: str, type_name: str, where: str = '') -> None:
    """Raise :class:`MissingExtraError` when ``kind`` type ``type_name`` needs a package that is
    missing (the message starts with ``where``, the config field, when given)."""
    message = missing_extra(kind, type_name)
    if message is not None:
        raise MissingExtraError(f'{where}: {message}' if where else message)


def import_failure(needs: str, exc: ImportError, install: str) -> ImportError:
    """The error to raise when the packages ``needs`` names did not import: a missing one names
    itself and ``install``; an installed one that failed to import (a compiled part built for
    another NumPy, a version without a name the importer wants) says why, beside ``install``.

    >>> print(import_failure('X needs pyarrow', ModuleNotFoundError('no pyarrow', name='pyarrow'), 'pip install pyarrow'))
    X needs pyarrow (pyarrow is missing): pip install pyarrow
    >>> print(import_failure('X needs pyarrow', ImportError('pyarrow requires NumPy 2.0 or newer'), 'pip install pyarrow'))
    X needs pyarrow; it is installed but did not import (pyarrow requires NumPy 2.0 or newer); the versions this project tests: pip install pyarrow
    """
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return ImportError(f'{needs} ({exc.name} is missing): {install}')
    return ImportError(f'{needs}; it is installed but did not import ({exc}); the versions this project tests: {install}')


__all__ = ['KINDS', 'Extra', 'MissingExtraError', 'check_extra', 'declared_extra', 'forget_extra', 'import_failure',
           'missing_extra', 'needs_extra']
