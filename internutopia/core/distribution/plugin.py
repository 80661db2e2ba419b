"""The Ray adapter's registration: ``Env(distributed_config)`` builds a ``DistributedEnv``.

Declared as an ``internutopia.extensions`` entry point (``pyproject.toml``) and added by the
``internutopia`` package, so :func:`internutopia.core.plugins.load_extensions` runs it; the env
layer never imports this adapter. Importing it does not import Ray.
"""

from __future__ import annotations

from internutopia.core.config import DistributedConfig
from internutopia.core.distribution.env import DistributedEnv
from internutopia.core.vec_env import register_env_class

__all__ = ['register']


def register() -> None:
    """Make ``vec_env.Env(config)`` return a :class:`DistributedEnv` for a :class:`DistributedConfig`."""
    register_env_class(DistributedConfig, DistributedEnv)
