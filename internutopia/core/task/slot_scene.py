"""``SlotScene``: the :class:`~internutopia.core.scene.scene.IScene` of one env slot.

See :mod:`internutopia.core.scene.scene` for what it does; it reads the slot's robots and objects
through the env's :class:`~internutopia.core.view.EnvView` (``view.scene(slot)`` makes one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.config import TaskCfg
from internutopia.core.scene.scene import IScene

if TYPE_CHECKING:
    from internutopia.core.view import EnvSlot, EnvView


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
        from internutopia.core.robot.rigid_body import IRigidBody

        name = str(target)
        if name in self._registry:
            return self._registry[name]
        entities = {**self.view.objects(self.slot), **self.view.robots(self.slot)}
        origin = self.view.origin(self.slot)
        if name in entities:
            return IRigidBody(entities[name], self.slot, None, origin=origin, name=name)
        owner, _, body = name.rpartition('/')
        for entity_name, entity in entities.items():
            if owner and owner != entity_name:
                continue
            model = entity.world.model if entity.world is not None else None
            if model is not None and _has_body(model, entity.full_name(body)):
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


def _has_body(model: Any, name: str) -> bool:
    try:
        model.body(name)
    except KeyError:
        return False
    return True


__all__ = ['SlotScene']
