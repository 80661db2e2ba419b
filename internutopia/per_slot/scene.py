"""``IScene``: what an upstream-style extension sees of its env slot (InternUtopia's interface).

InternUtopia hands every robot, controller, sensor and task a scene (a wrapper of the Isaac Sim
stage) to add prims to and look objects up in. Here each env slot is its own simulation whose
content the episode's ``TaskCfg`` decides, so a slot's scene
(:class:`SlotScene`, built by the env for per-slot extensions)
is a registry and a lookup:

- ``get(name)`` gives an :class:`~internutopia.per_slot.rigid_body.IRigidBody`: an object or robot
  of the slot by name (its base body), something ``add``\\ ed under that name, or a body by its
  name (``'torso_link'``, ``'h1/torso_link'``);
- ``add(x)`` registers ``x`` under ``x.name`` and returns it (the slot's robots and objects are
  already placed from the config; nothing is created);
- ``remove(name)`` unregisters (the slot's content goes with its episode);
- ``load(...)`` does nothing (the env loads the scene asset of the episode);
- ``unwrap()`` is the slot's :class:`~internutopia.core.view.EnvSlot`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.config import Simulator, TaskCfg
from internutopia.per_slot.rigid_body import IRigidBody

if TYPE_CHECKING:
    from internutopia.core.entity import Entity
    from internutopia.core.view import EnvSlot, EnvView


class IScene(ABC):
    """Abstract base of the scenes extensions receive (see the module docstring)."""

    def __init__(self) -> None:
        return

    @abstractmethod
    def load(self, task_config: TaskCfg, env_id: int, env_offset: list[float]) -> None:
        """Load the scene of an episode."""

    @abstractmethod
    def add(self, target: Any) -> Any:
        """Add ``target`` to the scene."""

    @abstractmethod
    def remove(self, target: Any, registry_only: bool = False) -> None:
        """Remove ``target`` (a name or an object) from the scene."""

    @abstractmethod
    def object_exists(self, target: Any) -> bool:
        """Whether ``target`` is in the scene."""

    @abstractmethod
    def get(self, target: Any) -> Any:
        """The body named ``target``."""

    @abstractmethod
    def unwrap(self) -> Any:
        """What the scene wraps."""

    @classmethod
    def create(cls, simulator_type: str = Simulator.MUJOCO.value) -> IScene:
        """InternUtopia's factory of the one stage. Scenes here belong to env slots: the env gives
        each per-slot extension its slot's scene (``scene`` argument), so this raises."""
        if simulator_type not in (s.value for s in Simulator):
            raise ValueError(f'invalid simulator_type {simulator_type!r}; valid: {[s.value for s in Simulator]}')
        raise ValueError('scenes belong to env slots here: per-slot robots, controllers, sensors and tasks receive '
                         "their slot's scene as the `scene` argument (see docs/extensions.md)")


class SlotScene(IScene):
    """The scene of env slot ``slot`` of ``view`` (see the module docstring)."""

    def __init__(self, view: EnvView, slot: int) -> None:
        super().__init__()
        self.view = view
        self.slot = int(slot)
        self.env_id = self.slot
        self.env_offset = view.origin(self.slot).tolist()
        self._registry: dict[str, Any] = {}

    def load(self, task_config: TaskCfg, env_id: int, env_offset: list[float]) -> None:
        """Nothing to do: the env places the episode's scene asset in the slot."""

    def add(self, target: Any) -> Any:
        """Register ``target`` under its ``name`` (if it has one) and return it."""
        name = getattr(target, 'name', None)
        if name is not None:
            self._registry[str(name)] = target
        return target

    def remove(self, target: Any, registry_only: bool = False) -> None:
        """Forget ``target`` (a name or an added object); the slot's content stays until its episode ends."""
        name = target if isinstance(target, str) else getattr(target, 'name', None)
        self._registry.pop(str(name), None)

    def object_exists(self, target: Any) -> bool:
        """Whether ``target`` (a name) is registered, or is a robot, object or body of the slot."""
        try:
            self.get(target)
        except ValueError:
            return False
        return True

    def get(self, target: Any) -> Any:
        """What ``target`` names (see the module docstring); ``ValueError`` listing the names otherwise."""
        name = str(target)
        if name in self._registry:
            return self._registry[name]
        entities: dict[str, Entity] = {**self.view.objects(self.slot), **self.view.robots(self.slot)}
        origin = self.view.origin(self.slot)
        if name in entities:
            return IRigidBody(entities[name], self.slot, None, origin=origin, name=name)
        owner, _, body = name.rpartition('/')
        for entity_name, entity in entities.items():
            if owner and owner != entity_name:
                continue
            if entity.world is not None and entity.world.lookup.find('body', entity.full_name(body)) >= 0:
                return IRigidBody(entity, self.slot, body, origin=origin, name=name)
        raise ValueError(f'env {self.slot} has no {name!r}; robots and objects: {sorted(entities)} '
                         f'(or a body of theirs, e.g. {next(iter(sorted(entities)), "robot")}/<body>)')

    def unwrap(self) -> EnvSlot:
        """The slot's :class:`~internutopia.core.view.EnvSlot`."""
        return self.view.slot(self.slot)

    @property
    def origin(self) -> np.ndarray:
        """The slot's origin in the world frame."""
        return self.view.origin(self.slot)

    def __repr__(self) -> str:
        return f'SlotScene(env {self.slot})'


def task_name(view: EnvView, slot: int) -> str:
    """The name of ``slot``'s current episode in ``env.runner.current_tasks`` (unique in the run)."""
    return f'task_{view.episode_index(slot)}'


__all__ = ['IScene', 'SlotScene', 'task_name']
