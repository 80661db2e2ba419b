"""``IScene``: what an upstream-style extension sees of its env slot (InternUtopia's interface).

InternUtopia hands every robot, controller, sensor and task a scene (a wrapper of the Isaac Sim
stage) to add prims to and look objects up in. Here each env slot is its own simulation whose
content the episode's ``TaskCfg`` decides, so a slot's scene
(:class:`~internutopia.core.task.slot_scene.SlotScene`, built by the env for per-slot extensions)
is a registry and a lookup:

- ``get(name)`` gives an :class:`~internutopia.core.robot.rigid_body.IRigidBody`: an object or robot
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
from typing import Any

from internutopia.core.config import Simulator, TaskCfg


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


__all__ = ['IScene']
