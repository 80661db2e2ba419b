"""InternUtopia's module path of ``gym_env.Env``, one env slot with one robot as a ``gymnasium.Env``
(defined in :mod:`internutopia.core.gym_vector.dict_env`, with the other Gymnasium adapters)."""

from internutopia.core.gym_vector.dict_env import Env

__all__ = ['Env']
