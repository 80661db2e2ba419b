"""Which way an extension class is written: vectorized (ours) or per slot (InternUtopia's).

Ours run one object for every slot that has them, with ``slots`` arrays. InternUtopia's run one
object per slot and episode: constructed with a ``scene``, with methods taking no slots
(``apply_action(action)``, ``get_obs()``, ``is_done()``, ``update(obs)``, ``calc()``...). An
extension package written for InternUtopia subclasses our base classes (or built-ins such as
``H1Robot``) in that style; when such a class is registered, :mod:`internutopia.per_slot.registration`
detects it here and has its objects built by a per-slot adapter (``docs/extensions.md``).

A class counts as per-slot when a class in its MRO below the base class takes ``scene`` (or
another per-slot constructor argument) in ``__init__``, or defines one of its family's per-slot
methods, or defines a method of the family with no argument where ours take ``slots``, or (for
the methods a family names so) one whose first argument is not called ``slots`` where ours take
``slots`` (a metric's ``update(obs)``). The built-in types define none of these.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any


def _positional(function: object) -> list[str]:
    if not callable(function):  # (what inspect.signature raises TypeError for)
        return []
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][1:]


def positional_parameters(function: object) -> list[str]:
    """The positional parameters of the method ``function`` after ``self`` (``[]`` for what is no function)."""
    return _positional(function)


def _defines_per_slot(klass: type, methods: set[str], no_slots: set[str], init_params: set[str],
                      slot_params: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether ``klass`` itself (not its bases) defines something only per-slot classes define."""
    own = vars(klass)
    if '__init__' in own and init_params & set(_positional(own['__init__'])):
        return True
    if methods & set(own):
        return True
    if any(not _positional(own[name]) for name in no_slots & set(own)):
        return True
    return any((named := _positional(own[name])) and named[0] != 'slots' for name in slot_params & set(own))


def is_per_slot(cls: type, base: type, methods: Iterable[str] = (), no_slots: Iterable[str] = (),
                init_params: Iterable[str] = ('scene',), slot_params: Iterable[str] = ()) -> bool:
    """Whether ``cls`` (a subclass of ``base``) is written per slot, InternUtopia's way.

    Args:
        methods: method names that only per-slot classes of this family define.
        no_slots: method names both styles define, per-slot ones without arguments.
        init_params: ``__init__`` parameter names only per-slot classes take.
        slot_params: method names both styles define, ours with a first argument called
            ``slots``, per-slot ones with another (a metric's ``update(obs)``).
    """
    markers = set(methods), set(no_slots), set(init_params), set(slot_params)
    for klass in cls.__mro__:
        if klass is base or not issubclass(klass, base):
            break
        if _defines_per_slot(klass, *markers):
            return True
    return False


def vectorized_base(cls: type, base: type, methods: Iterable[str] = (), no_slots: Iterable[str] = (),
                    init_params: Iterable[str] = ('scene',), slot_params: Iterable[str] = ()) -> type:
    """The nearest class in ``cls``'s MRO deriving from ``base`` that is not written per slot (``base`` at worst)."""
    for klass in cls.__mro__:
        if issubclass(klass, base) and not is_per_slot(klass, base, methods, no_slots, init_params, slot_params):
            return klass
    return base


@functools.cache
def with_api(api: type, base: type) -> type:
    """``base`` (a vectorized class) with the per-slot methods of ``api`` in front: the class of
    the per-slot objects of ``base`` (one slot of a built-in robot, controller, ...), and the base
    the per-slot objects of subclasses of ``base`` are built on (see :func:`instance_class`)."""
    return type(f'{base.__name__}InSlot', (api, base), {'__module__': base.__module__, '__qualname__': f'{base.__qualname__}InSlot'})


@functools.cache
def instance_class(cls: type, api: type, family: type, marks: tuple[tuple[str, ...], ...]) -> type:
    """The class of the per-slot objects of the per-slot class ``cls`` (registered under ``family``).

    It is ``cls`` with the per-slot methods of ``api`` (InternUtopia's ``__init__(config, scene)``,
    ``get_obs()``, ...) placed right after ``cls``'s own per-slot classes and before its nearest
    vectorized base, so ``cls``'s code wins, and its ``super()`` calls reach InternUtopia's
    behaviour, not the vectorized base's. Same name and module as ``cls``; ``isinstance`` holds.
    """
    api_base = with_api(api, vectorized_base(cls, family, *marks))
    if issubclass(cls, api_base):
        return cls
    return type(cls.__name__, (cls, api_base), {'__module__': cls.__module__, '__qualname__': cls.__qualname__,
                                                '__doc__': cls.__doc__})


@functools.cache
def adapter_class(adapter: type, cls: type, family: type, marks: tuple[tuple[str, ...], ...]) -> type:
    """The vectorized class that runs the per-slot class ``cls`` (registered under ``family``) for
    every slot: ``adapter`` itself where ``cls`` builds on ``family`` alone; where it builds on a
    built-in (``class GpsTask(FiniteStepTask)``), ``adapter`` in front of that built-in, so the
    built-in runs for every slot as it would on its own (its ``reset_slot``, ``step``, ``update``,
    ... reached through the adapter's ``super()``) and the per-slot instances' default methods
    (``is_done()``, ``calc()``, ``get_data()``, ...) give its results for their slot, as the
    built-in's upstream counterpart would."""
    builtin = vectorized_base(cls, family, *marks)
    if builtin is family or issubclass(builtin, adapter):
        return adapter
    return type(f'{builtin.__name__}SlotAdapter', (adapter, builtin),
                {'__module__': adapter.__module__, '__qualname__': f'{builtin.__qualname__}SlotAdapter',
                 'builtin_class': builtin})


def make_instance(cls: Any, runner: Any, *args: Any, preset: dict[str, Any] | None = None) -> Any:
    """``cls(*args)``, with ``runner_of_slot`` set to the adapter ``runner`` before ``__init__`` runs,
    where ``runner`` runs a built-in (:func:`adapter_class`): what the instance's default
    methods read the built-in's results from, its own ``__init__`` included. ``preset``: other
    attributes set before ``__init__`` (the instance's slot)."""
    instance = cls.__new__(cls)
    for name, value in (preset or {}).items():
        setattr(instance, name, value)
    if getattr(runner, 'builtin_class', None) is not None:
        instance.runner_of_slot = runner
    instance.__init__(*args)
    return instance


def builtin_api_maker(family: type, api_of: Callable[[type], type], marks: tuple[tuple[str, ...], ...],
                      adapter: type, *extra: Any) -> Callable[[type], Callable[..., Any] | None]:
    """:func:`adapter_maker` for a family whose per-slot API depends on the built-in a class builds
    on: the instances' API is ``api_of(builtin)`` (a subclass of a built-in camera is an
    ``ICamera``; one of a built-in controller has its upstream twin's ``forward``), and the
    adapter stands in front of that built-in (:func:`adapter_class`)."""

    def maker(cls: type) -> Callable[..., Any] | None:
        if not is_per_slot(cls, family, *marks):
            return None
        made = instance_class(cls, api_of(vectorized_base(cls, family, *marks)), family, marks)
        runs = adapter_class(adapter, cls, family, marks)
        return lambda *args: runs(*args, made, *extra)

    return maker


def adapter_maker(family: type, api: type, marks: tuple[tuple[str, ...], ...], adapter: Callable[..., Any],
                  *extra: Any) -> Callable[[type], Callable[..., Any] | None]:
    """The registry adapter of one family (see :meth:`internutopia.core.registry.Registry.adapt_with`):
    for a per-slot class, a factory calling ``adapter(*core_args, instance_class, *extra)``; for a
    vectorized class, ``None`` (the class builds its own objects)."""

    def maker(cls: type) -> Callable[..., Any] | None:
        if not is_per_slot(cls, family, *marks):
            return None
        made = instance_class(cls, api, family, marks)
        # (an adapter class with ``runs_builtins`` runs a subclass of a built-in in front of it)
        runs = adapter_class(adapter, cls, family, marks) if getattr(adapter, 'runs_builtins', False) else adapter
        return lambda *args: runs(*args, made, *extra)

    return maker


__all__ = ['adapter_class', 'adapter_maker', 'builtin_api_maker', 'make_instance', 'instance_class', 'is_per_slot',
           'positional_parameters', 'vectorized_base', 'with_api']
