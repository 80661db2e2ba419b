"""Turn an episode's ``TaskCfg`` into the parts of its slot, and tell when two episodes share a structure.

Two episodes have the same *structure* when they load the same scene and the same robots and
objects (types, names, models, controllers, sensors), differing only in start poses and task
parameters. A slot taking an episode of the same structure is reset by writing state; any other
change rebuilds the world (keeping every other slot's state).
"""

from internutopia.core.scene.structure import entity_key, scene_spec, structure_key

__all__ = ['entity_key', 'scene_spec', 'structure_key']
