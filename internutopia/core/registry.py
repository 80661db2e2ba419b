"""Name -> class tables for robots, controllers, sensors, tasks, metrics, objects and rewards.

Each base class owns one :class:`Registry`; extensions add to it with a decorator:

>>> from internutopia.core.registry import Registry
>>> robots = Registry('robot')
>>> @robots.register('Rover')
... class Rover: ...
>>> robots.get('Rover') is Rover
True
>>> robots.maker('Rover') is Rover   # what the core calls to build one: the class itself
True
>>> robots.get('Rovr')
Traceback (most recent call last):
...
ValueError: unknown robot type 'Rovr'; registered robot types: ['Rover']

A layer above the core can run some classes through adapters (the per-slot layer,
:mod:`internutopia.per_slot`, does so for classes written InternUtopia's way): it hands the
registry one function deciding, once per class, what builds its objects.

>>> robots.adapt_with(lambda cls: (lambda *args: ('adapted', cls.__name__)) if cls.__name__ == 'Rover' else None)
>>> robots.maker('Rover')()
('adapted', 'Rover')
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar('T', bound=type)

#: ``adapter(cls)``: what builds objects of ``cls`` (called with the arguments the core passes the
#: class), or ``None`` when the class itself does.
Adapter = Callable[[type], Callable[..., Any] | None]

#: True while the env loads the installed extensions by itself (:func:`loading_extensions`).
_LOADING_EXTENSIONS: contextvars.ContextVar[bool] = contextvars.ContextVar('internutopia_loading_extensions', default=False)


@contextlib.contextmanager
def loading_extensions() -> Iterator[None]:
    """Registrations made inside this block (the extensions ``vec_env.Env`` and the config loader
    load by themselves, :func:`internutopia.core.plugins.load_extensions`) do not replace a class
    a script registered before under the same name.

    InternUtopia's env loads no extension: a package that registers its own class under a built-in
    name (InternManip's ``@BaseTask.register('ManipulationTask')``) keeps it there, and it must here too.

    >>> tasks = Registry('task')
    >>> @tasks.register('Pick')
    ... class MyPick: ...
    >>> with loading_extensions():
    ...     @tasks.register('Pick')
    ...     class BuiltinPick: ...
    >>> tasks.get('Pick') is MyPick
    True
    """
    token = _LOADING_EXTENSIONS.set(True)
    try:
        yield
    finally:
        _LOADING_EXTENSIONS.reset(token)


class Registry(Generic[T]):
    """A table of classes of one kind, keyed by the ``type`` string configs use."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._classes: dict[str, T] = {}
        #: The table itself, ``{name: class}`` (InternUtopia's ``BaseRobot.robots`` and the like).
        self.table = self._classes
        self._adapter: Adapter | None = None
        #: ``{name: (class, maker)}``: the maker decided when the class was registered.
        self._makers: dict[str, tuple[T, Callable[..., Any]]] = {}
        #: Names a script registered itself (not while extensions load by themselves, see :func:`loading_extensions`).
        self._scripts_names: set[str] = set()

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator registering a class under ``name``; re-registering a name replaces it (except a
        script's own class, by the extensions the env loads by itself: :func:`loading_extensions`)."""

        def decorate(cls: T) -> T:
            if not _LOADING_EXTENSIONS.get():
                self._scripts_names.add(name)
            elif name in self._scripts_names:
                return cls  # (the script's class stays, as in InternUtopia, whose env loads no extension)
            self._classes[name] = cls
            self._makers[name] = (cls, self._maker_of(cls))
            return cls

        return decorate

    def adapt_with(self, adapter: Adapter) -> None:
        """Decide with ``adapter`` what builds the objects of every class registered so far and from now on."""
        self._adapter = adapter
        self._makers = {name: (cls, self._maker_of(cls)) for name, cls in self._classes.items()}

    def _maker_of(self, cls: T) -> Callable[..., Any]:
        made = self._adapter(cls) if self._adapter is not None else None
        return made if made is not None else cls

    def get(self, name: str, where: str = '') -> T:
        """The class registered as ``name``; ``ValueError`` naming the registered types otherwise."""
        try:
            return self._classes[name]
        except KeyError:
            location = f' (in {where})' if where else ''
            raise ValueError(
                f'unknown {self.kind} type {name!r}{location}; registered {self.kind} types: {sorted(self._classes)}'
                + ('' if self._classes else '; did you call internutopia_extension.import_extensions()?')
            ) from None

    def maker(self, name: str, where: str = '') -> Callable[..., Any]:
        """What builds objects of the type ``name``: its class, or the adapter an upper layer chose
        for it. ``ValueError`` naming the registered types for an unknown name."""
        cls = self.get(name, where)
        made = self._makers.get(name)
        if made is None or made[0] is not cls:  # the table was written directly (``BaseRobot.robots[name] = cls``)
            made = self._makers[name] = (cls, self._maker_of(cls))
        return made[1]

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._classes)

    def __contains__(self, name: object) -> bool:
        return name in self._classes
