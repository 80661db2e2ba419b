"""``BaseInteraction``: InternUtopia's base class of human input devices (keyboard, gamepad, ...).

An interaction's :meth:`BaseInteraction.get_input` returns the device's state as an array each
time a script asks (once per env step); classes register under a name as InternUtopia's do.
The built-in one is :class:`internutopia_extension.interactions.keyboard.KeyboardInteraction`.
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np


class BaseInteraction(ABC):
    """A source of human input; subclasses implement :meth:`get_input`."""

    #: Registered interaction classes by name (InternUtopia's table).
    interactions: ClassVar[dict[str, type[BaseInteraction]]] = {}

    def __init__(self) -> None:
        self._type: str | None = None

    @property
    def type(self) -> str | None:
        """The name the class registered under."""
        return self._type

    @abstractmethod
    def get_input(self) -> np.ndarray:
        """The device's state now."""

    @classmethod
    def register(cls, name: str) -> Callable[[builtins.type[Any]], builtins.type[Any]]:
        """Class decorator registering an interaction class under ``name``."""

        # (``builtins.type``: the class's own ``type`` property shadows the name in its body.)
        def decorator(interaction_class: builtins.type[Any]) -> builtins.type[Any]:
            cls.interactions[name] = interaction_class
            return interaction_class

        return decorator


__all__ = ['BaseInteraction']
