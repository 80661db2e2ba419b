"""``ModelRobot``: the physics of an upstream-style robot that subclasses ``BaseRobot`` directly.

InternUtopia's robot classes load their Isaac Sim asset themselves (``usd_path``). A class
written that way and subclassing ``BaseRobot`` directly (not a built-in such as ``H1Robot``) gets
its model here from ``RobotCfg.usd_path`` when that is a MuJoCo model (``.xml`` MJCF, ``.urdf`` or
its first body under the world is the base (named ``base`` if it has no name). Isaac Sim USD robot assets cannot be
simulated by MuJoCo: subclass a built-in robot or convert the asset.
"""

from __future__ import annotations

import os
from typing import Any

from internutopia.core.backend.parts import ModelSpec, load_spec
from internutopia.core.robot.base import BaseRobot

_MODEL_SUFFIXES = ('.xml', '.urdf')


class ModelRobot(BaseRobot):
    """A robot whose model is the MuJoCo file at ``config.usd_path``; joints are its hinge and slide joints."""

    def __init__(self, config: Any, env_num: Any = None, sim: Any = None) -> None:
        path = config.usd_path
        if not path or not str(path).lower().endswith(_MODEL_SUFFIXES) or not os.path.isfile(path):
            raise ValueError(f'robot {config.name!r} ({config.type}) subclasses BaseRobot directly, so its model comes from '
                             f'usd_path, which must be a MuJoCo model file ({", ".join(_MODEL_SUFFIXES)}); got {path!r}. '
                             'Isaac Sim USD robots cannot run on MuJoCo: subclass a built-in robot such as H1Robot instead.')
        super().__init__(config, env_num, sim)
        spec = self.build_spec()
        roots = [b for b in spec.worldbody.bodies]
        if not roots:
            raise ValueError(f'robot {config.name!r}: the model {path!r} has no body under its worldbody')
        self.base_body = roots[0].name or 'base'

    def build_spec(self) -> ModelSpec:
        spec = load_spec(str(self.config.usd_path))
        root = next(iter(spec.worldbody.bodies), None)
        if root is not None and not root.name:
            root.name = 'base'
        return spec


__all__ = ['ModelRobot']
