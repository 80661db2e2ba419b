"""internutopia: InternUtopia-compatible robot scene vectorizer on MuJoCo.

Import ``internutopia.core.vec_env.Env`` (many env slots in one world) or
``internutopia.core.gym_env.Env`` (one slot, one robot, a ``gymnasium.Env``).
"""

from importlib.metadata import PackageNotFoundError, version

try:  # (the installed distribution's version: one source of truth, pyproject.toml)
    __version__ = version('internutopia')
except PackageNotFoundError:  # a checkout on sys.path that was never pip-installed
    __version__ = '0.0.0+unknown'


def _register_gymnasium_ids() -> None:
    """Make ``gymnasium.make_vec('internutopia/JetbotPointNav-v0')`` etc. work after ``import internutopia``."""
    try:
        import internutopia.envs  # noqa: F401  (registers the ids; imports nothing heavy)
    except ImportError:  # pragma: no cover - gymnasium is a dependency
        pass


def _add_builtin_extensions() -> None:
    """Hand the core the extensions this distribution ships, as its entry points do (see
    ``pyproject.toml``), so a source checkout that was never pip-installed finds them too.

    The core loads them by name when an env is built (:func:`internutopia.core.plugins.load_extensions`),
    and never imports them itself: this package is the one place that knows both layers.
    """
    from internutopia.core.plugins import add_extension

    def builtin_types() -> None:
        from internutopia_extension import import_extensions

        import_extensions()

    def ray_distribution() -> None:
        from internutopia.core.distribution.plugin import register

        register()

    def per_slot_layer() -> None:
        from internutopia.per_slot.registration import install

        install()

    add_extension('internutopia_per_slot', per_slot_layer)
    add_extension('internutopia_extension', builtin_types)
    add_extension('internutopia_distribution', ray_distribution)


_register_gymnasium_ids()
_add_builtin_extensions()
