"""Config classes of the built-in objects (InternUtopia names and fields).

Positions and orientations (wxyz) are env-local, like a robot's. What is *structure* (rebuilds the
world when it changes) and what is *state* (written at reset, costs nothing): an object's type,
name, size, colour, mass, file and flags are structure; its ``position``/``orientation`` are state.

>>> from internutopia_extension.configs.objects import DynamicCubeCfg
>>> DynamicCubeCfg(name='cube', position=(1.0, 0.0, 0.5), scale=(0.1, 0.1, 0.1), color=(1.0, 0.0, 0.0)).type
'DynamicCube'

The classes live in :mod:`.cube` (``DynamicCubeCfg``, ``VisualCubeCfg``), :mod:`.table` (``TableCfg``)
and :mod:`.usd_object` (``UsdObjCfg``).
"""

from internutopia_extension.configs.objects.cube import DynamicCubeCfg, VisualCubeCfg
from internutopia_extension.configs.objects.table import TableCfg
from internutopia_extension.configs.objects.usd_object import UsdObjCfg

__all__ = ['DynamicCubeCfg', 'TableCfg', 'UsdObjCfg', 'VisualCubeCfg']
