"""internutopia: InternUtopia-compatible robot scene vectorizer on MuJoCo.

Import ``internutopia.core.vec_env.Env`` (many env slots in one world) or
``internutopia.core.gym_env.Env`` (one slot, one robot, a ``gymnasium.Env``).
"""

__version__ = '0.1.0'


def _register_gymnasium_ids() -> None:
    """Make ``gymnasium.make_vec('internutopia/JetbotPointNav-v0')`` etc. work after ``import internutopia``."""
    try:
        import internutopia.envs  # noqa: F401  (registers the ids; imports nothing heavy)
    except ImportError:  # pragma: no cover - gymnasium is a dependency
        pass


_register_gymnasium_ids()
