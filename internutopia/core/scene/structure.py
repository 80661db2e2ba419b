"""Turn an episode's ``TaskCfg`` into the parts of its slot, and tell when two episodes share a structure.

Two episodes have the same *structure* when they load the same scene and the same robots and
objects (types, names, models, controllers, sensors), differing only in start poses and task
parameters. A slot taking an episode of the same structure is reset by writing state; any other
change rebuilds the world (keeping every other slot's state).
"""

from __future__ import annotations

import functools
import json

from internutopia.core.backend.parts import ModelSpec
from internutopia.core.config import ObjectCfg, RobotCfg, TaskCfg

_POSE_FIELDS = {'position', 'orientation'}


def entity_key(config: RobotCfg | ObjectCfg) -> str:
    """Canonical text of a robot or object config without its start pose."""
    return json.dumps(config.model_dump(mode='json', exclude=_POSE_FIELDS), sort_keys=True)


def structure_key(task: TaskCfg) -> str:
    """Canonical text of everything in ``task`` that shapes the compiled world."""
    return json.dumps({
        'scene': [task.scene_asset_path or '', list(task.scene_scale), list(task.scene_position), list(task.scene_orientation)],
        'robots': [entity_key(r) for r in task.robots],
        'objects': [entity_key(o) for o in task.objects],
    }, sort_keys=True)


@functools.lru_cache(maxsize=32)
def _cached_scene_spec(path: str, scale: tuple, position: tuple, orientation: tuple) -> ModelSpec:
    from internutopia.core.backend.mujoco.scene_loader import scene_to_spec

    return scene_to_spec(path or None, scale=scale, position=position, orientation_wxyz=orientation)


def scene_spec(task: TaskCfg) -> ModelSpec:
    """A fresh spec of ``task``'s scene (parsed once per distinct scene, then copied)."""
    return _cached_scene_spec(task.scene_asset_path or '', tuple(task.scene_scale), tuple(task.scene_position),
                              tuple(task.scene_orientation)).copy()


__all__ = ['entity_key', 'scene_spec', 'structure_key']
