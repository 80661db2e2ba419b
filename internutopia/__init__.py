"""internutopia: InternUtopia-compatible robot scene vectorizer on MuJoCo.

Import ``internutopia.core.vec_env.Env`` (many env slots in one world) or
``internutopia.core.gym_env.Env`` (one slot, one robot, a ``gymnasium.Env``).
"""

__version__ = '0.1.0'
