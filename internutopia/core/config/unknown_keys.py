"""What a config does with a key it does not declare, and the switch that makes such keys errors.

InternUtopia's configs accept keys they do not declare: most of its classes drop them (pydantic's
default), and ``ControllerCfg``, ``TaskCfg``, ``RewardCfg`` and ``DistributionCfg`` keep them as
attributes. Scripts written for it (and the packages built on it) pass such keys, so they are
accepted here too, but never silently: each one is reported with an
:class:`UnknownConfigKeyWarning` that names it, its config class and the nearest declared key.

>>> import warnings
>>> from internutopia.core.config import ControllerCfg, SimConfig, strict_config
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter('always')
...     cfg = ControllerCfg(name='move', type='MyController', steps_per_action=4)
>>> cfg.steps_per_action
4
>>> print(caught[0].message)  # doctest: +ELLIPSIS
unknown key 'steps_per_action' of ControllerCfg: kept as an attribute...; nearest known key: 'sub_controllers'...

Strict mode turns every unknown key into a validation error that names the key, its config class,
the nearest declared keys and all of them. Turn it on for a block with :func:`strict_config`,
for the process with :func:`set_strict_config`, or with the environment variable
``INTERNUTOPIA_STRICT_CONFIG=1``; ``internutopia validate`` always checks files strictly.

>>> with strict_config():
...     SimConfig(physcs_dt=0.01)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for SimConfig
physcs_dt
  unknown field 'physcs_dt' of SimConfig; did you mean 'physics_dt'? valid fields: [...] [type=extra_forbidden, ...]
"""

from __future__ import annotations

import difflib
import os
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

#: Environment variable that turns strict mode on for the process (``1``, ``true``, ``yes``, ``on``).
STRICT_ENV = 'INTERNUTOPIA_STRICT_CONFIG'

Mode = Literal['warn', 'error', 'quiet']
"""``warn``: accept with a warning; ``error``: reject; ``quiet``: accept, already reported elsewhere."""

_MODE: ContextVar[Mode | None] = ContextVar('internutopia_config_unknown_keys', default=None)
_process_strict: list[bool | None] = [None]


class UnknownConfigKeyWarning(UserWarning):
    """A config was given a key it does not declare; the key was ignored or kept (see the message)."""


def _env_strict() -> bool:
    return os.environ.get(STRICT_ENV, '').strip().lower() in ('1', 'true', 'yes', 'on')


def current_mode() -> Mode:
    """How unknown keys are handled here and now: a :func:`strict_config` block, else
    :func:`set_strict_config`, else ``INTERNUTOPIA_STRICT_CONFIG``, else ``'warn'``."""
    mode = _MODE.get()
    if mode is not None:
        return mode
    strict = _process_strict[0]
    if strict is None:
        strict = _env_strict()
    return 'error' if strict else 'warn'


def is_strict() -> bool:
    """Whether unknown config keys are errors here and now."""
    return current_mode() == 'error'


def set_strict_config(enabled: bool | None) -> None:
    """Make unknown config keys errors (``True``) or warnings (``False``) for the whole process;
    ``None`` goes back to the ``INTERNUTOPIA_STRICT_CONFIG`` environment variable."""
    if enabled is not None and not isinstance(enabled, bool):
        raise TypeError(f'set_strict_config takes True, False or None; got {enabled!r}')
    _process_strict[0] = enabled


@contextmanager
def strict_config(enabled: bool = True) -> Iterator[None]:
    """Within the block (this thread or task only), unknown config keys are errors (or, with
    ``enabled=False``, warnings whatever the process setting)."""
    token = _MODE.set('error' if enabled else 'warn')
    try:
        yield
    finally:
        _MODE.reset(token)


@contextmanager
def unknown_keys_mode(mode: Mode) -> Iterator[None]:
    """Within the block, handle unknown keys as ``mode`` says (used by the YAML loader, which
    reports them itself with their line numbers)."""
    token = _MODE.set(mode)
    try:
        yield
    finally:
        _MODE.reset(token)


def nearest_keys(key: str, known: Iterable[str]) -> list[str]:
    """The declared keys closest to ``key`` (up to three close ones, else the single closest)."""
    names = sorted(known)
    close = difflib.get_close_matches(key, names, n=3, cutoff=0.6)
    return close or difflib.get_close_matches(key, names, n=1, cutoff=0.0)


def _quoted(names: list[str]) -> str:
    return ', '.join(repr(n) for n in names)


def error_message(owner: str, key: Any, known: Iterable[str], hint: str | None = None) -> str:
    """The error for an unknown ``key`` of the config class named ``owner`` (``hint``: what to do
    instead, said in place of the nearest declared keys)."""
    names = sorted(known)
    near = nearest_keys(str(key), names)
    said = f'{hint}; ' if hint else f'did you mean {_quoted(near)}? ' if near else ''
    return f'unknown field {key!r} of {owner}; {said}valid fields: {names}'


def warning_message(owner: str, key: Any, known: Iterable[str], kept: bool, kept_where: str | None = None,
                    hint: str | None = None) -> str:
    """The warning for an unknown ``key`` of ``owner`` that was kept (or ignored); ``kept_where``
    says where a kept key is kept, for a class that keeps it elsewhere than as an attribute;
    ``hint``: what to do instead, said in place of the nearest declared key."""
    what = ((kept_where or 'kept as an attribute, as InternUtopia keeps unknown keys of this class') if kept
            else 'ignored, as InternUtopia ignores it')
    said = hint or f'nearest known key: {_quoted(nearest_keys(str(key), known)[:1]) or "none"}'
    return (f'unknown key {key!r} of {owner}: {what}; {said} '
            f'(strict mode makes this an error: {STRICT_ENV}=1 or internutopia.core.config.strict_config())')


def _caller_stacklevel() -> int:
    """The stack level of the first frame outside pydantic and this package's config code, so a
    warning points at the user's line."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None:
        name = frame.f_globals.get('__name__', '')
        if not (name.startswith(('pydantic', 'internutopia.core.config', 'typing')) or name == __name__):
            return level
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return 1


def warn_unknown(owner: str, keys: Iterable[Any], known: Iterable[str], kept: bool, where: str = '',
                 kept_where: str | None = None, hints: Mapping[Any, str] | None = None) -> None:
    """One :class:`UnknownConfigKeyWarning` per key (``where``: a ``file:line: path: `` prefix;
    ``kept_where`` and a key's entry in ``hints``: see :func:`warning_message`)."""
    names = list(known)
    hints = hints or {}
    level = _caller_stacklevel()
    for key in keys:
        warnings.warn(where + warning_message(owner, key, names, kept, kept_where, hints.get(key)),
                      UnknownConfigKeyWarning, stacklevel=level)


__all__ = ['STRICT_ENV', 'UnknownConfigKeyWarning', 'current_mode', 'error_message', 'is_strict', 'nearest_keys',
           'set_strict_config', 'strict_config', 'unknown_keys_mode', 'warn_unknown', 'warning_message']
