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
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar('T', bound=type)

#: ``adapter(cls)``: what builds objects of ``cls`` (called with the arguments the core passes the
#: class), or ``None`` when the class itself does.
Adapter = Callable[[type], Callable[..., Any] | None]

#: True while the env loads the installed extensions by itself (:func:`loading_extensions`).
_LOADING_EXTENSIONS: contextvars.ContextVar[bool] = contextvars.ContextVar('internutopia_loading_extensions', default=False)

#: Packages whose classes are an extension's, never a script's own (:func:`extension_package`).
_EXTENSION_PACKAGES: set[str] = set()

#: Every registry made, to say which kind a name is when it is asked for in another's (:meth:`Registry.get`).
_REGISTRIES: weakref.WeakSet[Registry[Any]] = weakref.WeakSet()


def extension_package(package: str) -> None:
    """Declare ``package`` (a top-level package name) an extension package: a class of one of its
    modules never counts as a script's own registration (:func:`loading_extensions`), even when the
    script imports that module itself (``import_extensions()``, ``from internutopia_extension.robots.jetbot
    import JetbotRobot``). Such a registration replaces the name as any other does, but the
    extensions the env loads by itself may replace it in turn, as they would had the env imported
    the module. ``internutopia_extension`` declares itself so.
    """
    _EXTENSION_PACKAGES.add(package)


def _of_extension_package(cls: type) -> bool:
    module = getattr(cls, '__module__', None) or ''
    return module.split('.')[0] in _EXTENSION_PACKAGES


def _a(kind: str) -> str:
    return f'an {kind}' if kind[:1] in 'aeiou' else f'a {kind}'


def _class_name(cls: object) -> str:
    return f'{getattr(cls, "__module__", "?")}.{getattr(cls, "__qualname__", repr(cls))}'


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


def snapshot() -> Callable[[], list[type]]:
    """The state of every registry now; calling the result puts them back as they were and returns
    the classes that were registered since and are no longer (what a failed extension load undoes,
    :func:`internutopia.core.plugins.load_extensions`).

    >>> metrics = Registry('metric')
    >>> undo = snapshot()
    >>> @metrics.register('Score')
    ... class Score: ...
    >>> [cls.__name__ for cls in undo()], 'Score' in metrics
    (['Score'], False)
    """
    states = {registry: registry._state() for registry in list(_REGISTRIES)}

    def restore() -> list[type]:
        dropped: list[type] = []
        for registry in list(_REGISTRIES):
            before = states.get(registry)
            kept = set(map(id, before[0].values())) if before is not None else set()
            dropped += [cls for cls in registry._classes.values() if id(cls) not in kept]
            if before is not None:
                registry._restore(before)
            else:  # (a registry made since: the extension's own base class)
                registry._restore(({}, {}, set(), {}, None))
        return dropped

    return restore


class Registry(Generic[T]):
    """A table of classes of one kind, keyed by the ``type`` string configs use."""

    def __init__(self, kind: str, base: type | None = None) -> None:
        self.kind = kind
        #: The class every registered class must derive from: ``base``, or the class the registry is
        #: made in (``registry = Registry('robot')`` in ``BaseRobot``'s body); ``None``: any class.
        self.base = base
        self._classes: dict[str, T] = {}
        #: The table itself, ``{name: class}`` (InternUtopia's ``BaseRobot.robots`` and the like).
        self.table = self._classes
        self._adapter: Adapter | None = None
        #: ``{name: (class, maker)}``: the maker decided when the class was registered.
        self._makers: dict[str, tuple[T, Callable[..., Any]]] = {}
        #: Names a script registered itself (not while extensions load by themselves, see :func:`loading_extensions`).
        self._scripts_names: set[str] = set()
        #: ``{name: (class, error)}``: classes the adapter could not adapt (:meth:`maker` raises for them).
        self._failed: dict[str, tuple[T, BaseException]] = {}
        _REGISTRIES.add(self)

    def __set_name__(self, owner: type, attribute: str) -> None:
        if self.base is None:  # (the class whose body made it: the base class of its kind)
            self.base = owner

    def _register_as(self) -> str:
        return f'@{self.base.__name__}.register' if self.base is not None else f'{self.kind} registry.register'

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator registering a class under ``name``; re-registering a name replaces it (except a
        script's own class, by the extensions the env loads by itself: :func:`loading_extensions`).

        Raises:
            TypeError: ``name`` is not a string (``@BaseRobot.register`` used without a name), or
                the decorated object is not a subclass of the registry's base class.
            ValueError: ``name`` is empty.
        """
        if not isinstance(name, str):
            hint = ' (the decorator was used without a name?)' if isinstance(name, type) else ''
            raise TypeError(f"{self._register_as()}(name) takes the {self.kind} type's name, a str, as in "
                            f"{self._register_as()}('My{self.kind.capitalize()}'); got {name!r}{hint}")
        if not name:
            raise ValueError(f'{self._register_as()}: the {self.kind} type name must not be empty')

        def decorate(cls: T) -> T:
            if not isinstance(cls, type) or (self.base is not None and not issubclass(cls, self.base)):
                what = _class_name(cls) if isinstance(cls, type) else repr(cls)
                base = f'a subclass of {_class_name(self.base)}' if self.base is not None else 'a class'
                raise TypeError(f'{self._register_as()}({name!r}): {what} is not {base}; '
                                f'{_a(self.kind)} type must derive from it')
            if _LOADING_EXTENSIONS.get():
                if name in self._scripts_names:
                    return cls  # (the script's class stays, as in InternUtopia, whose env loads no extension)
            elif _of_extension_package(cls):
                self._scripts_names.discard(name)  # (a built-in's module imported by the script: not its own)
            else:
                self._scripts_names.add(name)
            self._classes[name] = cls
            self._set_maker(name, cls)  # (a failure is warned where the class is decorated)
            return cls

        return decorate

    def adapt_with(self, adapter: Adapter) -> None:
        """Decide with ``adapter`` what builds the objects of every class registered so far and from now on.

        A class the adapter raises for is left out (with a warning naming it); a config naming its
        type then fails with that error (:meth:`maker`), and the other types are unaffected.
        """
        self._adapter = adapter
        self._makers, self._failed = {}, {}
        for name, cls in list(self._classes.items()):
            self._set_maker(name, cls)

    def _set_maker(self, name: str, cls: T, stacklevel: int = 3) -> None:
        self._failed.pop(name, None)
        try:
            self._makers[name] = (cls, self._maker_of(cls))
        except Exception as exc:  # (an upper layer's adapter: only this type fails, where it is used)
            self._makers.pop(name, None)
            self._failed[name] = (cls, exc)
            warnings.warn(f'{self.kind} type {name!r} ({_class_name(cls)}) cannot be built: '
                          f'{type(exc).__name__}: {exc}', RuntimeWarning, stacklevel=stacklevel)

    def _maker_of(self, cls: T) -> Callable[..., Any]:
        made = self._adapter(cls) if self._adapter is not None else None
        return made if made is not None else cls

    def get(self, name: str, where: str = '') -> T:
        """The class registered as ``name``; ``ValueError`` naming the registered types otherwise."""
        try:
            return self._classes[name]
        except (KeyError, TypeError):  # (TypeError: an unhashable name)
            location = f' (in {where})' if where else ''
            other_kinds = sorted({registry.kind for registry in list(_REGISTRIES)  # (those of the base classes)
                                  if registry.base is not None and registry.kind != self.kind and name in registry})
            raise ValueError(
                f'unknown {self.kind} type {name!r}{location}; registered {self.kind} types: {sorted(self._classes)}'
                + ('' if self._classes else '; did you call internutopia_extension.import_extensions()?')
                + (f' ({name!r} is {" and ".join(_a(kind) for kind in other_kinds)} type)' if other_kinds else '')
            ) from None

    def maker(self, name: str, where: str = '') -> Callable[..., Any]:
        """What builds objects of the type ``name``: its class, or the adapter an upper layer chose
        for it. ``ValueError`` naming the registered types for an unknown name."""
        cls = self.get(name, where)
        made = self._makers.get(name)
        if made is None or made[0] is not cls:  # the table was written directly (``BaseRobot.robots[name] = cls``)
            failed = self._failed.get(name)
            if failed is None or failed[0] is not cls:
                self._set_maker(name, cls)
            failed = self._failed.get(name)
            if failed is not None:
                location = f' (in {where})' if where else ''
                error = failed[1]
                raise TypeError(f'{self.kind} type {name!r}{location} ({_class_name(cls)}) cannot be built: '
                                f'{type(error).__name__}: {error}') from error
            made = self._makers[name]
        return made[1]

    def _state(self) -> tuple[Any, ...]:
        return (dict(self._classes), dict(self._makers), set(self._scripts_names), dict(self._failed), self._adapter)

    def _restore(self, state: tuple[Any, ...]) -> None:
        classes, makers, scripts_names, failed, adapter = state
        self._classes.clear()  # (in place: ``table`` and ``BaseRobot.robots`` are this dict)
        self._classes.update(classes)
        self._makers, self._scripts_names, self._failed, self._adapter = dict(makers), set(scripts_names), dict(failed), adapter

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._classes)

    def __contains__(self, name: object) -> bool:
        try:
            return name in self._classes
        except TypeError:  # (an unhashable name)
            return False
