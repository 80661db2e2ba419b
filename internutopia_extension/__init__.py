"""Robots, controllers, sensors, tasks, metrics and objects for internutopia, and their configs.

:func:`import_extensions` registers every built-in type. ``vec_env.Env`` and ``Config.from_yaml``
run it through this package's ``internutopia.extensions`` entry point
(:func:`internutopia.core.plugins.load_extensions`); scripts written for InternUtopia call it
themselves, which still works.

:func:`import_extensions` lives in :mod:`.registration`. The types live in ``robots``,
``controllers``, ``sensors``, ``tasks``, ``metrics``, ``objects``, ``rewards`` and ``policies``; their
config classes in ``configs``.

Its classes are an extension's wherever they are registered from
(:func:`internutopia.core.registry.extension_package`): a script that calls :func:`import_extensions`
or imports a built-in module itself does not make the built-in types its own, so the installed
extensions the env loads may replace them as they may when the env imports them.
"""

from internutopia.core.registry import extension_package

extension_package(__name__)  # (before any module of the package registers its classes)

from internutopia_extension.registration import import_extensions  # noqa: E402

__all__ = ['import_extensions']
