"""Name -> class tables for robots, controllers, sensors, tasks, metrics, objects and rewards.

Each base class owns one :class:`Registry`; extensions add to it with a decorator:

>>> from internutopia.core.registry import Registry
>>> robots = Registry('robot')
>>> @robots.register('Rover')
... class Rover: ...
>>> robots.get('Rover') is Rover
True
>>> robots.get('Rovr')
Traceback (most recent call last):
...
ValueError: unknown robot type 'Rovr'; registered robot types: ['Rover']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar('T', bound=type)


class Registry(Generic[T]):
    """A table of classes of one kind, keyed by the ``type`` string configs use."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._classes: dict[str, T] = {}
        #: The table itself, ``{name: class}`` (InternUtopia's ``BaseRobot.robots`` and the like).
        self.table = self._classes

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator registering a class under ``name``; re-registering a name replaces it."""

        def decorate(cls: T) -> T:
            self._classes[name] = cls
            return cls

        return decorate

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

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._classes)

    def __contains__(self, name: object) -> bool:
        return name in self._classes
