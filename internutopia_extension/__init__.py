"""Robots, controllers, sensors, tasks, metrics and objects for internutopia, and their configs.

:func:`import_extensions` registers every built-in type. ``vec_env.Env`` and ``Config.from_yaml``
run it through this package's ``internutopia.extensions`` entry point
(:func:`internutopia.core.plugins.load_extensions`); scripts written for InternUtopia call it
themselves, which still works.

:func:`import_extensions` lives in :mod:`.registration`. The types live in ``robots``,
``controllers``, ``sensors``, ``tasks``, ``metrics``, ``objects``, ``rewards`` and ``policies``; their
config classes in ``configs``.
"""

from internutopia_extension.registration import import_extensions

__all__ = ['import_extensions']
