"""Objects: like robots, one group object per (name, structure) across slots, without controllers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from internutopia.core.config import ObjectCfg, SimConfig
from internutopia.core.registry import Registry
from internutopia.core.robot.base import NO_ID, Entity


class BaseObject(Entity[ObjectCfg]):
    """An object type. ``build_spec`` returns a spec whose root body is :attr:`base_body`."""

    registry: Registry[type[BaseObject]] = Registry('object')
    # InternUtopia's object attributes (set by Entity.__init__).
    name: str
    config: ObjectCfg
    #: InternUtopia's name of the registry table.
    objs = registry.table
    base_body = 'body'

    @classmethod
    def register(cls, name: str) -> Callable[[type[BaseObject]], type[BaseObject]]:
        """Class decorator registering an object type under ``name``."""
        return cls.registry.register(name)

    @classmethod
    def create(cls, config: ObjectCfg, env_num: int, sim: SimConfig, where: str = '') -> BaseObject:
        """Instantiate the object class registered for ``config.type`` (its ``name`` is checked
        by the config: :func:`~internutopia.core.config.values.check_entity_name`)."""
        return cls.registry.get(config.type, where)(config, env_num, sim)

    def set_up_to_scene(self, scene: Any) -> None:
        """Nothing to set up: the env places every slot's objects from the task config."""

    def get_obs(self, slots: np.ndarray) -> dict[str, Any]:
        obs = super().get_obs(slots)
        dof = self.root_dofadr[slots]
        if len(slots) and np.all(dof != NO_ID):
            assert self.world is not None, 'get_obs before bind'
            qvel, rows = self.world.data.qvel, slots[:, None]
            obs['linear_velocity'] = qvel[rows, dof[:, None] + np.arange(3)]
            obs['angular_velocity'] = qvel[rows, dof[:, None] + np.arange(3, 6)]
        return obs
