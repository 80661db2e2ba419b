"""Physics backends, chosen by ``SimConfig.backend``: each builds one world out of per-slot parts and steps it.

The runner and the env reach a backend only through :func:`get_backend`: a :class:`Backend`
record whose ``create_world`` builds a :class:`~internutopia.core.backend.interface.World` (build
from slot parts, step, read and write state by slot) and whose render functions draw it. Robots,
controllers, sensors, tasks, metrics and rewards see a world's packs only through
:mod:`internutopia.core.backend.interface` (state arrays, model lookups, a few computations):
nothing outside this package imports an engine. The embedded MuJoCo backend is registered as
``'mujoco'``, MuJoCo Warp (GPU, or Warp's CPU device; the ``warp`` extra) as ``'warp'``; another engine registers its own record with :func:`register_backend` (from an
extension's entry point, see :mod:`internutopia.core.plugins`) and is picked with
``SimConfig(backend=name)``, without touching the env, tasks or extensions. What a backend
implements is in ``docs/backend.md``.

>>> get_backend('mujoco').name
'mujoco'
>>> get_backend('bullet')
Traceback (most recent call last):
...
ValueError: unknown physics backend 'bullet'; registered backends: ['mujoco', 'warp']
"""

from internutopia.core.backend.interface import ModelLookup, Pack, World
from internutopia.core.backend.registry import Backend, backend_names, get_backend, register_backend
from internutopia.core.backend.state import StateArrays

__all__ = ['Backend', 'ModelLookup', 'Pack', 'StateArrays', 'World', 'backend_names', 'get_backend', 'register_backend']
