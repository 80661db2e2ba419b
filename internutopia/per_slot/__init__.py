"""The per-slot layer: InternUtopia's one-object-per-slot extension style, on top of the vectorized core.

InternUtopia's users write robots, controllers, sensors, tasks, metrics and rewards as one Python
object per env slot (``apply_action(action)``, ``get_obs()``, ``is_done()``, ``update(obs)``,
``calc()``). The core (:mod:`internutopia.core`) runs one object per type for every slot, on
arrays, and never imports this package. Here, each such class is detected once, when it is
registered (:mod:`~internutopia.per_slot.registration`), and run through an adapter that holds one
instance per slot and episode and shows the runner the vectorized interface
(:mod:`~internutopia.per_slot.robot`, ``controller``, ``sensor``, ``task``, ``metric``,
``reward``). The same modules give built-in types InternUtopia's per-slot face (a robot's
``articulation``, ``env.runner.current_tasks``), and InternUtopia's module paths
(``internutopia.core.robot.articulation`` and the like) re-export the classes from here.

Importing the package installs the adapters (``vec_env.Env`` imports it; so does
:func:`internutopia.core.plugins.load_extensions`, through this package's entry point).
"""

from internutopia.per_slot.registration import install
from internutopia.per_slot.runner import UpstreamRunner

install()

__all__ = ['UpstreamRunner', 'install']
